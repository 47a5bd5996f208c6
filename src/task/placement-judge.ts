// Pure: where the job landed. Each job GPU's local CPUs must meet the task's CPUs (NCCL intersects the process mask
// with the GPU's local CPUs and silently keeps the far mask when that is empty: nccl src/graph/topo.cc
// ncclTopoGetCpuAffinity), its NUMA node must be in the task's memory nodes, and the adapters nearest to it in the
// baseline's matrix (PIX/PXB: the ones GPUDirect RDMA uses by default, NCCL_NET_GDR_LEVEL) must be visible.
import type { BaselinePath } from '../model/baseline.js';
import type { Fact } from '../model/fact.js';
import { PATH_RANK as RANK, type PathClass } from '../model/inventory.js';
import { cpusOverlap } from '../parsers/sysfs.js';
import { tf, type TaskFinding } from './finding.js';
import type { GpuPlace, PlacementView } from './placement.js';
import type { DevNode, JobView } from './view.js';
import type { RecordedAdapter } from '../state/types.js';

export interface PlacementInput {
  readonly place: PlacementView;
  readonly view: JobView;
  /** The class's GPU↔NIC matrix; null when no baseline could be read. */
  readonly paths: readonly BaselinePath[] | null;
  /** The class's adapters, the reference node's name → PCI function (its devices); the matrix names them so. */
  readonly refNics?: ReadonlyMap<string, string> | null;
  /** This node's adapters as the Prolog recorded them (trusted record only). */
  readonly adapters?: readonly RecordedAdapter[] | null;
  /** Without that record: each adapter the job sees → the PCI function its own /sys shows (inventory/placement.ts readAdapterFunctions). */
  readonly functions?: ReadonlyMap<string, Fact<string>> | null;
}

/**
 * The matrix's adapter names (the reference node's) → this node's, by PCI function, as topology-distance pairs them: a
 * node whose mlx5_0 and mlx5_1 swapped names has each path where it was. Null without the class's devices or the record's adapters.
 */
export function hereNames(i: Pick<PlacementInput, 'refNics' | 'adapters'>): ReadonlyMap<string, string> | null {
  if (!i.refNics || !i.adapters) return null;
  const byBdf = new Map(i.adapters.flatMap((a) => (a.bdf !== null ? [[a.bdf, a.name] as const] : [])));
  return new Map([...i.refNics].flatMap(([ref, bdf]) => { const here = byBdf.get(bdf); return here !== undefined ? [[ref, here] as const] : []; }));
}

/** A matrix adapter in the job's own view: this node's name for it, hidden (its PCI function), or not to be told (why). */
export type Seen = { readonly name: string } | { readonly hidden: string } | { readonly untold: string };

/**
 * Without a trusted record: the matrix's adapter names → this node's, by the PCI function the job's own /sys shows for
 * each adapter it sees. One at a function no visible adapter has is hidden, unless a visible adapter's function could
 * not be read (that one may be it: untold). One the class gives no function keeps its name. Null when not read.
 */
export function seenNames(i: Pick<PlacementInput, 'refNics' | 'functions'>): ReadonlyMap<string, Seen> | null {
  if (!i.refNics || !i.functions) return null;
  const fns = [...i.functions];
  const byBdf = new Map(fns.flatMap(([n, f]) => (f.state === 'present' ? [[f.value, n] as const] : [])));
  const untold = fns.flatMap(([n, f]) => (f.state === 'unknown' ? [`the PCI function of ${n} could not be read (${f.why})`] : []));
  return new Map([...i.refNics].map(([ref, bdf]): [string, Seen] => {
    const here = byBdf.get(bdf);
    return [ref, here !== undefined ? { name: here } : untold.length ? { untold: untold.join(', ') } : { hidden: bdf }];
  }));
}

/**
 * Which of `missing` (this node's adapter names) the job has through another function of the same card: an SR-IOV VF
 * and its PF are one card (the record's pf), and a container given the PF alone (enroot's MELLANOX_VISIBLE_DEVICES
 * naming the PFs, where the VFs are bound to mlx5_core too) or a VF alone can use the card next to the GPU. Missing
 * name → the adapter the job uses instead. A function with no PCI function recorded is a card of none.
 */
export function throughSibling(missing: readonly string[], adapters: readonly RecordedAdapter[] | null | undefined, usable: (name: string) => boolean): ReadonlyMap<string, string> {
  const out = new Map<string, string>();
  if (!missing.length || !adapters?.length) return out;
  const card = new Map(adapters.flatMap((a) => (a.bdf !== null ? [[a.name, a.pf ?? a.bdf] as const] : [])));
  const byCard = new Map<string, string[]>();
  for (const [n, c] of card) byCard.set(c, [...(byCard.get(c) ?? []), n]);
  for (const m of missing) {
    const c = card.get(m);
    const via = c === undefined ? undefined : byCard.get(c)!.find((x) => x !== m && usable(x));
    if (via !== undefined) out.set(m, via);
  }
  return out;
}

