// Pure: the job's view against the host's record for this job (or against itself when there is none).
import { STATUS_RANK } from '../model/finding.js';
import { formatBytes } from '../parsers/limits.js';
import type { StateRead } from '../state/read.js';
import type { Bytes, PrologState } from '../state/types.js';
import { tf, type TaskFinding } from './finding.js';
import { atLeast, jobMemlock } from './memlock.js';
import { hereNames, judgePlacement, nearestNics, type PlacementInput, throughSibling } from './placement-judge.js';
import type { DevNode, JobView } from './view.js';

export interface MemlockMin {
  readonly value: Bytes;
  /** Where the minimum came from, for the report. */
  readonly from: string;
}

export interface JudgeInput {
  readonly view: JobView;
  /** SLURM_RLIMIT_MEMLOCK as the TaskProlog's environment has it. */
  readonly rlimitMemlock: string | undefined;
  /** null in --standalone (no Slurm, no host record). */
  readonly state: StateRead | null;
  readonly min: MemlockMin;
  /** Where the job landed; absent: not read (placement is then not judged). */
  readonly placement?: Omit<PlacementInput, 'view'> | undefined;
}

/** The minimum, best source first: the class the Prolog judged with, the baseline, slurmd's own limit, unlimited. */
export function resolveMin(state: StateRead | null, baselineMin: Bytes | null): MemlockMin {
  const s = state?.status === 'trusted' ? state.state : null;
  if (s?.memlockMin != null) return { value: s.memlockMin, from: 'baseline class (recorded by the Prolog)' };
  if (baselineMin !== null) return { value: baselineMin, from: 'baseline class' };
  if (s?.memlock) return { value: s.memlock.soft, from: `${s.memlock.who}'s limit (recorded by the Prolog)` };
  return { value: 'unlimited', from: 'default (no baseline)' };
}

function memlock(i: JudgeInput): TaskFinding {
  if (i.view.self.state === 'unknown') return tf('job-memlock-unknown', 'skip', 'job', `memlock not readable: ${i.view.self.why}`);
  const jm = jobMemlock(i.view.self.value, i.rlimitMemlock);
  if (!jm.ok) return tf('job-memlock-unknown', 'skip', 'job', jm.error);
  const { soft, hard, source } = jm.value;
  const want = `>= ${formatBytes(i.min.value)}`;
  const both = soft === hard ? formatBytes(soft) : `${formatBytes(soft)} (hard ${formatBytes(hard)})`;
  if (atLeast(soft, i.min.value) && atLeast(hard, i.min.value)) return tf('job-memlock-ok', 'pass', 'job', `memlock is ${both} in this job`, want, both);
  // The soft limit is what registration meets; the hard one is named only when it is too low as well.
  const got = atLeast(hard, i.min.value) ? formatBytes(soft) : both;
  return tf(source === 'propagated' ? 'job-memlock-propagated' : 'job-memlock-low', 'fail', 'job', `memlock is ${got} in this job`, want, got);
}

const list = (xs: readonly string[]): string => xs.join(', ');
/** Nodes access(2) refused are a fail; nodes it answered neither yes nor no about (a dangling link: ENOENT) are a
 * skip naming the errno, never counted as usable. */
function denied(nodes: readonly DevNode[], dir: string, code: 'job-uverbs-denied' | 'job-gpu-denied'): TaskFinding[] {
  const bad = nodes.filter((n) => n.access === 'denied');
  const untold = nodes.filter((n) => n.access === 'unknown');
  return [
    ...(bad.length ? [tf(code, 'fail', dir, `this job cannot open ${list(bad.map((n) => `${dir}/${n.name}`))} read-write (${bad[0]!.why ?? 'denied'})`)] : []),
    ...(untold.length ? [tf('job-view-unknown', 'skip', dir, `whether this job can open ${list(untold.map((n) => `${dir}/${n.name} (${n.why ?? 'unknown'})`))} read-write could not be told: access(2) answered neither yes nor no`)] : []),
  ];
}

/** The device nodes of the judged GPUs (/dev/nvidia<minor> of each, through Slurm's order); null: the job has no GPU. */
type GpuNodes = { readonly ok: true; readonly names: readonly string[] } | { readonly ok: false; readonly why: string } | null;

