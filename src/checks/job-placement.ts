// job-placement, node side: each GPU's Cores= in Slurm's gres.conf must be among its local CPUs, or Slurm binds the
// jobs it places "near" a GPU (--gres-flags=enforce-binding) to the far socket. Cores= are Slurm's abstract core ids
// (man gres.conf), so they are mapped to OS CPUs through the core topology first. The job's own placement (its CPU
// mask, memory nodes, visible adapters) is judged inside the job by `gdrgate task` (src/task/placement-judge.ts).
import { nul } from '../model/fact.js';
import { compilePattern, type HostPattern } from '../baseline/match.js';
import type { CpuRanges } from '../parsers/sysfs.js';
import { deviceMinor, type GresConf, gresAt, type GresLine } from '../parsers/gres-conf.js';
import type { Inventory } from '../model/inventory.js';
import type { Finding } from '../model/finding.js';
import { defineCheck, finder } from './types.js';
import WORDING from './job-placement.json' with { type: 'json' };

// gres-cores-none: a GPU line with nothing to bind by (no Cores=, no AutoDetect), or no GPU line at all. gres-unknown:
// could not tell (gres.conf unusable, minors or core topology unreadable, a File= no GPU has).
const f = finder('job-placement', WORDING.codes);

/** gres.conf's NodeName= hostlists as compiled (null: refused), kept: a Prolog asks of each line more than once. */
const NODE_LISTS = new Map<string, HostPattern | null>();

/** A hostlist's names as slurmd parts them: at commas or blanks outside brackets (`gpu[01-04],dgx7`: two). */
export const hostlistNames = (list: string): string[] => list.match(/(?:[^,\s[]|\[[^\]]*\])+/g) ?? [];

/**
 * Whether a Slurm hostlist (`gpu[01-04],dgx7`) names this node; null: cannot tell. slurmd reads NodeName= as a hostlist
 * only (hostlist_create, hostlist_find), its names parted by commas or blanks: `n*`, `n?`, `/re/` or `!x` are names,
 * never patterns, and name no real node; a bracket that is no list of numbers, or a name too long to compile, cannot
 * be told (slurmd refuses the first).
 */
export function forNode(l: Pick<GresLine, 'nodeName'>, host: string | null): boolean | null {
  if (l.nodeName === null) return true;
  if (host === null) return false;
  let unsure = false;
  for (const name of hostlistNames(l.nodeName)) {
    if (/[*?/!]/.test(name)) continue;
    if (/[[\]]/.test(name) && !/^[^[\]]*(?:\[[0-9,-]+\][^[\]]*)+$/.test(name)) {
      unsure = true;
      continue;
    }
    let p = NODE_LISTS.get(name);
    if (p === undefined) {
      // The matcher reads a hostlist as Slurm does (baseline/match.ts).
      try {
        p = compilePattern(name);
      } catch {
        p = null;
      }
      if (NODE_LISTS.size >= 256) NODE_LISTS.clear(); // bounded: a gres.conf holds a few lines
      NODE_LISTS.set(name, p);
    }
    // Refused: a range upside down names no node, as in slurmd; a name too long for the matcher cannot be told.
    if (p === null) unsure ||= name.length > 256;
    else if (p.test(host)) return true;
  }
  return unsure ? null : false;
}

/** The AutoDetect= values that give slurmd an NVIDIA GPU's CPU affinity (gpu/nvml, gpu/nvidia; full, 26.05, takes them). */
const AFFINITY = new Set(['nvml', 'nvidia', 'full']);

/** A GPU line of gres.conf: Name=gpu in any case, as slurmd matches its plugins (gres.c xstrcasecmp). */
export const isGpuLine = (l: Pick<GresLine, 'name'>): boolean => l.name.toLowerCase() === 'gpu';

/**
 * The AutoDetect= slurmd on `node` runs with: its own (a NodeName= line naming it) trumps the global one, of which the
 * last holds; null: none; 'conflict': two different ones of its own, or a NodeName= that may name it (which holds is
 * not told here).
 */
export function autoDetectFor(g: GresConf, node: string | null): string | null | 'conflict' {
  const local = g.autoDetects.filter((a) => a.nodeName !== null);
  if (local.some((a) => forNode(a, node) === null)) return 'conflict';
  const mine = new Set(local.filter((a) => forNode(a, node) === true).map((a) => a.value));
  if (mine.size > 1) return 'conflict';
  if (mine.size === 1) return [...mine][0]!;
  return g.autoDetects.filter((a) => a.nodeName === null).at(-1)?.value ?? null;
}

/** The CPUs of `a` not in `b`, as ranges; both merged and sorted (parseCpuList): work by ranges, never by CPU. */
function minus(a: CpuRanges, b: CpuRanges): CpuRanges {
  const out: [number, number][] = [];
  let j = 0;
  for (const [x0, y] of a) {
    let x = x0;
    while (j < b.length && b[j]![1] < x) j++;
    for (let k = j; k < b.length && b[k]![0] <= y && x <= y; k++) {
      if (b[k]![0] > x) out.push([x, b[k]![0] - 1]);
      x = Math.max(x, b[k]![1] + 1);
    }
    if (x <= y) out.push([x, y]);
  }
  return out;
}

/** Sorted, adjacent and overlapping ranges joined, as the kernel prints a cpulist. */
function merge(rs: CpuRanges): CpuRanges {
  const out: [number, number][] = [];
  for (const [a, b] of [...rs].sort((x, y) => x[0] - y[0])) {
    const last = out[out.length - 1];
    if (last && a <= last[1] + 1) last[1] = Math.max(last[1], b);
    else out.push([a, b]);
  }
  return out;
}

