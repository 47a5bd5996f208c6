// The fleet report as text: the nodes that differ, worst first, each difference beside the class's majority; then
// the facts the class disagrees on, the bandwidth distribution of every path, and the nodes that did not answer.
import type { FleetClass, FleetReport, NodeVerdict, RailFinding } from './report.js';
import { escapeControls } from '../report/escape.js';

/** Bytes per second as Gb/s, the unit ib_write_bw --report_gbits and the adapters' rates use. */
export const gbps = (bytesPerS: number): string => `${((bytesPerS * 8) / 1e9).toFixed(1)} Gb/s`;

const pad = (s: string, n: number): string => (s.length >= n ? s : s + ' '.repeat(n - s.length));
/** At most `n` names, then how many more. */
export const some = (xs: readonly string[], n = 8): string => (xs.length <= n ? xs.join(', ') : `${xs.slice(0, n).join(', ')}, +${xs.length - n} more`);

/** What to do about a rail finding (a difference carries compare's own response). */
export function railResponse(r: RailFinding): string {
  return r.kind === 'absent'
    ? 'no figure on a rail the class measures: check the adapter is present and up (gdrgate check on the node), then rerun the probe'
    : 'rerun the probe on this node; if it stays below the band, check the rail (gdrgate check --only pcie-link,pcie-acs on the node) and its cable';
}

/** Columns padded to their widest cell; the last column is not padded. */
export function table(rows: readonly (readonly string[])[], indent: string): string[] {
  const w: number[] = [];
  for (const r of rows) r.forEach((c, k) => (w[k] = Math.max(w[k] ?? 0, c.length)));
  return rows.map((r) => indent + r.map((c, k) => (k === r.length - 1 ? c : pad(c, w[k]!))).join('  '));
}

/** `22/24`, or when snapshots of the class could not be read `22 of 23 read`. */
function outOf(n: number, c: { readonly read: number; readonly nodes: readonly string[] }): string {
  return c.read === c.nodes.length ? `${n}/${c.read}` : `${n} of ${c.read} read`;
}

function railLine(r: RailFinding): string {
  const where = `bw ${r.probe} ${r.rail} ${r.direction}`;
  if (r.kind === 'absent') return `${where}: no figure (class median ${gbps(r.median)})`;
  return `${where}: ${gbps(r.p50!)}  (class median ${gbps(r.median)}, band from ${gbps(r.low!)}, z ${r.z!.toFixed(1)})`;
}

function nodeLines(v: NodeVerdict, share: (cls: string, area: string, subject: string) => string | null, w: number): string[] {
  const lines: string[] = [];
  const head = `${pad(v.node, w)}  ${pad((v.worst ?? v.status).toUpperCase(), 10)}  `;
  const rest = ' '.repeat(head.length);
  const items: string[] = [];
  for (const d of v.differences) {
    const n = share(v.class, d.area, d.subject);
    items.push(`${d.impact === v.worst ? '' : `(${d.impact}) `}${d.area} ${d.subject}: ${d.a}  (majority: ${d.b}${n === null ? '' : `, ${n}`})`);
    if (d.response) items.push(`  what to do: ${d.response}`);
  }
  for (const r of v.rails) items.push(railLine(r), `  what to do: ${railResponse(r)}`);
  for (const x of v.notes) items.push(`not judged: ${x}`);
  items.forEach((x, i) => lines.push(`${i === 0 ? head : rest}${x}`));
  return lines;
}

/** Per class the bandwidth of every path, one aligned table. */
function bandwidthLines(c: FleetClass): string[] {
  const rows: string[][] = [['PROBE', 'RAIL', 'DIRECTION', 'NODES', 'MEDIAN', 'MAD', 'BAND FROM', 'BELOW']];
  for (const p of c.paths) {
    const b = p.band;
    const low = p.points.filter((x) => x.outlier === 'low').map((x) => x.node);
    const below = `${b ? (low.length ? some(low, 5) : '-') : '(too few nodes for a band)'}${p.absent.length ? `; no figure: ${some(p.absent, 5)}` : ''}`;
    rows.push([p.probe, p.rail, p.direction, String(b ? b.n : p.points.length), b ? gbps(b.median) : '-', b ? gbps(b.mad) : '-', b ? gbps(b.low) : '-', below]);
  }
  const measured = new Set(c.paths.flatMap((p) => p.points.map((x) => x.node)));
  const none = c.nodes.filter((n) => !measured.has(n));
  return ['  bandwidth per path (node p50s):', ...table(rows, '    '), ...(none.length ? [`    no figure on any path: ${some(none)}`] : [])];
}

