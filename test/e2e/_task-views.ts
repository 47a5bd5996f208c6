// What test/e2e/task.test.ts expects a job to be told, written out whole (not a test file): case 5's container view.
import { hostname } from 'node:os';

/** `gdrgate task --standalone` in case 5's container (mlx5_0 and uverbs0 hidden), after the job's "== container" line, by line. */
export function containerView(root: string): string[] {
  const pad = ' '.repeat(46);
  return [
    'container',
    `gdrgate task --standalone — root ${root}, host ${hostname()}, memlock minimum 8 MiB (baseline class)`,
    'STATUS  CHECK           SUBJECT               FINDING',
    'FAIL    job-visibility  /dev/infiniband       the kernel has verbs devices uverbs0 (/sys/class/infiniband_verbs) but this job has no /dev/infiniband node for them (want uverbs0, uverbs1)',
    `${pad}tells: user-space verbs cannot open those adapters: NCCL falls back to TCP sockets`,
    `${pad}do:    pass the devices into the container (--device /dev/infiniband, or the runtime hook of your site) [application]`,
    'FAIL    job-placement   GPU 0 (0000:18:00.0)  this job cannot use the adapter at 0000:19:00.0 (mlx5_0 on the reference node; no adapter in this job\'s /sys/class/infiniband is at that PCI function), the PIX adapter next to GPU 0 (0000:18:00.0) (want 0000:19:00.0 (mlx5_0 on the reference node))',
    `${pad}tells: GPUDirect RDMA for that GPU has to use a farther adapter or bounce through host memory`,
    `${pad}do:    add the adapter to the container's device list (its /sys/class/infiniband entry and /dev/infiniband/uverbs node), or ask your admin why the job view hides it [application]`,
    'PASS    memlock-limit   job                   memlock is 8 MiB in this job',
    'result: problems found (exit 1) — 2 fail, 0 error, 0 warn, 1 pass, 0 skip',
    '',
  ];
}