/** The adapters at the GPU's best class, when that class is PIX or PXB (through a PCIe switch). */
export function nearestNics(paths: readonly BaselinePath[], bdf: string): { readonly cls: PathClass; readonly nics: readonly string[] } | null {
  const mine = paths.filter((p) => p.gpu === bdf);
  if (!mine.length) return null;
  const best = mine.reduce((a, p) => (RANK[p.class] < RANK[a] ? p.class : a), mine[0]!.class);
  return RANK[best] <= RANK.PXB ? { cls: best, nics: mine.filter((p) => p.class === best).map((p) => p.nic).sort() } : null;
}

const gpuName = (g: GpuPlace): string => `GPU ${g.id} (${g.bdf})`;

function cpus(i: PlacementInput, g: GpuPlace): TaskFinding[] {
  const a = i.place.allowed;
  if (a.state !== 'present') return [tf('job-placement-unknown', 'skip', gpuName(g), a.state === 'unknown' ? a.why : '/proc/self/status: absent')];
  const out: TaskFinding[] = [];
  // Nothing to compare is never "near": a local_cpulist the job cannot read (or an empty one) is said, not passed.
  if (g.localCpus.state !== 'present') out.push(tf('job-placement-unknown', 'skip', gpuName(g), g.localCpus.state === 'unknown' ? g.localCpus.why : `the local CPUs of ${gpuName(g)} could not be read (no /sys/bus/pci/devices/${g.bdf}/local_cpulist in this job)`));
  else if (!g.localCpus.value.length) out.push(tf('job-placement-unknown', 'skip', gpuName(g), `the local CPUs of ${gpuName(g)} are an empty list: not compared`));
  else if (!cpusOverlap(g.localCpus.value, a.value.cpus))
    out.push(tf('job-cpus-far', 'warn', gpuName(g), `this job's CPUs ${a.value.cpuList} are all away from ${gpuName(g)}, whose local CPUs are ${g.localCpuList}`, g.localCpuList ?? '', a.value.cpuList));
  if (g.numa.state === 'unknown') out.push(tf('job-placement-unknown', 'skip', gpuName(g), g.numa.why));
  else if (g.numa.state === 'present' && !cpusOverlap(a.value.mems, [[g.numa.value, g.numa.value]]))
    out.push(tf('job-mems-far', 'warn', gpuName(g), `this job's memory may only come from NUMA node(s) ${a.value.memList}, not from node ${g.numa.value} of ${gpuName(g)}`, String(g.numa.value), a.value.memList));
  return out;
}

/** A verbs node the job may open: access(2) said yes. One it could not tell (a dangling link: ENOENT) is neither usable nor denied. */
const rw = (n: DevNode | undefined): boolean => n !== undefined && n.access === 'rw';