/** Where the facts came from: the nodes' summaries, their snapshots, and each node whose summary was not used. */
export function sourceLines(r: FleetReport): string[] {
  const s = r.summary;
  if (s.fromSummary + s.fromSnapshot === 0) return [];
  const stale = r.nodes.filter((v) => v.sourceNote !== null);
  // ISO times in one format sort as text: the oldest and newest snapshot judged, in one pass.
  let [oldest, newest] = ['', ''];
  for (const v of r.nodes) if (v.snapshotTime !== null) [oldest, newest] = [oldest === '' || v.snapshotTime < oldest ? v.snapshotTime : oldest, v.snapshotTime > newest ? v.snapshotTime : newest];
  const taken = oldest === '' ? '' : oldest === newest ? ` (taken ${oldest})` : ` (taken ${oldest} to ${newest})`;
  return [
    `facts judged from ${s.fromSummary} node summaries and ${s.fromSnapshot} snapshots${taken}${stale.length ? `; ${stale.length} summary(ies) not used:` : ''}`,
    ...stale.slice(0, 20).map((v) => `  ${v.node}: ${v.sourceNote!}`),
    ...(stale.length > 20 ? [`  +${stale.length - 20} more (--json lists every node's source)`] : []),
  ];
}

export function renderFleetText(r: FleetReport): string {
  const s = r.summary;
  const out = [
    `gdrgate fleet report — ${r.dir}: ${s.nodes} nodes (${s.read} read, ${s.unreadable} unreadable, ${s.missing} missing, ${s.incomplete} judged in part) in ${s.classes} class(es); ${s.flagged} differ (${s.impacts.critical} critical, ${s.impacts.major} major, ${s.impacts.minor} minor)`,
  ];
  // Lines appended one by one, never spread into one call: past about 120,000 arguments a spread call throws RangeError.
  for (const l of sourceLines(r)) out.push(l);
  const byName = new Map(r.classes.map((c) => [c.name, c]));
  const agreeMap = new Map<string, number>(r.classes.flatMap((c) => c.facts.map((f): [string, number] => [`${c.name}\u0000${f.area}\u0000${f.subject}`, f.agree])));
  const share = (cls: string, area: string, subject: string): string | null => {
    const n = agreeMap.get(`${cls}\u0000${area}\u0000${subject}`);
    const c = byName.get(cls);
    return n === undefined || !c ? null : outOf(n, c);
  };
  const shown = r.nodes.filter((v) => v.status !== 'ok');
  let w = 4;
  for (const v of shown) w = Math.max(w, v.node.length);
  if (shown.length) {
    out.push('', `${pad('NODE', w)}  ${pad('WORST', 10)}  DIFFERS FROM ITS CLASS, OR WHY IT WAS NOT JUDGED`);
    for (const v of shown) for (const l of nodeLines(v, share, w)) out.push(l);
  }
  for (const c of r.classes) {
    const unread = c.unread.length ? `, ${c.unread.length} not: ${some(c.unread.map((m) => `${m.node} (${m.why})`), 4)}` : '';
    out.push('', `class ${c.name}: ${c.nodes.length} nodes, ${c.read} snapshots read${unread}; majority as on ${c.reference ?? '(no snapshot)'}`);
    if (c.facts.length) {
      out.push('  facts the class disagrees on (majority, nodes that differ):');
      for (const f of c.facts) out.push(`  ${pad(f.impact.toUpperCase(), 8)}  ${f.area} ${f.subject}: ${f.majority} (${outOf(f.agree, c)}${f.tie ? ', tie' : ''}) — ${some(f.deviations.map((d) => `${d.node}: ${d.value}`), 4)}`);
    } else if (c.read > 0) out.push(`  every node read agrees on every fact`);
    if (c.paths.length) for (const l of bandwidthLines(c)) out.push(l);
  }
  if (r.missing.length) {
    out.push('', `not judged: could not be read or did not answer (${r.missing.length}):`);
    for (const m of r.missing) out.push(`  ${m.node}: ${m.why}`);
  }
  for (const p of r.problems) out.push(`note: ${p}`);
  const unjudged = s.unreadable + s.missing + s.incomplete;
  out.push(
    '',
    s.nodes === 0
      ? `result: nothing judged: no node found in ${r.dir}${r.problems.length ? ' (see the notes above)' : ''} (exit 1)`
      : r.exitCode === 0
      ? `result: all ${s.nodes} nodes judged, all agree with their class (exit 0)`
      : s.clean === s.nodes
      ? `result: all ${s.nodes} nodes judged agree with their class, but inputs were not taken (see the notes above) (exit 1)`
      : `result: ${s.flagged} of ${s.nodes} nodes differ from their class; ${unjudged} not fully judged (${s.unreadable} unreadable, ${s.missing} missing, ${s.incomplete} judged in part) (exit 1)`,
  );
  return out.map(escapeControls).join('\n') + '\n';
}