const cpuText = (r: CpuRanges): string => r.map(([a, b]) => (a === b ? `${a}` : `${a}-${b}`)).join(',');

/**
 * A line's Cores= as OS CPUs, or the first core id this node does not have. Cores= is the site's text (any range up
 * to 2^20): the ids are never expanded; only the node's own cores are walked, so the work is bounded by the node.
 */
function coreCpus(ids: CpuRanges, cores: readonly CpuRanges[]): { readonly beyond: number } | { readonly cpus: CpuRanges } {
  const over = ids.find(([, b]) => b >= cores.length);
  if (over) return { beyond: Math.max(over[0], cores.length) };
  const rs: (readonly [number, number])[] = [];
  for (const [a, b] of ids) for (let i = a; i <= b; i++) rs.push(...cores[i]!);
  return { cpus: merge(rs) };
}

type Line = { readonly kind: 'unknown'; readonly why: string } | { readonly kind: 'beyond'; readonly id: number; readonly n: number } | { readonly kind: 'cpus'; readonly cpus: CpuRanges };

/** What a line's Cores= means on this node, computed once for all its File= entries. */
function lineCores(inv: Inventory, l: GresLine): Line | null {
  if (l.cores === null) return null;
  const { cores } = inv.placement;
  if (cores.state !== 'present') return { kind: 'unknown', why: `core topology not readable (${cores.state === 'unknown' ? cores.why : 'absent'})` };
  const r = coreCpus(l.cores, cores.value);
  return 'beyond' in r ? { kind: 'beyond', id: r.beyond, n: cores.value.length } : { kind: 'cpus', cpus: r.cpus };
}

function judgeLine(inv: Inventory, l: GresLine, autoDetect: string | null): ReturnType<typeof f>[] {
  const { minors } = inv.placement;
  const at = gresAt(l);
  const lc = l.files.length ? lineCores(inv, l) : null;
  return l.files.map((file) => {
    const minor = deviceMinor(file);
    if (minor === null) return f('gres-unknown', 'skip', file, `${at}: ${file} is not a /dev/nvidiaN node`);
    if (minors.state !== 'present') return f('gres-unknown', 'skip', file, `${at}: minors not readable (${minors.state === 'unknown' ? minors.why : 'no /proc/driver/nvidia/gpus'})`);
    const bdf = minors.value.get(minor);
    if (bdf === undefined) return f('gres-unknown', 'skip', file, `${at}: no GPU has device minor ${minor}`);
    if (lc === null) {
      if (autoDetect !== null && AFFINITY.has(autoDetect)) return f('gres-cores-ok', 'pass', bdf, `${file}: no Cores=, AutoDetect=${autoDetect} gives Slurm the GPU's CPU affinity`);
      return f('gres-cores-none', 'warn', bdf, `${at} gives ${file} no Cores=`);
    }
    const local = inv.pci.get(bdf)?.localCpus;
    if (!local || local.state !== 'present') return f('gres-unknown', 'skip', bdf, `${file}: local_cpulist ${local?.state === 'unknown' ? local.why : 'absent'}`);
    if (lc.kind === 'unknown') return f('gres-unknown', 'skip', bdf, `${at}: ${lc.why}`);
    if (lc.kind === 'beyond') return f('gres-cores-far', 'fail', bdf, `${at}: Cores=${l.coresText} for ${file} names core ${lc.id}, this node has ${lc.n} cores`, 'cores of this node', `Cores=${l.coresText}`);
    const links = l.links !== null ? ' (Links= not compared: NVLink is not in sysfs)' : '';
    const far = minus(lc.cpus, local.value);
    const given = `Cores=${l.coresText} (CPUs ${cpuText(lc.cpus)})`;
    if (far.length) return f('gres-cores-far', 'fail', bdf, `${at}: ${file} ${given}, of which CPUs ${cpuText(far)} are not its local CPUs ${cpuText(local.value)}`, cpuText(local.value), given);
    return f('gres-cores-ok', 'pass', bdf, `${file} ${given} within its local CPUs ${cpuText(local.value)}${links}`, cpuText(local.value), given);
  });
}

export default defineCheck('job-placement', WORDING, {
  run({ inv, node }): Finding[] {
    const { gres, gresPath } = inv.placement;
    if (gres.state === 'unknown') return [f('gres-unknown', 'skip', gresPath, `gres.conf not usable: ${gres.why}`)];
    // slurmd keeps the lines whose NodeName= holds its own NodeName (the Prolog's SLURMD_NODENAME), which need not be the host's name.
    const host = node ?? nul(inv.hostname);
    const all = gres.state === 'present' ? gres.value.lines.filter(isGpuLine) : [];
    // A line whose NodeName= cannot be read as slurmd reads it: neither judged nor passed over.
    const unsure = all.filter((l) => forNode(l, host) === null).map((l) => f('gres-unknown', 'skip', gresPath, `${gresAt(l)}: whether NodeName=${l.nodeName} names this node cannot be told`));
    const lines = all.filter((l) => forNode(l, host) === true);
    if (!lines.length && !unsure.length) return [f('gres-na', 'skip', 'node', gres.state === 'absent' ? `no ${gresPath}` : `${gresPath} has no GPU line for this node`)];
    const ad = gres.state === 'present' ? autoDetectFor(gres.value, host) : null;
    return [...unsure, ...lines.flatMap((l) => judgeLine(inv, l, ad === 'conflict' ? null : ad))];
  },
});