function gpuNodesOf(p: JudgeInput['placement']): GpuNodes {
  const sel = p?.place.sel;
  if (!p || !sel?.ids.length) return null;
  const o = p.place.order;
  if (!o.ok) return { ok: false, why: o.why };
  return { ok: true, names: sel.ids.flatMap((id) => (o.gpus[id] ? [`nvidia${o.gpus[id].minor}`] : [])) };
}

/**
 * The adapters this job's GPUs use (each one's nearest, PIX or PXB, in the class's matrix, by this node's names) and
 * which adapter each uverbs node is, both from the Prolog's record (root's view: a container may hide the adapters it
 * does not show from /sys/class/infiniband and /sys/class/infiniband_verbs alike, as enroot's 99-mellanox.sh does).
 * A container may hold only the adapters of its GPUs, and one next to none of them is not this job's to miss. Known
 * only when every GPU the job was given is mapped, has an adapter next to it, and each of those is found in the
 * record by its PCI function; null otherwise, and every adapter of the host is then required.
 */
interface Needed {
  readonly nics: ReadonlySet<string>;
  /** uverbs node → its adapter (the record's). */
  readonly adapterOf: ReadonlyMap<string, string>;
}

function neededAdapters(p: JudgeInput['placement'], s: PrologState): Needed | null {
  const sel = p?.place.sel;
  const here = p ? hereNames({ refNics: p.refNics ?? null, adapters: s.adapters ?? null }) : null;
  if (!p?.paths || !sel?.ids.length || !here || !s.adapters) return null;
  const nics = new Set<string>();
  for (const id of sel.ids) {
    const g = p.place.gpus.get(id);
    const near = g ? nearestNics(p.paths, g.bdf) : null;
    if (!near) return null;
    for (const n of near.nics) {
      const name = here.get(n);
      if (name === undefined) return null;
      nics.add(name);
    }
  }
  return { nics, adapterOf: new Map(s.adapters.flatMap((a) => (a.uverbs ? [[a.uverbs, a.name] as const] : []))) };
}

/**
 * What the job misses, split into what it needs, the adapters that are not its GPUs' and those it has through
 * another function of their card (`via`: missing adapter → the one it uses; by name, for the report).
 */
function split<T extends string>(miss: readonly T[], adapter: (m: T) => string | undefined, need: Needed | null, via: ReadonlyMap<string, string>): { readonly lost: T[]; readonly notMine: string[]; readonly through: string[] } {
  if (!need) return { lost: [...miss], notMine: [], through: [] };
  const lost: T[] = [];
  const notMine: string[] = [];
  const through: string[] = [];
  for (const m of miss) {
    const a = adapter(m);
    if (a !== undefined && !need.nics.has(a)) notMine.push(a);
    else if (a !== undefined && via.has(a)) through.push(a);
    else lost.push(m);
  }
  return { lost, notMine, through };
}

interface Seen {
  readonly found: TaskFinding[];
  /** Adapters of the host the job does not see that are next to none of its GPUs. */
  readonly notMine: readonly string[];
  /** Adapters next to its GPUs it does not see but has through another function of their card → that function. */
  readonly through: ReadonlyMap<string, string>;
}

/** Missing adapters next to the job's GPUs that it has through another function of their card (the record's pf). */
function siblings(v: JobView, s: PrologState, need: Needed | null): ReadonlyMap<string, string> {
  if (!need || v.hcas.state !== 'present' || v.uverbs.state !== 'present') return new Map();
  const hcas = new Set(v.hcas.value);
  const nodes = new Map(v.uverbs.value.map((n) => [n.name, n] as const));
  const uverbsOf = new Map((s.adapters ?? []).flatMap((a) => (a.uverbs ? [[a.name, a.uverbs] as const] : [])));
  const usable = (a: string): boolean => { const u = uverbsOf.get(a); return hcas.has(a) && u !== undefined && nodes.get(u)?.access === 'rw'; };
  return throughSibling([...need.nics].filter((a) => !usable(a)), s.adapters, usable);
}

