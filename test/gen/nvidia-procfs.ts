// Test-side: what the NVIDIA kernel module and fs/proc add to a generated tree for the job view:
// /proc/driver/nvidia/gpus/<BDF>/information (the layout of the real H200's, examples/h200-vm) with the minors
// given, and /proc/self/status from the real H200 capture with its placement lines replaced.
import { promises as fsp, readFileSync } from 'node:fs';
import path from 'node:path';
import { H200 } from '../helpers/paths.js';
import { allDevices, type GenNode } from './sysfs-tree.js';

export function informationText(bdf: string, minor: number, model = 'NVIDIA H100 80GB HBM3'): string {
  return [`Model: \t\t ${model}`, 'IRQ:   \t\t 41', `GPU UUID: \t GPU-29ebba22-543a-0d15-b7fe-${(0xad06b2dcb2a0 + minor).toString(16)}`, 'Video BIOS: \t 96.00.a5.00.1a', 'Bus Type: \t PCIe', 'DMA Size: \t 52 bits', 'DMA Mask: \t 0xfffffffffffff', `Bus Location: \t ${bdf}`, `Device Minor: \t ${minor}`, 'GPU Firmware: \t 580.159.04', 'GPU Excluded:\t No', ''].join('\n');
}

/** The real capture's status with Cpus_allowed_list / Mems_allowed_list (and their masks' lines dropped) replaced. */
export function statusText(cpus: string, mems: string): string {
  const real = readFileSync(path.join(H200, 'proc/self/status'), 'utf8');
  return real
    .split('\n')
    .filter((l) => !/^(Cpus|Mems)_allowed:/.test(l))
    .map((l) => (l.startsWith('Cpus_allowed_list:') ? `Cpus_allowed_list:\t${cpus}` : l.startsWith('Mems_allowed_list:') ? `Mems_allowed_list:\t${mems}` : l))
    .join('\n');
}

/** `minors[i]`: the minor of the i-th GPU in PCI order (default 0, 1, …). */
export async function writeNvidiaGpus(dir: string, node: GenNode, minors?: readonly number[]): Promise<void> {
  const gpus = allDevices(node).filter((d) => d.kind === 'gpu').map((d) => d.bdf).sort();
  for (const [i, bdf] of gpus.entries()) {
    const p = path.join(dir, 'proc/driver/nvidia/gpus', bdf, 'information');
    await fsp.mkdir(path.dirname(p), { recursive: true });
    await fsp.writeFile(p, informationText(bdf, minors?.[i] ?? i));
  }
}
