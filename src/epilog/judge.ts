// Pure: the recent window of each freshly probed path against its baseline band, and the GPU↔NIC diagnosis
// (GPU memory slow while host memory on the same HCA is healthy). Drains come only from sustained `fail`s.
import type { BaselineEnvelope } from '../model/baseline.js';
import type { ProbeOutcome } from '../probes/types.js';
import { subjectOf } from '../probes/types.js';
import { recipeHash } from '../samples/sample.js';
import type { KeyStats, StatsKey } from '../samples/stats.js';
import { sortFindings } from '../checks/catalog.js';
import { bw, type BwFinding } from './finding.js';

type Level = 'pass' | 'warn' | 'fail';
interface Verdict {
  readonly key: StatsKey;
  readonly env: BaselineEnvelope;
  /** null: not judged (the finding says why). */
  readonly level: Level | null;
  readonly p50: number;
  readonly count: number;
  readonly why: BwFinding | null;
}

const keyId = (k: Omit<StatsKey, 'recipeHash'> & { recipeHash: string }): string => [k.probe, k.gpu ?? '', k.nic ?? '', k.direction, k.recipeHash].join('\u0000');
const num = (v: number): string => String(Math.round(v * 100) / 100);

export interface JudgeInput {
  readonly outcomes: readonly ProbeOutcome[];
  /** Windowed stats (recent = last `window` samples) of the whole spool, this run's samples included. */
  readonly stats: readonly KeyStats[];
  /** The node class's envelopes; null when the baseline has none. */
  readonly envelopes: readonly BaselineEnvelope[] | null;
  readonly minSamples: number;
  /** Adapters whose name no longer pairs with their address as in the baseline (renamed.ts): their paths not judged. */
  readonly renamed?: ReadonlyMap<string, string>;
}

export function judge(i: JudgeInput): BwFinding[] {
  const stats = new Map(i.stats.map((s) => [keyId(s.key), s]));
  const envs = new Map((i.envelopes ?? []).map((e) => [keyId({ ...e, recipeHash: recipeHash(e.recipe) }), e]));
  const verdict = (env: BaselineEnvelope): Verdict => {
    const key: StatsKey = { probe: env.probe, gpu: env.gpu, nic: env.nic, direction: env.direction, recipeHash: recipeHash(env.recipe) };
    const st = stats.get(keyId(key));
    const r = st?.recent ?? null;
    const base = { key, env, p50: r?.p50 ?? 0, count: r?.count ?? 0 };
    const subject = subjectOfKey(key);
    const ctx = { probe: key.probe, recipeHash: key.recipeHash };
    const renamed = key.nic === null ? undefined : i.renamed?.get(key.nic);
    if (renamed !== undefined) return { ...base, level: null, why: bw('bw-renamed', 'skip', subject, `not judged against the band of ${key.nic}: ${renamed}`, ctx) };
    if (st && st.unit !== env.unit) return { ...base, level: null, why: bw('bw-unit-mismatch', 'error', subject, `samples in ${st.unit}, band in ${env.unit}`, ctx) };
    if (env.failBelow > env.warnBelow) return { ...base, level: null, why: bw('bw-band-invalid', 'error', subject, `failBelow ${env.failBelow} is above warnBelow ${env.warnBelow}`, ctx) };
    if (!r || r.count < i.minSamples) {
      const seen = (r ? `p50 ${num(r.p50)} ${env.unit} over ${r.count}` : 'no samples') + (st?.future ? ` (${st.future} stamped in the future left out)` : '');
      return { ...base, level: null, why: bw('bw-pending', 'skip', subject, `${seen}; judged from ${i.minSamples} samples on`, ctx) };
    }
    // Sustained: the window's p50 (its middle value: more than half the window) and the newest sample both below the
    // fail band (a fixed path stops draining at once; half a window of busy runs never drains).
    const level: Level = r.p50 < env.failBelow && r.last < env.failBelow ? 'fail' : r.p50 < env.warnBelow ? 'warn' : 'pass';
    return { ...base, level, why: null };
  };
  const out: BwFinding[] = [];
  const fresh = new Map<string, Verdict>();
  // Paths whose run failed this time: what their window says is not what they are now (a counterpart's word only).
  const failedNow = new Set<string>();
  for (const o of i.outcomes) {
    const subject = subjectOf(o.spec);
    if (o.kind === 'failed') failedNow.add(`${o.spec.probe}\u0000${'nic' in o.spec ? o.spec.nic : ''}`);
    if (o.kind === 'failed') out.push(bw('bw-probe-failed', 'error', subject, [o.why, ...o.lines].join('; '), { probe: o.spec.probe }));
    else if (o.kind === 'unusable') out.push(bw('bw-tool-unusable', 'skip', subject, o.why, { probe: o.spec.probe }));
    else if (o.kind === 'budget') out.push(bw('bw-budget', 'skip', subject, o.why, { probe: o.spec.probe }));
    else
      for (const s of o.samples) {
        const id = keyId(s);
        const env = envs.get(id);
        if (!env) out.push(bw('bw-no-envelope', 'skip', subjectOfKey(s), `${s.value} ${s.unit}: no band for recipe ${s.recipeHash}`, { probe: s.probe, recipeHash: s.recipeHash }));
        else if (!fresh.has(id)) fresh.set(id, verdict(env));
      }
  }
  const bad = (v: Verdict | null): v is Verdict => v?.level === 'warn' || v?.level === 'fail';
  const newest = (e: BaselineEnvelope): number => stats.get(keyId({ ...e, recipeHash: recipeHash(e.recipe) }))?.recent?.lastTs ?? -Infinity;
  for (const v of fresh.values()) {
    const c = counterpart(v, envs, newest);
    const other = c && !failedNow.has(`${c.probe}\u0000${c.nic ?? ''}`) ? verdict(c) : null;
    // Both sides of one HCA low: one bw-nic finding, made from the GPU side.
    if (v.key.probe === 'ib-write-host' && bad(v) && bad(other) && fresh.has(keyId(other.key))) continue;
    out.push(...render(v, other));
  }
  return sortFindings(out);
}

