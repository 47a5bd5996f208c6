// On a node other jobs use now, the Epilog does not probe: their traffic through the HCA and GPU would read as a slow
// path (a busy rail, sustained, drained a healthy shared node). The evidence: another job's state directory (its Prolog's,
// not yet removed by its Epilog), unless Slurm's cgroup v2 tree is there and says that job has ended.
import t from 'tap';
import { mkdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { otherJobs, SLURM_CGROUP_V1, SLURM_CGROUP_V2 } from '../../src/epilog/busy.js';
import { FsHost } from '../../src/host/fs-host.js';
import type { Host } from '../../src/host/host.js';
import { scratchDir } from '../helpers/scratch.js';
import { healthy, last, lines } from './_cli.js';

const summary = (stdout: string): string => last(stdout).replace(/ \d+ms/, '');

t.test('another job still running here: not probed, said; its state gone: probed again', async (t) => {
  const e = await healthy(3);
  const before = lines(e).length;
  mkdirSync(path.join(e.dir, 'run', 'job-99'), { mode: 0o700 });
  const r = e.epilog('5');
  t.equal(r.code, 0);
  t.equal(summary(r.stdout), 'gdrgate epilog node=gpu001 job=5 view=none removed=false probes=skipped (other jobs run on this node (job 99): not probed, their traffic would read as a slow path) result=healthy exit=0 action=none');
  t.equal(lines(e).length, before, 'no sample taken');
  // Slurm's cgroup tree is there and holds only this job: job 99 ended without its Epilog (a slurmd restart): stale.
  mkdirSync(path.join(e.tree, SLURM_CGROUP_V2, 'job_6'), { recursive: true });
  const again = e.epilog('6');
  t.equal(again.code, 0);
  t.equal(/ probes=(\S+)/.exec(summary(again.stdout))?.[1], 'ran');
  t.ok(lines(e).length > before, 'sampled');
  // The cgroup tree lists job 99 as running: not probed.
  mkdirSync(path.join(e.tree, SLURM_CGROUP_V2, 'job_99'));
  t.equal(/ probes=(\S+)/.exec(summary(e.epilog('7').stdout))?.[1], 'skipped');
  // By hand (--dry-run) it probes what it is asked to, and says an Epilog would not (the log's why).
  t.equal(/ probes=(\S+)/.exec(summary(e.epilog('8', ['--dry-run']).stdout))?.[1], 'ran');
  const runs = readFileSync(e.log, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { msg?: string; job?: string; why?: string | null }).filter((l) => l.msg === 'gdrgate epilog' && l.job === '8');
  t.equal(runs.pop()?.why?.split('; ').pop(), 'other jobs run on this node (job 99): an Epilog would not probe');
});

t.test("a capture's cgroup tree is read inside its root: a link out of it is no evidence, an absolute one is the capture's", async (t) => {
  const e = await healthy(1);
  mkdirSync(path.join(e.dir, 'run', 'job-99'), { mode: 0o700 });
  // This machine's side of the capture (beside it, as the machine's /sys/fs/cgroup would be): job 99 ended, job 6 runs.
  mkdirSync(path.join(e.dir, 'outside', 'system.slice', 'slurmstepd.scope', 'job_6'), { recursive: true });
  mkdirSync(path.join(e.tree, 'sys', 'fs'), { recursive: true });
  symlinkSync('../../../outside', path.join(e.tree, 'sys', 'fs', 'cgroup'));
  // Leaves the root: what the capture's Slurm ran cannot be told, so job 99's directory counts (as with no tree at all).
  t.equal(summary(e.epilog('6').stdout), 'gdrgate epilog node=gpu001 job=6 view=none removed=false probes=skipped (other jobs run on this node (job 99): not probed, their traffic would read as a slow path) result=healthy exit=0 action=none');
  // An absolute link resolves at the capture's root (as every read of it does): its own tree says job 99 has ended.
  rmSync(path.join(e.tree, 'sys', 'fs', 'cgroup'));
  symlinkSync('/cgroup2', path.join(e.tree, 'sys', 'fs', 'cgroup'));
  mkdirSync(path.join(e.tree, 'cgroup2', 'system.slice', 'slurmstepd.scope', 'job_7'), { recursive: true });
  t.equal(/ probes=(\S+)/.exec(summary(e.epilog('7').stdout))?.[1], 'ran');
});

t.test('the evidence, directly: job directories less what cgroup v2, else v1, says has ended; this job and other names never count', async (t) => {
  const d = scratchDir('gdrgate-busy-');
  t.teardown(() => rmSync(d, { recursive: true, force: true }));
  const state = path.join(d, 'run');
  for (const n of ['job-5', 'job-12', 'job-7', '.stale-job-9', 'tasks-12', 'signing.key', 'job-x', 'job-012']) mkdirSync(path.join(state, n), { recursive: true });
  const root = path.join(d, 'root');
  let opens = 0;
  const host = (): Promise<Host> => (opens++, Promise.resolve(new FsHost(root)));
  t.strictSame(await otherJobs(state, '5', host), ['7', '12'], 'no cgroup tree: the job directories, sorted, this job left out');
  t.strictSame(await otherJobs(state, null, host), ['5', '7', '12']);
  mkdirSync(path.join(root, SLURM_CGROUP_V1, 'uid_1000', 'job_12'), { recursive: true });
  mkdirSync(path.join(root, SLURM_CGROUP_V1, 'uid_1001'), { recursive: true });
  t.strictSame(await otherJobs(state, '5', host), ['12'], 'cgroup v1: job 7 ended without its Epilog');
  mkdirSync(path.join(root, SLURM_CGROUP_V2, 'job_7'), { recursive: true });
  t.strictSame(await otherJobs(state, '5', host), ['7'], 'cgroup v2 decides where it is there');
  t.equal(opens, 4);
  t.strictSame(await otherJobs(path.join(d, 'none'), '5', host), [], 'no state directory: nothing known to run');
  t.strictSame(await otherJobs(state, '12', host), ['7'], 'job 5 ended (cgroup v2), job 7 runs');
  t.equal(opens, 5);
  rmSync(path.join(state, 'job-5'), { recursive: true });
  rmSync(path.join(state, 'job-7'), { recursive: true });
  t.strictSame(await otherJobs(state, '12', host), [], 'no other job directory: the root is not opened');
  t.equal(opens, 5);
  mkdirSync(path.join(state, 'job-7'));
  t.strictSame(await otherJobs(state, '12', () => Promise.reject(new Error('no root'))), ['7'], 'a root that cannot be opened: could not tell, every job directory counts');
});
