// State the job's user cannot grow without bound: what a failed removal set aside is reclaimed by later epilogs
// (bounded work each), and a Prolog whose write fails leaves no root-owned directory to blame the user for.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { collectJobState } from '../../src/state/epilog.js';
import { writePrologState } from '../../src/state/prolog.js';
import { readPrologState } from '../../src/state/read.js';
import { reclaimStale, RECLAIM_BUDGET, REMOVE_LIMITS } from '../../src/state/store.js';
import { literal } from '../helpers/exactly.js';
import { JOB_UID, sampleState, tmpStateDir } from './_state.js';

const isRoot = process.getuid?.() === 0;
const stale = (stateDir: string): string[] => fs.readdirSync(stateDir).filter((n) => n.startsWith('.stale-'));
/** Entries below `dir`, itself not counted. */
const count = (dir: string): number => fs.readdirSync(dir, { recursive: true }).length;

/** A job that left `files` files in its directory (as the job's user), then its epilog. */
function jobWithFiles(stateDir: string, job: string, files: number): void {
  const dir = path.dirname(writePrologState(stateDir, sampleState({ job }), null));
  for (let i = 0; i < files; i++) fs.writeFileSync(path.join(dir, `f${i}`), '');
  fs.lchownSync(dir, JOB_UID, JOB_UID);
}

t.test('set-aside job directories are reclaimed by the next epilogs, a bounded share each', { skip: !isRoot && 'needs root' }, async (t) => {
  const { stateDir } = tmpStateDir();
  // Three jobs each over the removal budget, as in the report (2,000 files each).
  for (const job of ['11', '12', '13']) jobWithFiles(stateDir, job, 2000);
  const first = collectJobState(stateDir, '11');
  t.same(first, { job: '11', ownerUid: JOB_UID, task: null, taskWhy: 'no task record (the TaskProlog did not run or did not write)', removed: false, error: first.error, reclaimed: first.reclaimed }, 'over the budget: set aside');
  t.match(first.error, new RegExp(`^${literal(path.join(stateDir, 'job-11'))}: more than 1024 entries \\(set aside as ${literal(path.join(stateDir, '.stale-job-11-'))}[0-9a-f]{8}\\)$`));
  t.same(first.reclaimed, { removed: 1, left: 0, errors: [] }, 'one set-aside directory reclaimed whole, no error');
  t.equal(stale(stateDir).length, 0, 'and reclaimed by the same epilog (2,000 entries < the reclaim budget)');
  collectJobState(stateDir, '12');
  collectJobState(stateDir, '13');
  t.equal(stale(stateDir).length, 0, 'nothing of the three jobs is left in stateDir');
  t.strictSame(fs.readdirSync(stateDir).sort(), ['signing.key', 'signing.pub'], 'only the key pair');
});

t.test('per call at most the budget; the next calls finish; depth past the removal limit too', { skip: !isRoot && 'needs root' }, async (t) => {
  const { stateDir } = tmpStateDir();
  fs.mkdirSync(stateDir, { mode: 0o711 });
  const aside = path.join(stateDir, '.stale-job-7-0badcafe');
  fs.mkdirSync(aside, { mode: 0o700 });
  for (let i = 0; i < 250; i++) fs.writeFileSync(path.join(aside, `f${i}`), 'x');
  let deep = aside;
  for (let i = 0; i < REMOVE_LIMITS.maxDepth * 3; i++) fs.mkdirSync((deep = path.join(deep, 'd')));
  fs.writeFileSync(path.join(deep, 'bottom'), 'x');
  const before = count(aside);
  const r = reclaimStale(stateDir, 100);
  t.equal(r.removed, 0, 'not done yet');
  t.ok(before - count(aside) <= 100, `at most 100 entries removed (${before - count(aside)})`);
  let runs = 1;
  while (stale(stateDir).length > 0 && runs < 50) (reclaimStale(stateDir, 100), runs++);
  t.equal(stale(stateDir).length, 0, `all reclaimed after ${runs} bounded calls`);
  t.ok(runs >= 3, 'in several calls');
  t.equal(RECLAIM_BUDGET, 4096);
});

t.test('a failed Prolog write leaves no job directory: the TaskProlog says "missing", not "tampered"', { skip: !isRoot && 'chown to the job uid needs root' }, async (t) => {
  const { stateDir } = tmpStateDir();
  writePrologState(stateDir, sampleState({ job: '1' }), null); // the key pair exists, as on a node after its first job
  const real = fs.writeSync;
  // stateDir full: the next write(2) fails as on a full tmpfs.
  fs.writeSync = (() => {
    throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
  }) as typeof fs.writeSync;
  try {
    t.throws(() => writePrologState(stateDir, sampleState(), null), /ENOSPC/);
  } finally {
    fs.writeSync = real;
  }
  t.notOk(fs.existsSync(path.join(stateDir, 'job-1234')), 'no partial job directory');
  t.same(readPrologState(stateDir, { job: '1234', uid: JOB_UID, node: 'gpu001' }), { status: 'missing', why: `${path.join(stateDir, 'job-1234')} does not exist (the Prolog recorded nothing for this job)` });
});

const canMount = ((): string | false => {
  if (!isRoot) return 'not root';
  const probe = fs.mkdtempSync('/tmp/gdrgate-mnt-');
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', probe], { stdio: 'ignore' });
    execFileSync('umount', [probe], { stdio: 'ignore' });
    return false;
  } catch {
    return 'cannot mount tmpfs here';
  } finally {
    fs.rmSync(probe, { recursive: true, force: true });
  }
})();

t.test('the same on a really full tmpfs', { skip: canMount }, async (t) => {
  const mnt = fs.mkdtempSync('/tmp/gdrgate-full-');
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', mnt]);
  t.teardown(() => {
    execFileSync('umount', [mnt]);
    fs.rmSync(mnt, { recursive: true, force: true });
  });
  const stateDir = path.join(mnt, 'run');
  writePrologState(stateDir, sampleState({ job: '1' }), null);
  try {
    fs.writeFileSync(path.join(stateDir, 'fill'), Buffer.alloc(128 * 1024));
  } catch {
    /* full: what we wanted */
  }
  t.throws(() => writePrologState(stateDir, sampleState(), null), /ENOSPC/);
  t.notOk(fs.existsSync(path.join(stateDir, 'job-1234')), 'no partial job directory');
  t.same(readPrologState(stateDir, { job: '1234', uid: JOB_UID, node: 'gpu001' }), { status: 'missing', why: `${path.join(stateDir, 'job-1234')} does not exist (the Prolog recorded nothing for this job)` });
});
