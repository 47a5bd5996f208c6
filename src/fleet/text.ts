// The fleet report as text: the nodes that differ, worst first, each difference beside the class's majority; then
// the facts the class disagrees on, the bandwidth distribution of every path, and the nodes that did not answer.
import type { FleetReport, NodeVerdict, RailFinding } from './report.js';
import { escapeControls } from '../report/escape.js';

/** Bytes per second as Gb/s, the unit ib_write_bw --report_gbits and the adapters' rates use. */
export const gbps = (bytesPerS: number): string => `${((bytesPerS * 8) / 1e9).toFixed(1)} Gb/s`;

const pad = (s: string, n: number): string => (s.length >= n ? s : s + ' '.repeat(n - s.length));
/** At most `n` names, then how many more. */
export const some = (xs: readonly string[], n = 8): string => (xs.length <= n ? xs.join(', ') : `${xs.slice(0, n).join(', ')}, +${xs.length - n} more`);

function railLine(r: RailFinding): string {
  const where = `bw ${r.probe} ${r.rail} ${r.direction}`;
  if (r.kind === 'absent') return `${where}: no figure (class median ${gbps(r.median)})`;
  return `${where}: ${gbps(r.p50!)}  (class median ${gbps(r.median)}, band from ${gbps(r.low!)}, z ${r.z!.toFixed(1)})`;
}

function nodeLines(v: NodeVerdict, total: (cls: string) => number, agree: (cls: string, area: string, subject: string) => number | null, w: number): string[] {
  const lines: string[] = [];
  const head = `${pad(v.node, w)}  ${pad((v.worst ?? '').toUpperCase(), 8)}  `;
  const rest = ' '.repeat(head.length);
  const items = [
    ...v.differences.map((d) => {
      const n = agree(v.class, d.area, d.subject);
      return `${d.impact === v.worst ? '' : `(${d.impact}) `}${d.area} ${d.subject}: ${d.a}  (majority: ${d.b}${n === null ? '' : `, ${n}/${total(v.class)}`})`;
    }),
    ...v.rails.map(railLine),
    ...v.notes,
  ];
  items.forEach((x, i) => lines.push(`${i === 0 ? head : rest}${x}`));
  return lines;
}

export function renderFleetText(r: FleetReport): string {
  const s = r.summary;
  const out = [
    `gdrgate fleet report — ${r.dir}: ${s.nodes} nodes (${s.read} read, ${s.missing} missing) in ${s.classes} class(es); ${s.flagged} differ (${s.impacts.critical} critical, ${s.impacts.major} major, ${s.impacts.minor} minor)`,
  ];
  const classSize = new Map(r.classes.map((c) => [c.name, c.nodes.length]));
  const agreeMap = new Map<string, number>(r.classes.flatMap((c) => c.facts.map((f): [string, number] => [`${c.name}\u0000${f.area}\u0000${f.subject}`, f.agree])));
  const agree = (cls: string, area: string, subject: string): number | null => agreeMap.get(`${cls}\u0000${area}\u0000${subject}`) ?? null;
  const flagged = r.nodes.filter((v) => v.status === 'differs');
  const w = Math.max(4, ...flagged.map((v) => v.node.length));
  if (flagged.length) {
    out.push('', `${pad('NODE', w)}  ${pad('WORST', 8)}  DIFFERS FROM ITS CLASS`);
    for (const v of flagged) out.push(...nodeLines(v, (c) => classSize.get(c) ?? 0, agree, w));
  }
  for (const c of r.classes) {
    out.push('', `class ${c.name}: ${c.nodes.length} nodes, majority as on ${c.reference ?? '(no snapshot)'}`);
    if (c.facts.length) {
      out.push('  facts the class disagrees on (majority, nodes that differ):');
      for (const f of c.facts)
        out.push(`  ${pad(f.impact.toUpperCase(), 8)}  ${f.area} ${f.subject}: ${f.majority} (${f.agree}/${c.nodes.length}${f.tie ? ', tie' : ''}) — ${some(f.deviations.map((d) => `${d.node}: ${d.value}`), 4)}`);
    } else out.push('  every node agrees on every fact');
    if (c.paths.length) {
      const wr = Math.max(4, ...c.paths.map((p) => p.rail.length));
      const wp = Math.max(5, ...c.paths.map((p) => p.probe.length));
      out.push(`  bandwidth per path (node p50s): ${pad('PROBE', wp)}  ${pad('RAIL', wr)}  DIRECTION  NODES  MEDIAN       MAD       BAND FROM    BELOW`);
      for (const p of c.paths) {
        const b = p.band;
        const low = p.points.filter((x) => x.outlier === 'low').map((x) => x.node);
        const cells = b ? `${pad(String(b.n), 5)}  ${pad(gbps(b.median), 11)}  ${pad(gbps(b.mad), 8)}  ${pad(gbps(b.low), 11)}  ${low.length ? some(low, 5) : '-'}` : `${pad(String(p.points.length), 5)}  (too few nodes for a band)`;
        out.push(`  ${' '.repeat(31)} ${pad(p.probe, wp)}  ${pad(p.rail, wr)}  ${pad(p.direction, 9)}  ${cells}${p.absent.length ? `; no figure: ${some(p.absent, 5)}` : ''}`);
      }
    }
  }
  if (r.missing.length) {
    out.push('', `did not answer or could not be read (${r.missing.length}):`);
    for (const m of r.missing) out.push(`  ${m.node}: ${m.why}`);
  }
  for (const p of r.problems) out.push(`note: ${p}`);
  out.push('', r.exitCode === 0 ? `result: all ${s.nodes} nodes agree with their class (exit 0)` : `result: ${s.flagged} of ${s.nodes} nodes differ from their class, ${s.missing} missing (exit 1)`);
  return out.map(escapeControls).join('\n') + '\n';
}
