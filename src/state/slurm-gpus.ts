// How slurmd on this node numbers its GPUs, from gres.conf and the device minors (the rules: state/gpu-order.ts).
// Loaded by the Prolog only: it needs the gres.conf node matching of the job-placement check.
import { autoDetectFor, forNode, isGpuLine } from '../checks/job-placement.js';
import type { Host } from '../host/host.js';
import path from 'node:path';
import { readMinors, readModels } from '../inventory/placement.js';
import { type Fact, present, unknown } from '../model/fact.js';
import type { Placement } from '../model/inventory.js';
import { deviceMinor, type GresConf, gresAt, type GresLine } from '../parsers/gres-conf.js';
import { loadConf } from '../slurm/conf-load.js';
import { type GpuAsk, nodeGpuAsk } from '../slurm/node-gres.js';
import { agreedOrder, byBdf, type GpuOrder, type SlurmGpu } from './gpu-order.js';

export interface OrderInput {
  readonly gres: Fact<GresConf>;
  readonly gresPath: string;
  readonly minors: Fact<ReadonlyMap<number, string>>;
  /** slurmd's NodeName (SLURMD_NODENAME), for the gres.conf lines that name nodes. */
  readonly node: string | null;
  /** What slurm.conf's Gres= asks for on this node (absent: no GPU); not given: not read yet, and read only where the
   * numbering depends on it (under AutoDetect). */
  readonly asked?: Fact<GpuAsk>;
  /** Each GPU's model (the `Model:` of its information file, by minor); not given: not read yet, and read only for a
   * typed Gres= under AutoDetect. */
  readonly models?: Fact<ReadonlyMap<number, string | null>>;
}

/** slurmGpuOrder's answer: an order, or what must be read first (nodeGpuOrder reads it). */
export type OrderResult = GpuOrder | { readonly ok: false; readonly why: string; readonly needs: 'slurm.conf' | 'models' };

/** The type slurmd gives a detected GPU: its model's name lower-cased, blanks made _ (gpu_common_underscorify_tolower). */
const typeOf = (model: string): string => model.toLowerCase().replace(/ /g, '_');

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

/** Keys of a GPU line that leave its place in the numbering as modelled (under AutoDetect; without it Type=, Cores=,
 * CPUs=, Links= and Count= too, checked below). Anything else (Flags=, MultipleFiles=…): not derived. */
const PLAIN = new Set(['nodename', 'name', 'file', 'files']);
const UNDETECTED = new Set([...PLAIN, 'type', 'cores', 'cpus', 'links', 'link', 'count']);

/**
 * How slurmd on this node numbers its GPUs; "not derived" whenever gres.conf holds what is not modelled here, never a
 * guess (the record's order names the job's GPUs to its TaskProlog: a wrong one fails a healthy job). slurm.conf's
 * Gres= for the node is asked for (`needs`) only where it decides which GPUs slurmd keeps; elsewhere it is taken to ask
 * for the GPUs gres.conf names, untyped or of their Type= (docs/task.md).
 */