function nics(i: PlacementInput, g: GpuPlace): TaskFinding[] {
  // Which adapters are next to the GPU is the baseline's matrix: without it, say that this part was not checked.
  if (i.paths === null) return [tf('job-placement-unknown', 'skip', gpuName(g), `the adapters next to ${gpuName(g)} were not checked: no baseline class (its GPU↔NIC matrix says which they are)`)];
  if (!i.paths.some((p) => p.gpu === g.bdf)) return [tf('job-placement-unknown', 'skip', gpuName(g), `the adapters next to ${gpuName(g)} were not checked: the baseline class's GPU↔NIC matrix has no row for ${g.bdf}`)];
  const ref = nearestNics(i.paths, g.bdf);
  // The GPU's best class is PHB or farther: no adapter is next to it, nothing a job must see.
  if (!ref) return [];
  // This node's names of the adapters the matrix names: by the record's PCI functions (one with nothing at its address:
  // the adapter that carries the name), else by those the job's /sys shows, where an adapter at none is hidden.
  const here = hereNames(i);
  const byFn = here ? null : seenNames(i);
  const refAt = (n: string, more = ''): string => `${i.refNics!.get(n)!} (${n} on the reference node${more})`;
  const { hcas, uverbs } = i.view;
  if (hcas.state === 'unknown' || uverbs.state === 'unknown' || i.place.verbsOf.state === 'unknown') return [tf('job-placement-unknown', 'skip', gpuName(g), hcas.state === 'unknown' ? hcas.why : uverbs.state === 'unknown' ? uverbs.why : (i.place.verbsOf as { why: string }).why)];
  // A matrix adapter at no function the job shows, beside an adapter whose function it does not show: that one may be it.
  const unplaced = ref.nics.flatMap((n) => { const s = byFn?.get(n); return s && 'untold' in s ? [{ n, why: s.untold }] : []; });
  if (unplaced.length) return [tf('job-placement-unknown', 'skip', gpuName(g), `whether this job has the ${ref.cls} adapter${unplaced.length > 1 ? 's' : ''} next to ${gpuName(g)} cannot be told: no adapter in its /sys/class/infiniband is at ${unplaced.map((u) => refAt(u.n)).join(' or ')}, and ${unplaced[0]!.why}`)];
  const gone = ref.nics.filter((n) => { const s = byFn?.get(n); return s !== undefined && 'hidden' in s; });
  const near = { cls: ref.cls, nics: [...new Set(ref.nics.flatMap((n) => { const s = byFn?.get(n); return s === undefined ? [here?.get(n) ?? n] : 'name' in s ? [s.name] : []; }))].sort() };
  // The job's /sys names each adapter's uverbs node; where a container hid that class, the Prolog's record does.
  const recorded = new Map((i.adapters ?? []).flatMap((a) => (a.uverbs ? [[a.name, a.uverbs] as const] : [])));
  const seen = i.place.verbsOf.state === 'present' ? i.place.verbsOf.value : new Map<string, string>();
  const verbsOf = new Map([...recorded, ...seen]);
  // access(2) answered neither yes nor no (ENOENT of a dangling link, ELOOP…): whether the adapter is usable cannot be told.
  const untold = near.nics.flatMap((n) => { const u = verbsOf.get(n); const d = u === undefined ? undefined : uverbs.value.find((x) => x.name === u); return hcas.value.includes(n) && d?.access === 'unknown' ? [`/dev/infiniband/${d.name} (${d.why ?? 'access unknown'})`] : []; });
  if (untold.length) return [tf('job-placement-unknown', 'skip', gpuName(g), `whether this job can use the adapters next to ${gpuName(g)} could not be told: access(2) of ${untold.join(', ')} answered neither yes nor no`)];
  const usable = (n: string): boolean => {
    const u = verbsOf.get(n);
    return hcas.value.includes(n) && u !== undefined && rw(uverbs.value.find((d) => d.name === u));
  };
  const hidden = near.nics.filter((n) => !usable(n));
  // Another function of the same card (a VF of the PF it misses, the PF of a VF) carries the GPU's traffic as well.
  const via = throughSibling(hidden, i.adapters, usable);
  const missing = hidden.filter((n) => !via.has(n));
  if (!missing.length && !gone.length) return [];
  const what = (n: string): string => (!hcas.value.includes(n) ? `${n} (no /sys/class/infiniband/${n})` : `${n} (no usable /dev/infiniband/${verbsOf.get(n) ?? 'uverbs node'})`);
  // An adapter at no PCI function the job sees has no name here: said by its function and the reference's name.
  const lost = [...missing.map(what), ...gone.map((n) => `the adapter at ${refAt(n, "; no adapter in this job's /sys/class/infiniband is at that PCI function")}`)];
  const all = [...near.nics, ...gone.map((n) => refAt(n))];
  return [tf('job-nic-hidden', 'fail', gpuName(g), `this job cannot use ${lost.join(', ')}, the ${near.cls} adapter${lost.length > 1 ? 's' : ''} next to ${gpuName(g)}`, all.join(', '), near.nics.filter((n) => !missing.includes(n)).join(', ') || 'none')];
}

export function judgePlacement(i: PlacementInput): TaskFinding[] {
  // No SLURM_JOB_GPUS: the job asked for no GPU, or Slurm did not say which; either way nothing was judged, and that is said.
  const sel = i.place.sel;
  if (sel?.from === 'SLURM_STEP_GPUS' && !sel.ids.length) return [tf('job-placement-unknown', 'skip', 'job', `not checked: Slurm gave this step no GPU (as for srun --gres=none), so its CPUs, memory and adapters are not compared with GPUs`)];
  if (!sel?.ids.length) return [tf('job-placement-unknown', 'skip', 'job', `not checked: no SLURM_JOB_GPUS (the job asked for no GPU, or Slurm did not say which it has), so this job's CPUs, memory and adapters are not compared with its GPUs`)];
  const o = i.place.order;
  const ids = `${sel.from}=${sel.ids.join(',')}`;
  // Slurm's numbers are not device minors: which GPU is meant is never guessed.
  if (!o.ok) return [tf('job-placement-unknown', 'skip', 'job', `not checked: which GPUs Slurm's ${ids} are cannot be told: ${o.why}`)];
  const out: TaskFinding[] = [];
  const unmapped = sel.ids.filter((n) => !i.place.gpus.has(n));
  if (unmapped.length) out.push(tf('job-placement-unknown', 'skip', 'job', `Slurm's GPU ${unmapped.join(', ')} (${ids}) is not among the ${o.gpus.length} GPUs of this node (${o.how})`));
  const gpus = [...i.place.gpus.values()].sort((a, b) => a.id - b.id);
  const near = gpus.flatMap((g) => cpus(i, g));
  const adapters = gpus.flatMap((g) => nics(i, g));
  out.push(...near, ...adapters);
  // A pass only for what was judged: every GPU mapped and its CPUs and memory read; adapters not checked stay skips beside it.
  if (out.some((f) => f.status !== 'skip') || unmapped.length || near.length || gpus.length === 0) return out;
  const a = i.place.allowed.state === 'present' ? i.place.allowed.value : null;
  if (a === null) return out;
  const gs = gpus.map((g) => `${g.id}=${g.bdf}`).join(', ');
  const partly = adapters.length ? ' (the adapters next to them: see the skip lines)' : '';
  return [tf('job-placement-ok', 'pass', 'job', `this job's CPUs ${a.cpuList} and memory nodes ${a.memList} are near its GPUs ${gs}${partly}`), ...out];
}
