// Without a trusted record the agent maps the matrix's adapters by PCI function as `gdrgate task` does: same answer.
// Same lines, exit code and task record from both.
// The node (test/gen/topologies/two-socket-2gpu-2nic.ts) named its adapters the other way round from the reference the
// baseline was captured on: here mlx5_1 (uverbs0) is at 0000:19:00.0, next to GPU 0 (0000:18:00.0). The Prolog's
// record is made untrusted (its payload changed after signing), so both judge the job's own view: a container holding only the
// GPU's adapter, only the far one, both with the near one's verbs node gone, and a device link the job cannot follow.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { allDevices, type GenNode } from '../gen/sysfs-tree.js';
import { node as TWO } from '../gen/topologies/two-socket-2gpu-2nic.js';
import { said, startRig } from './_agent-rig.js';

if (process.getuid?.() !== 0) t.skip('needs root (the agent is root, the TaskProlog runs as the job uid)', () => {});
else await main();

async function main(): Promise<void> {
  const SWAPPED: GenNode = structuredClone(TWO);
  const ib = allDevices(SWAPPED).flatMap((d) => (d.ib ? [d.ib] : []));
  [ib[0]!.name, ib[1]!.name] = [ib[1]!.name, ib[0]!.name];
  const rig = await startRig({ node: SWAPPED, reference: TWO });
  t.teardown(() => rig.close());
  const { tree, work } = rig;
  const hold = path.join(work, 'hold');
  fs.mkdirSync(hold);
  /** Moves `rel` (paths in the tree) out of the job's view; returns the undo. */
  const hide = (rel: readonly string[]) => (): (() => void) => {
    rel.forEach((r, k) => fs.renameSync(path.join(tree, r), path.join(hold, String(k))));
    return () => rel.forEach((r, k) => fs.renameSync(path.join(hold, String(k)), path.join(tree, r)));
  };
  /** mlx5_0's device link (here the far adapter's) leads nowhere in the job's /sys. */
  const dangle = (): (() => void) => {
    const l = path.join(fs.realpathSync(path.join(tree, 'sys/class/infiniband/mlx5_0')), 'device');
    const was = fs.readlinkSync(l);
    fs.rmSync(l);
    fs.symlinkSync('../../../0000:ff:00.0', l);
    return () => (fs.rmSync(l), fs.symlinkSync(was, l));
  };
  const env = { SLURM_STEP_ID: '0', SLURM_LOCALID: '0', SLURM_JOB_GPUS: '0', SLURM_STEP_GPUS: '0', SLURM_GPUS_ON_NODE: '1' };
  const UNTRUSTED = 'print gdrgate: the host record for this job is untrusted: prolog.json signature does not verify (changed after the Prolog wrote it, or signed with another key): it is ignored and the job view is checked on its own; do not edit files under the gdrgate state directory; the admin has been told';
  const NIC = ": GPUDirect RDMA for that GPU has to use a farther adapter or bounce through host memory; add the adapter to the container's device list (its /sys/class/infiniband entry and /dev/infiniband/uverbs node), or ask your admin why the job view hides it";
  const HIDDEN = `print gdrgate: this job cannot use the adapter at 0000:19:00.0 (mlx5_0 on the reference node; no adapter in this job's /sys/class/infiniband is at that PCI function), the PIX adapter next to GPU 0 (0000:18:00.0)${NIC}`;
  const NODE_GONE = 'print gdrgate: the kernel has verbs devices uverbs0 (/sys/class/infiniband_verbs) but this job has no /dev/infiniband node for them: user-space verbs cannot open those adapters: NCCL falls back to TCP sockets; pass the devices into the container (--device /dev/infiniband, or the runtime hook of your site)';
  const ONLY_FAR = ['sys/class/infiniband/mlx5_1', 'sys/class/infiniband_verbs/uverbs0', 'dev/infiniband/uverbs0'];
  const UNPLACED = "whether this job has the PIX adapter next to GPU 0 (0000:18:00.0) cannot be told: no adapter in its /sys/class/infiniband is at 0000:19:00.0 (mlx5_0 on the reference node), and the PCI function of mlx5_0 could not be read (/sys/class/infiniband/mlx5_0/device: missing, or a link to nothing, in this job's /sys (ENOENT))";
  const both = (a: () => () => void, b: () => () => void) => (): (() => void) => { const x = a(); const y = b(); return () => (y(), x()); };
  const cases: { name: string; mut: () => () => void; code: number; lines: string[]; agent: boolean; placement: [string, string][] }[] = [
    { name: 'every adapter seen', mut: () => () => {}, code: 0, lines: [UNTRUSTED], agent: true, placement: [['job-placement-ok', "this job's CPUs 0-7 and memory nodes 0 are near its GPUs 0=0000:18:00.0"]] },
    { name: "a container with only mlx5_1, the GPU's adapter here (before: failed for mlx5_0)", mut: hide(['sys/class/infiniband/mlx5_0', 'sys/class/infiniband_verbs/uverbs1', 'dev/infiniband/uverbs1']), code: 0, lines: [UNTRUSTED], agent: true, placement: [['job-placement-ok', "this job's CPUs 0-7 and memory nodes 0 are near its GPUs 0=0000:18:00.0"]] },
    { name: 'a container with only mlx5_0, the far adapter here (before: passed)', mut: hide(ONLY_FAR), code: 1, lines: [HIDDEN, UNTRUSTED], agent: true, placement: [['job-nic-hidden', HIDDEN.slice('print gdrgate: '.length, -NIC.length)]] },
    {
      name: "both seen, the near one's verbs node gone (before: mlx5_0, the far one, judged usable)",
      mut: hide(['dev/infiniband/uverbs0']), code: 1, agent: true,
      lines: [NODE_GONE, `print gdrgate: this job cannot use mlx5_1 (no usable /dev/infiniband/uverbs0), the PIX adapter next to GPU 0 (0000:18:00.0)${NIC}`, UNTRUSTED],
      placement: [['job-nic-hidden', 'this job cannot use mlx5_1 (no usable /dev/infiniband/uverbs0), the PIX adapter next to GPU 0 (0000:18:00.0)']],
    },
    { name: 'the far adapter alone, its device link leading nowhere (bash cannot follow it: gdrgate judges)', mut: both(hide(ONLY_FAR), dangle), code: 0, lines: [UNTRUSTED], agent: false, placement: [['job-placement-unknown', UNPLACED], ['job-placement-ok', "this job's CPUs 0-7 and memory nodes 0 are near its GPUs 0=0000:18:00.0 (the adapters next to them: see the skip lines)"]] },
  ];
  let job = 600;
  for (const c of cases)
    await t.test(c.name, async (t) => {
      const id = String(job++);
      t.equal(rig.prolog(id, '0'), 0, 'prolog');
      const rec = path.join(rig.stateDir, `job-${id}`, 'prolog.json');
      const signed = JSON.parse(fs.readFileSync(rec, 'utf8')) as Record<string, unknown>;
      fs.writeFileSync(rec, JSON.stringify({ ...signed, payload: String(signed.payload).replace('"job":', '"job" :') }));
      const undo = c.mut();
      try {
        const b = await rig.both(id, { ...env }, 'FAIL=1');
        t.same(said(b.viaAgent), said(b.viaNode), 'the same lines and exit code');
        t.same(b.agentRecord, b.nodeRecord, 'the same task record');
        t.same(said(b.viaNode), { code: c.code, stdout: c.lines.map((l) => `${l}\n`).join('') }, "gdrgate task's answer");
        const kept = b.nodeRecord as { findings: { code: string; message: string }[] };
        t.same(kept.findings.filter((f) => f.code.startsWith('job-placement') || f.code === 'job-nic-hidden').map((f) => [f.code, f.message]), c.placement, 'its placement findings');
        t.equal(b.agentRuns, c.agent ? 0 : 1, c.agent ? 'the agent answered' : 'gdrgate judged', { agentErr: rig.agentErr() });
      } finally {
        undo();
      }
    });
}