function againstHost(v: JobView, s: PrologState, gpus: GpuNodes, need: Needed | null): Seen {
  const out: TaskFinding[] = [];
  const notMine = new Set<string>();
  const via = siblings(v, s, need);
  if (v.hcas.state === 'present') {
    const seen = new Set(v.hcas.value);
    const m = split(s.hcas.filter((h) => !seen.has(h)), (h) => h, need, via);
    m.notMine.forEach((a) => notMine.add(a));
    if (m.lost.length) out.push(tf('job-hca-missing', 'fail', '/sys/class/infiniband', `this job sees ${s.hcas.length - m.lost.length - m.notMine.length - m.through.length} of the ${s.hcas.length} RDMA adapters of the host (missing ${list(m.lost)}${need ? ', next to its GPUs' : ''})`, list(s.hcas), list(v.hcas.value)));
  }
  if (v.uverbs.state === 'present') {
    const seen = new Set(v.uverbs.value.map((n) => n.name));
    const m = split(s.uverbs.filter((u) => !seen.has(u)), (u) => need?.adapterOf.get(u), need, via);
    m.notMine.forEach((a) => notMine.add(a));
    if (m.lost.length) out.push(tf('job-uverbs-missing', 'fail', '/dev/infiniband', `this job sees ${s.uverbs.length - m.lost.length - m.notMine.length - m.through.length} of the ${s.uverbs.length} verbs devices of the host (missing ${list(m.lost.map((u) => `/dev/infiniband/${u}`))}${need ? ', of the adapters next to its GPUs or of one the record does not place' : ''})`, list(s.uverbs), list([...seen])));
    out.push(...denied(v.uverbs.value.filter((n) => s.uverbs.includes(n.name)), '/dev/infiniband', 'job-uverbs-denied'));
  }
  if (gpus && v.nvidia.state === 'present') {
    // The task's GPUs' device nodes (Slurm's numbers mapped to minors, never taken as minors), plus the control nodes CUDA opens.
    if (!gpus.ok) out.push(tf('job-view-unknown', 'skip', '/dev', `which /dev/nvidiaN nodes are this job's GPUs cannot be told (not checked): ${gpus.why}`));
    const want = [...(gpus.ok ? gpus.names : []), 'nvidiactl', 'nvidia-uvm'].filter((n) => s.nvidia.includes(n));
    const seen = new Set(v.nvidia.value.map((n) => n.name));
    const miss = want.filter((n) => !seen.has(n));
    if (miss.length) out.push(tf('job-gpu-missing', 'fail', '/dev', `this job sees ${want.length - miss.length} of the ${want.length} NVIDIA device nodes of its GPUs (missing ${list(miss.map((n) => `/dev/${n}`))})`, list(want), list([...seen])));
    out.push(...denied(v.nvidia.value.filter((n) => want.includes(n.name)), '/dev', 'job-gpu-denied'));
  }
  return { found: out, notMine: [...notMine].sort(), through: via };
}

/**
 * Without the host's record, the GPU nodes judged are those againstHost judges: the job's own (through Slurm's order)
 * and the control nodes. Slurm's ConstrainDevices (cgroup v1's list, v2's BPF program) leaves other jobs' /dev/nvidiaN
 * in /dev and access(2) answers EPERM for them: not the job's to open. A denied GPU node the order cannot place is a
 * skip; a job Slurm gave no GPU is judged for none; outside Slurm (standalone, no GPU list) every node, as before.
 */
function selfNvidia(nodes: readonly DevNode[], gpus: GpuNodes, standalone: boolean): TaskFinding[] {
  if (gpus === null) return standalone ? denied(nodes, '/dev', 'job-gpu-denied') : [];
  const want = [...(gpus.ok ? gpus.names : []), 'nvidiactl', 'nvidia-uvm'];
  const untold = gpus.ok ? [] : nodes.filter((n) => /^nvidia\d+$/.test(n.name) && n.access === 'denied');
  const why = gpus.ok ? '' : gpus.why;
  return [
    ...denied(nodes.filter((n) => want.includes(n.name)), '/dev', 'job-gpu-denied'),
    ...(untold.length ? [tf('job-view-unknown', 'skip', '/dev', `whether ${list(untold.map((n) => `/dev/${n.name}`))} (denied: ${untold[0]!.why ?? 'denied'}) ${untold.length > 1 ? 'are' : 'is'} among this job's GPUs cannot be told (not judged): ${why}`)] : []),
  ];
}

