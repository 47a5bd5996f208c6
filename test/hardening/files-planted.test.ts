// Links planted at every path the gate writes, links at the temporary names it once used, and directories other
// users can write: root must never write through a link nor into such a directory.
import t from 'tap';
import { chmodSync, chownSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { newDrill, writeDrill } from '../../src/drill/file.js';
import { ensureDir, PROBE_LOCK, STAMP, takeProbeLock, writeStamp } from '../../src/epilog/files.js';
import { recordTaskFindings, TASK_FINDINGS_FILE } from '../../src/epilog/task-counts.js';
import { takeDrainLock } from '../../src/host/drain-lock.js';
import { appendText, writeAtomic } from '../../src/host/files.js';
import { appendSamples, LIVE } from '../../src/samples/spool.js';
import { exactly } from '../helpers/exactly.js';
import { samples, scratch } from './_files.js';

const isRoot = process.getuid?.() === 0;
const fault = { kind: 'memlock', bytes: 65536 } as const;

t.test('a link at each path the gate writes: replaced or refused, its target untouched', async (t) => {
  const s = scratch();
  t.teardown(s.done);
  ensureDir(s.dir);
  const at = (name: string): string => {
    const p = path.join(s.dir, name);
    symlinkSync(s.victim, p);
    return p;
  };
  at(STAMP);
  writeStamp(s.dir, { ts: 1, job: '1', cursor: 0 });
  t.ok(lstatSync(path.join(s.dir, STAMP)).isFile(), 'stamp: the link itself replaced');
  at('x.prom');
  writeAtomic(path.join(s.dir, 'x.prom'), 'metrics\n');
  t.ok(lstatSync(path.join(s.dir, 'x.prom')).isFile(), 'textfile: the link itself replaced by rename(2)');
  at(LIVE);
  t.match(appendSamples({ dir: s.dir }, samples(2)), { ok: false, code: /^EUNSAFE$/, message: exactly(`${path.join(s.dir, LIVE)} is a symbolic link`) }, 'samples.jsonl: refused');
  at(TASK_FINDINGS_FILE);
  t.throws(() => recordTaskFindings(s.dir, 'gpu001', '9', ['job-memlock-low']), /symbolic link/, 'task-findings.jsonl: refused');
  at('drills.jsonl');
  t.throws(() => appendText(path.join(s.dir, 'drills.jsonl'), '{}\n', 0o600), /symbolic link/, 'drills.jsonl: refused');
  at(PROBE_LOCK);
  const l = takeProbeLock(s.dir, 60_000);
  t.ok('release' in l, 'a link at probe.lock is nobody\'s lock: broken, then ours');
  if ('release' in l) l.release();
  at('drain.lock');
  const d = takeDrainLock(s.dir);
  t.equal(d.ok, true, 'drain.lock: the same');
  if (d.ok) d.release();
  at('drill.json');
  writeDrill(s.dir, newDrill('gpu001', fault, 5));
  t.ok(lstatSync(path.join(s.dir, 'drill.json')).isFile(), 'drill.json: replaced, not followed');
  t.ok(s.intact(), 'victim byte-identical');
});

t.test('temporary names cannot be guessed: links at the old `.<name>.<pid>.tmp` are never used', async (t) => {
  const s = scratch();
  t.teardown(s.done);
  ensureDir(s.dir);
  const names = [STAMP, 'gdrgate.prom', 'drill.json'];
  for (const n of names) symlinkSync(s.victim, path.join(s.dir, `.${n}.${process.pid}.tmp`));
  writeStamp(s.dir, { ts: 1, job: '1', cursor: 0 });
  writeAtomic(path.join(s.dir, 'gdrgate.prom'), 'metrics\n');
  writeDrill(s.dir, newDrill('gpu001', fault, 5));
  t.ok(s.intact(), 'no planted link followed');
  for (const n of names) t.equal(readlinkSync(path.join(s.dir, `.${n}.${process.pid}.tmp`)), s.victim, `${n}: the planted link is not ours to rename`);
  t.equal(readFileSync(path.join(s.dir, 'gdrgate.prom'), 'utf8'), 'metrics\n');
  t.notOk(readdirSync(s.dir).some((f) => /\.[0-9a-f]{12}$/.test(f)), 'no temporary file of ours left');
});

t.test('directories another user can write are refused; sticky ones and our own are fine', async (t) => {
  const s = scratch();
  t.teardown(s.done);
  mkdirSync(s.dir);
  chmodSync(s.dir, 0o777);
  t.throws(() => ensureDir(s.dir), /writable by anyone \(mode 0777\)/, 'world-writable spool');
  t.match(appendSamples({ dir: s.dir }, samples(1)), { ok: false, code: /^EUNSAFE$/ }, 'no append into it');
  t.throws(() => writeAtomic(path.join(s.dir, 'gdrgate.prom'), 'x'), /writable by anyone/, 'no textfile into it');
  chmodSync(s.dir, 0o775);
  t.throws(() => writeStamp(s.dir, { ts: 1, job: null, cursor: 0 }), /writable by its group/, 'group-writable');
  chmodSync(s.dir, 0o1777);
  t.doesNotThrow(() => writeAtomic(path.join(s.dir, 'gdrgate.prom'), 'x'), 'sticky (as /tmp): others cannot rename or remove our files');
  chmodSync(s.dir, 0o755);
  if (isRoot) {
    chownSync(s.dir, 1000, 1000);
    t.throws(() => ensureDir(s.dir), /owned by uid 1000/, "a user's directory");
    t.match(appendSamples({ dir: s.dir }, samples(1)), { ok: false, code: /^EUNSAFE$/ });
  }
  t.notOk(existsSync(path.join(s.dir, LIVE)), 'nothing appended');
});
