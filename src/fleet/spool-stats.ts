// Sample spools of many nodes → per node and path the figures the fleet judges (NodePathStat, bytes per second),
// and each recipe with its unit (a class baseline's bands need them back).
import { readSpoolFiles, SPOOL_READ_BYTES } from '../samples/spool.js';
import { BYTES_PER_SECOND, type BandwidthUnit, type ProbeRecipe } from '../samples/sample.js';
import { CLOCK_TOLERANCE_MS, StatsAccumulator } from '../samples/stats.js';
import { ageProblem, isoTime, type AgeRule } from './age.js';
import { impossibleFigure, type NodeMissing, type NodePathStat, type WithheldPath } from './types.js';


export interface SpoolStats {
  readonly stats: NodePathStat[];
  readonly recipes: ReadonlyMap<string, { readonly recipe: ProbeRecipe; readonly unit: BandwidthUnit }>;
  readonly problems: readonly string[];
  /** Nodes none of whose spool files could be read, or with a figure no link carries (that path refused): listed with why. */
  readonly broken: readonly NodeMissing[];
  /** Paths whose newest figure is older than max-age, or with samples ahead of the clock: not all judged, said in `broken`. */
  readonly withheld: readonly WithheldPath[];
  /**
   * Nodes whose rails are not all known: a spool file of theirs not read (over the size cap, unreadable) or lines of
   * it corrupt (no sample, so which rail they measured is unknown). Said in `broken`; never "absent" on a rail.
   */
  readonly unsure: readonly string[];
}

/**
 * Each node's files (oldest first) through the spool reader; samples naming another node are left out and counted.
 * A few nodes at a time, the event loop given a turn every `everyMs` (the read pool's answers are taken between
 * them): the spools are read while the workers read the snapshots. With `age`, samples stamped ahead of the clock are
 * left out (as the epilog leaves them out) and a path whose newest sample is older than max-age is not judged; both said.
 */
export async function spoolStatsInTurns(spools: ReadonlyMap<string, readonly string[]>, everyMs = 4, age?: AgeRule): Promise<SpoolStats> {
  const out = { stats: [] as NodePathStat[], recipes: new Map<string, { recipe: ProbeRecipe; unit: BandwidthUnit }>(), problems: [] as string[], broken: [] as NodeMissing[], withheld: [] as WithheldPath[], unsure: [] as string[] };
  let last = performance.now();
  // One read buffer for all the nodes (a fresh megabyte per node was a tenth of the time at 10,000 nodes).
  const buffer = Buffer.allocUnsafe(SPOOL_READ_BYTES);
  for (const [node, files] of spools) {
    oneNode(node, files, out, buffer, age);
    if (performance.now() - last < everyMs) continue;
    await new Promise<void>((r) => setImmediate(r));
    last = performance.now();
  }
  return out;
}

type Out = { stats: NodePathStat[]; recipes: Map<string, { recipe: ProbeRecipe; unit: BandwidthUnit }>; problems: string[]; broken: NodeMissing[]; withheld: WithheldPath[]; unsure: string[] };