/** Without the host's record: the job's view must at least agree with itself. */
function selfConsistent(v: JobView, standalone: boolean, gpus: GpuNodes): Seen {
  const out: TaskFinding[] = [];
  if (v.verbsClass.state === 'present' && v.uverbs.state === 'present') {
    const seen = new Set(v.uverbs.value.map((n) => n.name));
    const miss = v.verbsClass.value.filter((u) => !seen.has(u));
    if (miss.length) out.push(tf('job-uverbs-missing', 'fail', '/dev/infiniband', `the kernel has verbs devices ${list(miss)} (/sys/class/infiniband_verbs) but this job has no /dev/infiniband node for them`, list(v.verbsClass.value), list([...seen])));
  }
  if (v.uverbs.state === 'present') out.push(...denied(v.uverbs.value, '/dev/infiniband', 'job-uverbs-denied'));
  if (v.nvidia.state === 'present') out.push(...selfNvidia(v.nvidia.value, gpus, standalone));
  if (standalone && v.hcas.state === 'present' && v.hcas.value.length === 0) out.push(tf('job-no-rdma', 'warn', '/sys/class/infiniband', 'no RDMA adapter is visible (/sys/class/infiniband is empty or absent)'));
  return { found: out, notMine: [], through: new Map() };
}

function visibility(i: JudgeInput): TaskFinding[] {
  const v = i.view;
  const unknown = [v.hcas, v.verbsClass, v.uverbs, v.nvidia].flatMap((k) => (k.state === 'unknown' ? [tf('job-view-unknown', 'skip', 'job', k.why)] : []));
  const trusted = i.state?.status === 'trusted' ? i.state.state : null;
  const need = trusted ? neededAdapters(i.placement, trusted) : null;
  const { found, notMine, through } = trusted ? againstHost(v, trusted, gpuNodesOf(i.placement), need) : selfConsistent(v, i.state === null, gpuNodesOf(i.placement));
  if (found.length) return [...found, ...unknown];
  const n = (k: JobView['hcas'] | JobView['uverbs'] | JobView['nvidia']): string => (k.state === 'present' ? String(k.value.length) : '?');
  const mine = notMine.length ? `; not ${list(notMine)}, next to none of its GPUs (next to them: ${list([...need!.nics].sort())})` : '';
  const cards = [...new Set(through.values())].sort().map((u) => `${list([...through].filter(([, x]) => x === u).map(([m]) => m).sort())} through ${u}`);
  const one = cards.length ? `; ${cards.join('; ')} (other functions of one card)` : '';
  return [tf('job-visibility-ok', 'pass', 'job', `this job sees ${n(v.hcas)} RDMA adapters, ${n(v.uverbs)} verbs devices, ${n(v.nvidia)} NVIDIA device nodes${mine}${one}`), ...unknown];
}

function stateFinding(s: StateRead | null): TaskFinding[] {
  if (s === null) return [];
  switch (s.status) {
    case 'trusted':
      return [tf('job-state-ok', 'pass', 'prolog.json', `host record of job ${s.state.job} verifies`)];
    case 'missing':
      return [tf('job-state-missing', 'skip', 'prolog.json', `no host record for this job: ${s.why}`)];
    case 'untrusted':
      return [tf('job-state-untrusted', 'error', 'prolog.json', `the host record for this job is untrusted: ${s.why}`)];
    case 'unreadable':
      return [tf('job-state-unreadable', 'skip', 'prolog.json', `the host record for this job could not be read: ${s.why}`)];
  }
}

export function judge(i: JudgeInput): TaskFinding[] {
  const all = [memlock(i), ...visibility(i), ...(i.placement ? judgePlacement({ ...i.placement, view: i.view, adapters: i.state?.status === 'trusted' ? (i.state.state.adapters ?? null) : null }) : []), ...stateFinding(i.state)];
  return all.map((f, k) => [f, k] as const).sort((a, b) => STATUS_RANK[a[0].status] - STATUS_RANK[b[0].status] || a[1] - b[1]).map(([f]) => f);
}
