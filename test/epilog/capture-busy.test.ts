// `baseline capture --with-probes` (the built CLI over a generated node) captures no bands beside another job, or beside
// a process that holds the probed GPU open: every later Epilog is judged against the bands, and bands measured beside
// that traffic are low. The Epilog's own looks (busy.ts, holders.ts) say so; with the job ended, or the process gone,
// the capture writes its bands.
import t from 'tap';
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { cli } from '../helpers/cli.js';
import { cudaFds, writeProcesses } from '../gen/proc-pids.js';
import { healthy } from './_cli.js';

t.test('beside another job, beside a process on the probed GPU: nothing written, said; alone: captured', async (t) => {
  const e = await healthy(0);
  const capture = (): ReturnType<typeof cli> => cli(['baseline', 'capture', '--root', e.tree, '--class', 'rail', '--match', '*', '--with-probes', '--config', e.config]);
  mkdirSync(path.join(e.dir, 'run', 'job-99'), { mode: 0o700 });
  const job = capture();
  t.same([job.code, job.stdout, job.stderr], [2, '', 'gdrgate: --with-probes: other jobs run on this node (job 99): bands measured now would be too low; nothing written. Capture on a node no job runs on (drained, or reserved)\n'], 'another job');
  rmSync(path.join(e.dir, 'run', 'job-99'), { recursive: true });
  // A job's process started with nohup, outside its job's cgroup, still on the GPU.
  writeProcesses(e.tree, [{ pid: 31337, ppid: 1, comm: 'python3', uid: 1000, cgroup: '/user.slice/user-1000.slice/session-4.scope', fds: cudaFds('/dev/nvidia0') }]);
  const held = capture();
  t.same(
    [held.code, held.stdout, held.stderr],
    [2, '', 'gdrgate: --with-probes: pid 31337 (python3, uid 1000) holds /dev/nvidia0 (a GPU: which GPU each /dev/nvidiaN is could not be told): bands measured now would be too low; nothing written\n'],
    'a process holding the GPU',
  );
  rmSync(path.join(e.tree, 'proc/31337'), { recursive: true });
  const alone = capture();
  t.equal(alone.code, 0, `alone: captured (${alone.stderr})`);
  const probes = (JSON.parse(alone.stdout) as { classes: { probes?: unknown[] }[] }).classes[0]?.probes ?? [];
  t.equal(probes.length > 0, true, 'with its bands');
});