export function slurmGpuOrder(i: OrderInput): OrderResult {
  const m = i.minors;
  if (m.state !== 'present') return { ok: false, why: m.state === 'unknown' ? m.why : 'no /proc/driver/nvidia/gpus: no GPU to number' };
  const g = i.gres;
  if (g.state === 'absent') return agreedOrder(m.value, `no ${i.gresPath}`);
  const no = (why: string): GpuOrder => ({ ok: false, why: `${i.gresPath}${why}: Slurm's numbering is not derived for it` });
  const noAt = (l: GresLine, why: string): GpuOrder => ({ ok: false, why: `${gresAt(l, i.gresPath)} (${why}): Slurm's numbering is not derived for it` });
  if (g.state === 'unknown') return { ok: false, why: `${i.gresPath} not usable (${g.why}): Slurm's numbering is not derived` };
  const ad = autoDetectFor(g.value, i.node);
  if (ad === 'conflict') return no(' gives this node two AutoDetect= of its own, or one whose NodeName= cannot be told');
  const unsure = g.value.lines.find((l) => isGpuLine(l) && forNode(l, i.node) === null);
  if (unsure) return noAt(unsure, `whether NodeName=${unsure.nodeName} names this node cannot be told`);
  const lines = g.value.lines.filter((l) => isGpuLine(l) && forNode(l, i.node) === true);
  const known = ad !== null && Object.hasOwn(DETECTED, ad);
  if (ad !== null && ad !== 'off' && !known) {
    // rsmi, oneapi, nrt, full (26.05: every plugin it can load), or a value slurmd does not know: not modelled.
    return no(` AutoDetect=${ad}`);
  }
  const detected = known ? { ad: ad!, ...DETECTED[ad as keyof typeof DETECTED] } : null;
  if (detected && !lines.length) return detectedOrder(i, m.value, detected, null);
  if (!lines.length) return agreedOrder(m.value, `${i.gresPath} has no GPU line for this node`);
  const allowed = detected ? PLAIN : UNDETECTED;
  const oddness = (l: GresLine): string | null => {
    const extra = l.keys.filter((k) => !allowed.has(k));
    return l.name !== 'gpu' ? `Name=${l.name}` : !l.files.length ? 'no File=' : extra.length ? extra.map((k) => `${k}=`).join(' ') : null;
  };
  for (const l of lines) {
    const why = oddness(l);
    if (why !== null) return noAt(l, `${why}${detected ? ` under AutoDetect=${detected.ad}` : ''}`);
  }
  // Without AutoDetect, GPUs of several types are numbered type by type in slurm.conf's order, unknown here.
  if (!detected && new Set(lines.map((l) => l.type?.toLowerCase() ?? null)).size > 1) return no(` has GPU lines of several Type= for this node`);
  const gpus: SlurmGpu[] = [];
  for (const l of [...lines.filter((x) => !x.nodeFirst), ...lines.filter((x) => x.nodeFirst)]) {
    for (const f of l.files) {
      const n = deviceMinor(f);
      const bdf = n === null ? undefined : m.value.get(n);
      const why = n === null || bdf === undefined ? `${f} is ${n !== null ? 'no GPU of this node' : 'not a /dev/nvidiaN node'}` : gpus.some((x) => x.minor === n) ? `${f} twice` : null;
      if (why !== null) return noAt(l, why);
      gpus.push({ bdf: bdf!.toLowerCase(), minor: n! });
    }
  }
  // Count=, where given with File=, must say as many.
  const counted = lines.find((l) => l.keys.includes('count') && Number(l.count) !== l.files.length);
  if (counted) return noAt(counted, `Count=${counted.count} for ${counted.files.length} File=`);
  // nvidia: a Slurm before 24.11 knows no such AutoDetect and numbers by File= order, 24.11 on by minor: derived only
  // where the two agree (which Slurm runs is not read here).
  if (detected?.ad === 'nvidia' && [...gpus].sort(DETECTED.nvidia.by).some((x, k) => x !== gpus[k])) return no(` AutoDetect=nvidia with File= not in minor order (Slurm 24.11 and later number by minor, earlier ones by File=)`);
  if (detected) return detectedOrder(i, m.value, detected, gpus);
  return { ok: true, how: `${i.gresPath}: Slurm numbers the GPUs in the order of its File= entries`, gpus };
}

/**
 * Under AutoDetect: which GPUs slurmd keeps, and their order. It splits slurm.conf's untyped Gres=gpu:C into C records
 * of one GPU each (gres.c _merge_gres2, gres_gpu.c _merge_system_gres_conf): first the GPUs gres.conf's lines name
 * (`named`, in the order slurmd reads them), as many as C asks for; where C asks for more, or without lines, file-less
 * records take the GPUs no line names in File= natural order (by minor); the rest are ignored ("The following
 * autodetected GPUs are being ignored"). Then it sorts what it kept (DETECTED). So slurm.conf is read under either
 * AutoDetect: C decides which GPUs are kept, and a typed Gres= (gpu:h100:C) keeps GPUs by their model's name, not by
 * the lines (derived where every GPU's model holds the type and C takes them all).
 */
