// The Epilog end to end (the built CLI over a generated node): a process that escaped its job and holds the probed
// GPU open keeps the Epilog from probing, said with its pid, comm and device; the node's GPU daemons never do; a dry
// run probes and says that an Epilog would not.
import t from 'tap';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { DAEMONS, cudaFds, writeProcesses } from '../gen/proc-pids.js';
import { healthy, last, lines } from './_cli.js';

const summary = (stdout: string): string => last(stdout).replace(/ \d+ms/, '');
const probes = (stdout: string): string | undefined => / probes=(\S+)/.exec(summary(stdout))?.[1];

t.test('an escaped process on the probed GPU: not probed, said; the daemons alone: probed', async (t) => {
  const e = await healthy(1);
  writeProcesses(e.tree, DAEMONS);
  const before = lines(e).length;
  t.equal(probes(e.epilog('2').stdout), 'ran', 'persistenced, DCGM, fabric manager and dcgm-exporter hold every GPU: probed');
  t.ok(lines(e).length > before, 'sampled');
  // A job's process started with nohup, outside its job's cgroup (a user's session), still on the GPU.
  writeProcesses(e.tree, [{ pid: 31337, ppid: 1, comm: 'python3', uid: 1000, cgroup: '/user.slice/user-1000.slice/session-4.scope', fds: cudaFds('/dev/nvidia0') }]);
  const sampled = lines(e).length;
  const r = e.epilog('3');
  t.equal(r.code, 0);
  // This node's tree has no /proc/driver/nvidia/gpus: which GPU /dev/nvidia0 is cannot be told, so any GPU's node counts.
  t.equal(summary(r.stdout), 'gdrgate epilog node=gpu001 job=3 view=none removed=false probes=skipped (pid 31337 (python3, uid 1000) holds /dev/nvidia0 (a GPU: which GPU each /dev/nvidiaN is could not be told): not probed, its traffic would read as a slow path) result=healthy exit=0 action=none');
  t.equal(lines(e).length, sampled, 'no sample taken');
  t.equal(probes(e.epilog('4', ['--dry-run']).stdout), 'ran', 'by hand it probes what it is asked to');
  const runs = readFileSync(e.log, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { msg?: string; job?: string; why?: string | null }).filter((l) => l.msg === 'gdrgate epilog' && l.job === '4');
  t.equal(runs.pop()?.why?.split('; ').pop(), 'pid 31337 (python3, uid 1000) holds /dev/nvidia0 (a GPU: which GPU each /dev/nvidiaN is could not be told): an Epilog would not probe');
  rmSync(path.join(e.tree, 'proc/31337'), { recursive: true });
  t.equal(probes(e.epilog('5').stdout), 'ran', 'gone: probed again');
});
