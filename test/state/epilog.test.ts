// Epilog side: the job's directory is taken back and removed without following anything its owner planted,
// and task.json (written by that owner) is read as hostile input.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { collectJobState, summarizeTaskRecord } from '../../src/state/epilog.js';
import { writePrologState } from '../../src/state/prolog.js';
import { TASK_FILE, TASK_FORMAT } from '../../src/state/names.js';
import { removeJobDir } from '../../src/state/store.js';
import { exactly, literal } from '../helpers/exactly.js';
import { JOB_UID, sampleState, tmpStateDir } from './_state.js';

const isRoot = process.getuid?.() === 0;

const MEMLOCK_FINDING = { code: 'job-memlock-propagated', status: 'fail', subject: 'job', message: 'memlock is 64 KiB in this job' };
const record = (over: Record<string, unknown> = {}): Record<string, unknown> => ({
  format: TASK_FORMAT,
  job: '1234',
  step: 'batch',
  uid: JOB_UID,
  node: 'gpu001',
  time: '2026-11-29T15:00:01.000Z',
  state: 'trusted',
  memlock: { soft: 65536, hard: 8388608, source: 'propagated' },
  findings: [MEMLOCK_FINDING],
  ...over,
});

/** The job's directory as the Prolog leaves it, plus whatever its owner then put in it (as that owner). */
function jobDir(): { base: string; stateDir: string; dir: string; asUser: (rel: string, data?: string) => string } {
  const { base, stateDir } = tmpStateDir();
  const dir = path.dirname(writePrologState(stateDir, sampleState(), null));
  const asUser = (rel: string, data?: string): string => {
    const p = path.join(dir, rel);
    if (data === undefined) fs.mkdirSync(p, { recursive: true });
    else fs.writeFileSync(p, data);
    fs.lchownSync(p, JOB_UID, JOB_UID);
    return p;
  };
  return { base, stateDir, dir, asUser };
}

t.test('task.json is re-typed field by field', async (t) => {
  t.same(summarizeTaskRecord(record(), '1234'), { step: 'batch', state: 'trusted', memlock: { soft: 65536, hard: 8388608, source: 'propagated' }, findings: [MEMLOCK_FINDING] }, 'a real record');
  t.equal(summarizeTaskRecord(record({ job: '999' }), '1234'), 'task.json names job 999, not 1234', 'another job');
  t.equal(summarizeTaskRecord({ format: 'x' }, '1234'), 'task.json is not a gdrgate task record', 'not ours');
  const hostile = summarizeTaskRecord(
    record({
      step: 'x\n{"level":60,"msg":"forged"}',
      memlock: { soft: -1, hard: 'lots' },
      findings: [...Array.from({ length: 100 }, () => ({ code: 'job-gpu-missing', status: 'fail', subject: 's'.repeat(1000), message: 'm\u0007' })), { code: '../../x', status: 'fail' }, { code: 'ok', status: 'rooted' }],
    }),
    '1234',
  );
  if (typeof hostile === 'string') t.fail(hostile);
  else {
    t.notMatch(hostile.step ?? '', /\n/, 'no newline survives');
    t.equal(hostile.memlock, null, 'a malformed memlock is dropped');
    t.equal(hostile.findings.length, 32, 'at most 32 findings');
    t.equal(hostile.findings[0]!.subject.length, 128, 'subjects bounded');
    t.equal(hostile.findings[0]!.message, 'm ', 'control characters replaced');
  }
});