function detectedOrder(i: OrderInput, minors: ReadonlyMap<number, string>, d: { readonly ad: string; readonly order: string; readonly by: (a: SlurmGpu, b: SlurmGpu) => number }, named: readonly SlurmGpu[] | null): OrderResult {
  const byMinor = (a: SlurmGpu, b: SlurmGpu): number => a.minor - b.minor;
  const all = [...minors].map(([minor, bdf]) => ({ bdf: bdf.toLowerCase(), minor })).sort(byMinor);
  const pool = named ?? all;
  const what = `${i.gresPath} AutoDetect=${d.ad}${named ? `, File= naming ${pool.length} of the ${all.length} GPUs` : ''}`;
  let kept: readonly SlurmGpu[] = pool;
  let asked = '';
  const a = i.asked;
  const no = (why: string): GpuOrder => ({ ok: false, why: `${what}, and slurm.conf's Gres= ${why}: Slurm's numbering is not derived for it` });
  if (a === undefined) return { ok: false, why: `${what}: slurm.conf's Gres= not read`, needs: 'slurm.conf' };
  if (a.state === 'unknown') return no(`for this node cannot be told (${a.why}): which GPUs slurmd keeps depends on it`);
  if (a.state === 'absent' || (!a.value.count && !a.value.types.length)) return no('asks for no GPU on this node');
  const c = a.value.count;
  // Under nvml, more GPUs asked for than the node has: NVML may give slurmd MIG instances as GPUs of their own
  // (gpu_nvml.c; sorted after the whole GPUs, 24.11 on, or by their empty links before), so neither the count nor the
  // order of its records need be the minors': not derived. (gpu/nvidia, AutoDetect=nvidia, sees no MIG instance.)
  if (d.ad === 'nvml' && c > all.length) return no(`asks for ${c} GPUs where ${all.length} are on the bus (under nvml, MIG instances are GPUs of their own to slurmd): its records are not these`);
  if (a.value.types.length) {
    // Typed (gpu:h100:C): gres.conf's untyped lines match no record and are dropped; slurmd keeps the GPUs whose type
    // holds h100 (gres_gpu.c _normalize_sys_gres_types, xstrcasestr), as many as C. Modelled where every GPU's does and
    // C takes them all; which C of more it keeps is not.
    const t = a.value.types;
    if (t.length > 1 || a.value.untyped) return no(`asks for GPUs of several types (gpu:${t.join(', gpu:')}${a.value.untyped ? ', untyped' : ''}), not modelled`);
    const m = i.models;
    if (m === undefined) return { ok: false, why: `${what}: the GPUs' models not read`, needs: 'models' };
    if (m.state !== 'present') return no(`asks for gpu:${t[0]}, and the GPUs' models cannot be read (${m.state === 'unknown' ? m.why : 'no information file'})`);
    const unlike = all.filter((g) => !typeOf(m.value.get(g.minor) ?? '').includes(t[0]!.toLowerCase()));
    if (unlike.length) return no(`asks for gpu:${t[0]}, which the model of ${unlike.map((g) => `/dev/nvidia${g.minor}`).join(', ')} does not name: slurmd keeps only the others, not modelled`);
    if (c < all.length) return no(`asks for ${c} of the ${all.length} GPUs of type ${t[0]}: which it keeps is not modelled`);
    kept = all;
    asked = `, slurm.conf Gres=gpu:${t[0]}:${c}`;
  } else if (d.ad === 'nvml' || pool.length < all.length) {
    kept = c <= pool.length ? pool.slice(0, c) : [...pool, ...all.filter((g) => !pool.some((p) => p.minor === g.minor)).slice(0, c - pool.length)];
    asked = `, slurm.conf Gres=gpu:${c}`;
  }
  const gpus = [...kept].sort(d.by);
  return { ok: true, how: `${what}${asked}: Slurm numbers ${gpus.length === all.length ? 'the GPUs' : `the ${gpus.length} it keeps`} in ${d.order}`, gpus };
}

/**
 * The Prolog's call: the inventory reads the minors only for a gres.conf with File= lines; read them here otherwise.
 * slurm.conf (`conf`: slurmd's own, SLURM_CONF in the Prolog's environment) only where the numbering depends on it.
 */
export async function nodeGpuOrder(host: Host, p: Placement, node: string, conf: string): Promise<GpuOrder> {
  const minors = p.minors.state === 'absent' ? await readMinors(host) : p.minors;
  const input = { gres: p.gres, gresPath: p.gresPath, minors, node };
  let o = slurmGpuOrder(input);
  let asked: Fact<GpuAsk> | undefined;
  if ('needs' in o && o.needs === 'slurm.conf') o = slurmGpuOrder({ ...input, asked: (asked = await readAsk(host, conf, node)) });
  if ('needs' in o && o.needs === 'models') o = slurmGpuOrder({ ...input, asked: asked ?? (await readAsk(host, conf, node)), models: await readModels(host) });
  return plain(o);
}

/** The slurm.conf slurmd reads: SLURM_CONF as slurmd sets it for its Prolog, else beside gres.conf. */
export const slurmConfPath = (env: NodeJS.ProcessEnv, gresPath: string): string =>
  env.SLURM_CONF?.startsWith('/') ? env.SLURM_CONF : path.posix.join(path.posix.dirname(gresPath), 'slurm.conf');

async function readAsk(host: Host, conf: string, node: string): Promise<Fact<GpuAsk>> {
  try {
    const c = await loadConf(host, conf, { trusted: true });
    if (c.problems.length) return unknown(c.problems[0]!);
    const a = nodeGpuAsk(c.entries, node);
    return !a.ok ? unknown(a.error) : a.value === null ? { state: 'absent' } : present(a.value);
  } catch (e) {
    return unknown((e as Error).message);
  }
}

const plain = (o: OrderResult): GpuOrder => ('needs' in o ? { ok: false, why: o.why } : o);