function oneNode(node: string, files: readonly string[], out: Out, buffer: Buffer, age: AgeRule | undefined): void {
  const { stats, recipes, problems } = out;
  const had = stats.length;
  const acc = new StatsAccumulator(age ? { notAfter: age.now + CLOCK_TOLERANCE_MS } : {});
  let ahead = 0;
  // The rails samples from the future were left out of: the node measured them, so it is never "absent" there.
  const aheadRails = new Map<string, WithheldPath>();
  let foreign = 0;
  const r = readSpoolFiles(files, (s) => {
    if (s.node !== node) {
      foreign++;
      return;
    }
    if (!recipes.has(s.recipeHash)) recipes.set(s.recipeHash, { recipe: s.recipe, unit: s.unit });
    if (age && s.ts > age.now + CLOCK_TOLERANCE_MS) {
      ahead = Math.max(ahead, s.ts);
      const rail = `${s.probe}\u0000${s.gpu ?? ''}\u0000${s.nic ?? ''}\u0000${s.direction}`;
      if (!aheadRails.has(rail)) aheadRails.set(rail, { node, probe: s.probe, gpu: s.gpu, nic: s.nic, direction: s.direction });
    }
    acc.add(s);
  }, [], buffer);
  const noneRead = r.files.length === 0 && files.length > 0;
  if (noneRead) out.broken.push({ node, why: `no spool file could be read: ${r.problems[0] ?? 'unknown'}${r.problems.length > 1 ? `; +${r.problems.length - 1} more` : ''}` });
  // A torn line is a crash's last write (the next append heals it): said for the fleet. A corrupt one is no sample (bad
  // JSON, a field out of range, a figure no link carries: src/samples/sample.ts): what it measured is not judged, so
  // the node is judged in part, and says why.
  if (r.torn > 0) problems.push(`${node}: ${r.torn} torn spool lines skipped`);
  const corrupt = r.corrupt > 0 ? [`${r.corrupt} corrupt spool lines skipped (no sample: bad JSON, a field out of range or a figure no link carries), not judged`] : [];
  if (foreign > 0) problems.push(`${node}: ${foreign} samples name another node, left out`);
  const source = `spool:${files[files.length - 1] ?? ''}`;
  // A file of the node not read (over the size cap, unreadable, a line too long) is an input of it that could not be
  // read: the node is judged in part, and says which; what that file measured is unknown, so it is absent nowhere.
  const refused: string[] = noneRead ? [] : r.problems.map((p) => `spool ${p}: not judged`);
  for (const c of corrupt) refused.push(c);
  if (refused.length) out.unsure.push(node);
  for (const w of aheadRails.values()) out.withheld.push(w);
  if (acc.future > 0) refused.push(`${acc.future} spool samples stamped after this host's clock by more than ${CLOCK_TOLERANCE_MS / 1000} s (the newest ${isoTime(ahead)}): their age cannot be told, not judged`);
  for (const k of acc.result()) {
    const per = BYTES_PER_SECOND[k.unit];
    // A figure no link carries (a broken parser's 1e300 Gb/s) is refused: this path of the node is not judged, said.
    const bad = impossibleFigure(k.all.p50 * per) ?? impossibleFigure(k.all.min * per);
    if (bad) {
      refused.push(`${k.key.probe} ${k.key.gpu ?? '-'}→${k.key.nic ?? '-'} ${k.key.direction} recipe ${k.key.recipeHash}: spool figure of ${bad}, not judged`);
      // It measured the rail: never "absent" there.
      out.withheld.push({ node, probe: k.key.probe, gpu: k.key.gpu, nic: k.key.nic, direction: k.key.direction });
      continue;
    }
    const old = age ? ageProblem(k.all.lastTs, age) : null;
    if (old !== null) {
      refused.push(`${k.key.probe} ${k.key.gpu ?? '-'}→${k.key.nic ?? '-'} ${k.key.direction}: newest figure ${old}, not judged`);
      out.withheld.push({ node, probe: k.key.probe, gpu: k.key.gpu, nic: k.key.nic, direction: k.key.direction });
      continue;
    }
    stats.push({ node, probe: k.key.probe, recipeHash: k.key.recipeHash, gpu: k.key.gpu, nic: k.key.nic, direction: k.key.direction, p50: k.all.p50 * per, min: k.all.min * per, count: k.all.count, source });
  }
  if (refused.length) out.broken.push({ node, why: `${refused[0]!}${refused.length > 1 ? `; +${refused.length - 1} more` : ''}` });
  // A spool that was read and gave this node no figure at all (empty, only torn lines, only another node's samples)
  // still names the node: it gets a verdict that says so, never none (the report lists every node named anywhere).
  else if (stats.length === had && !noneRead) {
    const parts = [r.torn ? `${r.torn} torn` : '', foreign ? `${foreign} of another node` : ''].filter(Boolean);
    out.broken.push({ node, why: `its spool holds no sample of ${node}${parts.length ? ` (lines: ${parts.join(', ')})` : ' (empty)'}` });
  }
}
