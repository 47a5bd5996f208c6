// On a node other jobs use now, the Epilog does not probe: their traffic through the HCA and GPU would read as a slow
// path (a busy rail, sustained, drained a healthy shared node). The evidence: another job's state directory (its Prolog's,
// not yet removed by its Epilog), unless Slurm's cgroup v2 tree is there and says that job has ended.
import t from 'tap';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { SLURM_CGROUP_V2 } from '../../src/epilog/busy.js';
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
});