function subjectOfKey(k: { gpu: string | null; nic: string | null }): string {
  return k.nic && k.gpu ? `${k.nic}/${k.gpu}` : (k.nic ?? k.gpu ?? 'node');
}

/**
 * The other memory of the same HCA (host for a GPU-memory run and back), to be judged from its own recipe's window: of
 * the class's envelopes for it (an older recipe's may be kept beside the current one), the one measured most recently.
 * The caller leaves it out when its run failed this time.
 */
function counterpart(v: Verdict, envs: ReadonlyMap<string, BaselineEnvelope>, newest: (e: BaselineEnvelope) => number): BaselineEnvelope | null {
  const want = v.key.probe === 'ib-write-gpu' ? 'ib-write-host' : v.key.probe === 'ib-write-host' ? 'ib-write-gpu' : null;
  const all = want ? [...envs.values()].filter((x) => x.probe === want && x.nic === v.key.nic) : [];
  return all.reduce<BaselineEnvelope | null>((best, e) => (best === null || newest(e) > newest(best) ? e : best), null);
}

function render(v: Verdict, other: Verdict | null): BwFinding[] {
  if (v.why) return [v.why];
  const { env, key } = v;
  const subject = subjectOfKey(key);
  const ctx = { probe: key.probe, recipeHash: key.recipeHash };
  const actual = `p50 ${num(v.p50)} ${env.unit} over ${v.count}`;
  const band = `warn < ${num(env.warnBelow)}, fail < ${num(env.failBelow)} ${env.unit}`;
  if (v.level === 'pass') return [bw('bw-ok', 'pass', subject, `${key.probe} ${actual} (band: ${band})`, { ...ctx, actual })];
  const otherBad = key.probe === 'ib-write-gpu' && (other?.level === 'warn' || other?.level === 'fail');
  const status = v.level === 'fail' || (otherBad && other?.level === 'fail') ? 'fail' : 'warn';
  const what = { ...ctx, actual, expected: `>= ${num(status === 'fail' ? env.failBelow : env.warnBelow)} ${env.unit}` };
  if (key.probe === 'nvbw-h2d' || key.probe === 'nvbw-d2h') return [bw('bw-gpu-host', status, subject, `${key.direction} copy ${actual} (band: ${band})`, what)];
  if (otherBad && other) {
    const both = { ...ctx, actual: `host p50 ${num(other.p50)} GPU p50 ${num(v.p50)} ${env.unit}`, expected: `host >= ${num(status === 'fail' ? other.env.failBelow : other.env.warnBelow)} ${other.env.unit}` };
    return [bw('bw-nic', status, key.nic ?? subject, `GPU memory ${actual} and host memory p50 ${num(other.p50)} ${other.env.unit} over ${other.count}, both below their bands`, both)];
  }
  if (key.probe === 'ib-write-gpu' && other?.level === 'pass')
    return [bw('bw-gpu-path', status, subject, `GPU memory ${actual} (band: ${band}) while host memory on ${key.nic} is healthy (p50 ${num(other.p50)} ${other.env.unit})`, what)];
  return [bw('bw-low', status, subject, `${key.probe} ${actual} (band: ${band})`, what)];
}