t.test('collect + remove', { skip: !isRoot && 'needs root' }, async (t) => {
  const none = { removed: 0, left: 0, errors: [] };
  const gone = (taskWhy: string) => ({ job: '1234', ownerUid: JOB_UID, task: null, taskWhy, removed: true, error: null, reclaimed: none });
  let j = jobDir();
  j.asUser(TASK_FILE, JSON.stringify(record()));
  let o = collectJobState(j.stateDir, '1234');
  t.same(o, { job: '1234', ownerUid: JOB_UID, task: { step: 'batch', state: 'trusted', memlock: { soft: 65536, hard: 8388608, source: 'propagated' }, findings: [MEMLOCK_FINDING] }, taskWhy: null, removed: true, error: null, reclaimed: none }, 'reads the record and removes the directory');
  t.equal(o.error, null, 'no error');
  t.same(o.task?.findings, [MEMLOCK_FINDING], 'its one finding');
  t.notOk(fs.existsSync(j.dir), 'job dir gone');

  o = collectJobState(j.stateDir, '1234');
  t.same(o, { job: '1234', ownerUid: null, task: null, taskWhy: 'no state directory', removed: false, error: null, reclaimed: none }, 'nothing to do the second time');
  t.equal(o.task, null);

  j = jobDir();
  o = collectJobState(j.stateDir, '1234');
  t.same(o, gone('no task record (the TaskProlog did not run or did not write)'), 'no task.json: still removed');
  t.equal(o.task, null);

  // task.json as a link to a root-only file: never read through the link.
  j = jobDir();
  const secret = path.join(j.base, 'secret');
  fs.writeFileSync(secret, JSON.stringify(record({ step: 'SECRET' })), { mode: 0o600 });
  fs.symlinkSync(secret, path.join(j.dir, TASK_FILE));
  o = collectJobState(j.stateDir, '1234');
  t.same(o, gone(`${path.join(j.dir, TASK_FILE)} is a symbolic link`), 'a symlinked task.json is not followed');
  t.equal(o.task, null, 'no task read through the link');
  t.ok(fs.existsSync(secret), 'and its target is untouched');

  j = jobDir();
  j.asUser(TASK_FILE, 'x'.repeat(100 * 1024));
  o = collectJobState(j.stateDir, '1234');
  t.same(o, gone(`${path.join(j.dir, TASK_FILE)} is larger than 65536 bytes`), 'an oversized task.json');
  t.equal(o.task, null);

  j = jobDir();
  j.asUser(TASK_FILE, '{"format":');
  o = collectJobState(j.stateDir, '1234');
  t.same(o, gone('task.json is not JSON'), 'a truncated task.json');
  t.equal(o.task, null);
});

t.test('removal never follows what the owner planted', { skip: !isRoot && 'needs root' }, async (t) => {
  const j = jobDir();
  const victim = path.join(j.base, 'victim');
  fs.mkdirSync(path.join(victim, 'sub'), { recursive: true });
  fs.writeFileSync(path.join(victim, 'sub', 'keep'), 'precious');
  j.asUser('a/b/c');
  j.asUser('a/b/c/file', 'x');
  fs.symlinkSync(victim, path.join(j.dir, 'a', 'link-to-victim'));
  fs.symlinkSync(path.join(victim, 'sub', 'keep'), path.join(j.dir, 'a', 'b', 'link-to-file'));
  fs.symlinkSync('/', path.join(j.dir, 'root'));
  const r = removeJobDir(j.stateDir, '1234');
  t.same(r, { ok: true, removed: true }, 'removed');
  t.notOk(fs.existsSync(j.dir), 'job dir gone');
  t.equal(fs.readFileSync(path.join(victim, 'sub', 'keep'), 'utf8'), 'precious', 'link targets untouched');
  t.ok(fs.existsSync('/etc/hostname') || fs.existsSync('/etc'), '/ untouched');
});

t.test('too much to remove: locked and set aside', { skip: !isRoot && 'needs root' }, async (t) => {
  const j = jobDir();
  for (let i = 0; i < 20; i++) j.asUser(`f${i}`, '');
  j.asUser('d/e');
  const r = removeJobDir(j.stateDir, '1234', { maxEntries: 10, maxDepth: 8 });
  t.equal(r.ok, false, 'gives up past the entry budget');
  if (!r.ok) {
    t.equal(r.why, `${j.dir}: more than 10 entries`, r.why);
    t.ok(r.setAside && fs.lstatSync(r.setAside).isDirectory(), 'what is left is set aside');
    t.equal(fs.lstatSync(r.setAside!).uid, 0, 'root-owned: the user cannot touch it any more');
    t.equal(fs.lstatSync(r.setAside!).mode & 0o777, 0o700, 'mode 0700');
  }
  t.notOk(fs.existsSync(j.dir), 'the name job-<id> is free for the next Prolog');
  const deep = jobDir();
  deep.asUser('1/2/3/4');
  const d = removeJobDir(deep.stateDir, '1234', { maxEntries: 100, maxDepth: 2 });
  t.same(Object.keys(d), ['ok', 'why', 'setAside']);
  t.match(d, { ok: false, why: exactly(`${deep.dir}: deeper than 2 levels`), setAside: new RegExp(`^${literal(path.join(deep.stateDir, '.stale-job-1234-'))}[0-9a-f]{8}$`) }, 'depth bounded too');
});
