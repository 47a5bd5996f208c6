// How slurmd on this node numbers its GPUs, from gres.conf and the device minors (the rules: state/gpu-order.ts).
// Loaded by the Prolog only: it needs the gres.conf node matching of the job-placement check.
import { forNode } from '../checks/job-placement.js';
import type { Host } from '../host/host.js';
import { readMinors } from '../inventory/placement.js';
import type { Fact } from '../model/fact.js';
import type { Placement } from '../model/inventory.js';
import { deviceMinor, type GresConf } from '../parsers/gres-conf.js';
import { agreedOrder, byBdf, type GpuOrder, pciOrder, type SlurmGpu } from './gpu-order.js';

export interface OrderInput {
  readonly gres: Fact<GresConf>;
  readonly gresPath: string;
  readonly minors: Fact<ReadonlyMap<number, string>>;
  /** slurmd's NodeName (SLURMD_NODENAME), for the gres.conf lines that name nodes. */
  readonly node: string | null;
}

/**
 * The AutoDetect= values whose numbering is derived, and the order slurmd leaves the GPUs in (gres_gpu.c, after
 * _merge_system_gres_conf: sorted by File= in natural order, then by Links). nvml (gpu/nvml) gives each GPU its Links,
 * in the order NVML enumerates, PCI bus order. nvidia (gpu/nvidia, 24.11+: /proc/driver/nvidia/gpus, no library)
 * gives none, so the sort by Links keeps every GPU where it is (glibc's qsort is a merge sort, stable): /dev/nvidiaN
 * in natural order, by minor.
 */
const DETECTED = {
  nvml: { order: 'PCI bus order', by: byBdf },
  nvidia: { order: 'the order of their device minors (/dev/nvidiaN)', by: (a: SlurmGpu, b: SlurmGpu) => a.minor - b.minor },
} as const;

/** How slurmd on this node numbers its GPUs. */
export function slurmGpuOrder(i: OrderInput): GpuOrder {
  const m = i.minors;
  if (m.state !== 'present') return { ok: false, why: m.state === 'unknown' ? m.why : 'no /proc/driver/nvidia/gpus: no GPU to number' };
  const g = i.gres;
  if (g.state !== 'present') return agreedOrder(m.value, g.state === 'unknown' ? `gres.conf not usable: ${g.why}` : `no ${i.gresPath}`);
  // A node's own AutoDetect= trumps the global one (man gres.conf); differing values for one node: not derived.
  const mine = g.value.autoDetects.filter((a) => a.nodeName !== null && forNode(a, i.node));
  const vals = new Set((mine.length ? mine : g.value.autoDetects.filter((a) => a.nodeName === null)).map((a) => a.value));
  if (vals.size > 1) return agreedOrder(m.value, `${i.gresPath} gives this node AutoDetect=${[...vals].join(' and ')}`);
  const ad = vals.size ? [...vals][0]! : null;
  const known = ad !== null && Object.hasOwn(DETECTED, ad);
  if (ad !== null && ad !== 'off' && !known) return agreedOrder(m.value, `${i.gresPath} AutoDetect=${ad}: Slurm's numbering is not derived for it`);
  const detected = known ? { ad: ad!, ...DETECTED[ad as keyof typeof DETECTED] } : null;
  const lines = g.value.lines.filter((l) => l.name === 'gpu' && forNode(l, i.node));
  if (detected && !lines.length) return { ok: true, how: `${i.gresPath} AutoDetect=${detected.ad}: Slurm numbers the GPUs in ${detected.order}`, gpus: pciOrder(m.value).sort(detected.by) };
  if (!lines.length) return agreedOrder(m.value, `${i.gresPath} has no GPU line for this node`);
  const bare = lines.find((l) => !l.files.length);
  // With AutoDetect, lines slurmd matches to the GPUs it found: a line without File= is matched some other way.
  if (bare) return detected ? { ok: false, why: `${i.gresPath} AutoDetect=${detected.ad} with line ${bare.line} naming no File=: Slurm's numbering is not derived for it` } : agreedOrder(m.value, `${i.gresPath} line ${bare.line} names no File=`);
  const gpus: SlurmGpu[] = [];
  for (const l of [...lines.filter((x) => !x.nodeFirst), ...lines.filter((x) => x.nodeFirst)]) {
    for (const f of l.files) {
      const n = deviceMinor(f);
      const bdf = n === null ? undefined : m.value.get(n);
      const why = n === null || bdf === undefined ? `${f} is ${n !== null ? 'no GPU of this node' : 'not a /dev/nvidiaN node'}` : gpus.some((x) => x.minor === n) ? `${f} twice` : null;
      // Under AutoDetect such a line is kept beside the GPUs found (a GPU of the config only): which index is whose, not known.
      if (why !== null) return detected ? { ok: false, why: `${i.gresPath} AutoDetect=${detected.ad}, line ${l.line}: ${why}` } : agreedOrder(m.value, `${i.gresPath} line ${l.line}: ${why}`);
      gpus.push({ bdf: bdf!.toLowerCase(), minor: n! });
    }
  }
  // AutoDetect with File= lines: slurmd keeps the GPUs it finds that the lines name, ignores the others ("The
  // following autodetected GPUs are being ignored", gres_gpu.c _merge_system_gres_conf), then sorts what it kept
  // (DETECTED): a GPU withheld from Slurm takes no index.
  if (detected) return { ok: true, how: `${i.gresPath} AutoDetect=${detected.ad}, File= naming ${gpus.length} of the ${m.value.size} GPUs: Slurm numbers those in ${detected.order}`, gpus: [...gpus].sort(detected.by) };
  return { ok: true, how: `${i.gresPath}: Slurm numbers the GPUs in the order of its File= entries`, gpus };
}


/** The Prolog's call: the inventory reads the minors only for a gres.conf with File= lines; read them here otherwise. */
export async function nodeGpuOrder(host: Host, p: Placement, node: string): Promise<GpuOrder> {
  const minors = p.minors.state === 'absent' ? await readMinors(host) : p.minors;
  return slurmGpuOrder({ gres: p.gres, gresPath: p.gresPath, minors, node });
}
