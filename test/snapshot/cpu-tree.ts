// Test-side: the CPU topology files a kernel writes (drivers/base/topology.c, fs/proc/cpuinfo) that hwloc needs and the generator leaves out.
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import type { GenNode } from '../gen/sysfs-tree.js';

const cpusOf = (list: string): number[] =>
  list.split(',').filter(Boolean).flatMap((p) => {
    const [a, b = a] = p.split('-').map(Number);
    return Array.from({ length: b! - a! + 1 }, (_, i) => a! + i);
  });

/** bitmap_print_to_pagebuf(false): hex, 32 bits per comma-separated group. */
function mask(cpus: readonly number[], nr: number): string {
  const words: string[] = [];
  for (let w = Math.ceil(nr / 32) - 1; w >= 0; w--) {
    let v = 0;
    for (const c of cpus) if (c >= w * 32 && c < (w + 1) * 32) v |= 1 << (c - w * 32);
    words.push((v >>> 0).toString(16).padStart(8, '0'));
  }
  return words.join(',');
}

async function write(root: string, p: string, text: string): Promise<void> {
  await fsp.mkdir(path.join(root, path.dirname(p)), { recursive: true });
  await fsp.writeFile(path.join(root, p), text);
}

/**
 * One package per NUMA node; SMT siblings are the CPUs at the same position in the node's two ranges
 * ("0-47,96-143": CPU 0 and 96 share a core), as on the two-socket nodes the topologies describe.
 */
export async function writeCpuTopology(root: string, node: GenNode, memKiB = 1056964608): Promise<void> {
  const all = node.numa.flatMap((n) => cpusOf(n.cpus)).sort((a, b) => a - b);
  const nr = all[all.length - 1]! + 1;
  const range = `0-${nr - 1}`;
  for (const f of ['online', 'possible', 'present']) await write(root, `sys/devices/system/cpu/${f}`, `${range}\n`);
  await write(root, 'sys/devices/system/cpu/kernel_max', '8191\n');
  let info = '';
  for (const n of node.numa) {
    const cpus = cpusOf(n.cpus);
    const ranges = n.cpus.split(',').map(cpusOf);
    const perCore = ranges.length;
    for (const c of cpus) {
      const r = ranges.findIndex((x) => x.includes(c));
      const core = ranges[r]!.indexOf(c);
      const siblings = ranges.map((x) => x[core]!).filter((x) => x !== undefined);
      const t = `sys/devices/system/cpu/cpu${c}/topology`;
      await write(root, `${t}/physical_package_id`, `${n.id}\n`);
      await write(root, `${t}/die_id`, '0\n');
      await write(root, `${t}/core_id`, `${core}\n`);
      await write(root, `${t}/core_cpus`, `${mask(siblings, nr)}\n`);
      await write(root, `${t}/thread_siblings`, `${mask(siblings, nr)}\n`);
      await write(root, `${t}/package_cpus`, `${mask(cpus, nr)}\n`);
      await write(root, `${t}/core_siblings`, `${mask(cpus, nr)}\n`);
      await write(root, `${t}/die_cpus`, `${mask(cpus, nr)}\n`);
      info += `processor\t: ${c}\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 143\nmodel name\t: Intel(R) Xeon(R) Platinum 8480+\nphysical id\t: ${n.id}\nsiblings\t: ${cpus.length}\ncore id\t\t: ${core}\ncpu cores\t: ${cpus.length / perCore}\n\n`;
    }
    const kb = Math.floor(memKiB / node.numa.length);
    await write(root, `sys/devices/system/node/node${n.id}/meminfo`, `Node ${n.id} MemTotal:       ${kb} kB\nNode ${n.id} MemFree:        ${kb - 1048576} kB\n`);
  }
  await write(root, 'proc/cpuinfo', info);
}
