// Job-view fixture roots (not a test): a generated sysfs tree (4x V100 + 4 ConnectX-5) plus /dev and
// /sys/class/infiniband_verbs written by hand. /dev nodes are regular files: the task only checks that they
// exist and that access(2) allows read-write, it never opens a device.
import fs from 'node:fs';

import path from 'node:path';
import { statusText, writeNvidiaGpus } from '../gen/nvidia-procfs.js';
import { allDevices, buildTree, type GenNode } from '../gen/sysfs-tree.js';
import { node as V100 } from '../gen/topologies/v100sxm2-4gpu-4nic-pairs.js';
import { scratchDirAsync } from '../helpers/scratch.js';

export const HCAS = ['mlx5_0', 'mlx5_1', 'mlx5_2', 'mlx5_3'];
export const UVERBS = ['uverbs0', 'uverbs1', 'uverbs2', 'uverbs3'];
export const NVIDIA = ['nvidia-uvm', 'nvidia-uvm-tools', 'nvidia0', 'nvidia1', 'nvidia2', 'nvidia3', 'nvidiactl'];

export interface JobRootOptions {
  memlockKiB?: number | 'unlimited';
  /** /dev/infiniband/uverbs* to create (default all four); null: no /dev/infiniband at all. */
  uverbs?: string[] | null;
  nvidia?: string[];
  /** Also the kernel's /sys/class/infiniband_verbs (default true). */
  verbsClass?: boolean;
  /** Drop /sys/class/infiniband (a container that hides the adapters). */
  hideHcas?: boolean;
  /** Another generated node (default the 4x V100); its adapters get uverbs0.. in PCI order, its GPUs nvidia0... */
  node?: GenNode;
  /** Write each GPU's /proc/driver/nvidia/gpus/<BDF>/information with these minors (PCI order); [] for the identity. */
  minors?: number[];
  /** Write /proc/self/status with these placement lists. */
  status?: { cpus: string; mems: string };
}

export async function jobRoot(o: JobRootOptions = {}, into?: string): Promise<string> {
  const dir = into ?? (await scratchDirAsync('gdrgate-jobroot-'));
  const node: GenNode = { ...structuredClone(o.node ?? V100), memlockKiB: o.memlockKiB ?? 'unlimited', peermem: true };
  await buildTree(dir, node);
  const hcas = o.node ? allDevices(node).flatMap((d) => (d.ib ? [d.ib.name] : [])) : HCAS;
  const uverbs = hcas.map((_, i) => `uverbs${i}`);
  const gpus = allDevices(node).filter((d) => d.kind === 'gpu').length;
  if (o.minors) await writeNvidiaGpus(dir, node, o.minors.length ? o.minors : undefined);
  if (o.status) fs.writeFileSync(path.join(dir, 'proc/self/status'), statusText(o.status.cpus, o.status.mems));
  if (o.hideHcas) fs.rmSync(path.join(dir, 'sys/class/infiniband'), { recursive: true });
  if (o.verbsClass ?? true)
    uverbs.forEach((u, i) => {
      fs.mkdirSync(path.join(dir, 'sys/class/infiniband_verbs', u), { recursive: true });
      fs.writeFileSync(path.join(dir, 'sys/class/infiniband_verbs', u, 'ibdev'), `${hcas[i]}\n`);
    });
  const uv = o.uverbs === undefined ? uverbs : o.uverbs;
  fs.mkdirSync(path.join(dir, 'dev'), { recursive: true });
  if (uv !== null) {
    fs.mkdirSync(path.join(dir, 'dev/infiniband'), { recursive: true });
    for (const u of [...uv, 'rdma_cm']) fs.writeFileSync(path.join(dir, 'dev/infiniband', u), '', { mode: 0o666 });
  }
  for (const n of o.nvidia ?? (o.node ? ['nvidia-uvm', 'nvidiactl', ...Array.from({ length: gpus }, (_, i) => `nvidia${i}`)] : NVIDIA)) fs.writeFileSync(path.join(dir, 'dev', n), '', { mode: 0o666 });
  fs.mkdirSync(path.join(dir, 'dev/nvidia-caps'), { recursive: true });
  // Modes as udev leaves them, whatever the umask was.
  for (const d of ['dev', 'dev/infiniband']) if (fs.existsSync(path.join(dir, d))) for (const f of fs.readdirSync(path.join(dir, d))) {
    const p = path.join(dir, d, f);
    if (fs.lstatSync(p).isFile()) fs.chmodSync(p, 0o666);
  }
  return dir;
}
