// Job-view fixture roots (not a test): a generated sysfs tree (4x V100 + 4 ConnectX-5) plus /dev and
// /sys/class/infiniband_verbs written by hand. /dev nodes are regular files: the task only checks that they
// exist and that access(2) allows read-write, it never opens a device.
import fs from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildTree, type GenNode } from '../gen/sysfs-tree.js';
import { node as V100 } from '../gen/topologies/v100sxm2-4gpu-4nic-pairs.js';

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
}

export async function jobRoot(o: JobRootOptions = {}, into?: string): Promise<string> {
  const dir = into ?? (await mkdtemp(path.join(tmpdir(), 'gdrgate-jobroot-')));
  const node: GenNode = { ...structuredClone(V100), memlockKiB: o.memlockKiB ?? 'unlimited', peermem: true };
  await buildTree(dir, node);
  if (o.hideHcas) fs.rmSync(path.join(dir, 'sys/class/infiniband'), { recursive: true });
  if (o.verbsClass ?? true)
    UVERBS.forEach((u, i) => {
      fs.mkdirSync(path.join(dir, 'sys/class/infiniband_verbs', u), { recursive: true });
      fs.writeFileSync(path.join(dir, 'sys/class/infiniband_verbs', u, 'ibdev'), `${HCAS[i]}\n`);
    });
  const uv = o.uverbs === undefined ? UVERBS : o.uverbs;
  fs.mkdirSync(path.join(dir, 'dev'), { recursive: true });
  if (uv !== null) {
    fs.mkdirSync(path.join(dir, 'dev/infiniband'), { recursive: true });
    for (const u of [...uv, 'rdma_cm']) fs.writeFileSync(path.join(dir, 'dev/infiniband', u), '', { mode: 0o666 });
  }
  for (const n of o.nvidia ?? NVIDIA) fs.writeFileSync(path.join(dir, 'dev', n), '', { mode: 0o666 });
  fs.mkdirSync(path.join(dir, 'dev/nvidia-caps'), { recursive: true });
  // Modes as udev leaves them, whatever the umask was.
  for (const d of ['dev', 'dev/infiniband']) if (fs.existsSync(path.join(dir, d))) for (const f of fs.readdirSync(path.join(dir, d))) {
    const p = path.join(dir, d, f);
    if (fs.lstatSync(p).isFile()) fs.chmodSync(p, 0o666);
  }
  return dir;
}
