// The fleet report as one self-contained HTML file (inline CSS, SVG and script; no external asset): first each node
// that differs or was not judged, worst first, its differences beside the class majority with what to do; then per
// path a strip plot of every node's p50 with the class's band and outliers marked; then every node in one
// filterable table.
import type { PathDistribution } from './bandwidth.js';
import type { FleetClass, FleetReport, NodeVerdict } from './report.js';
import { gbps, railResponse, sourceLines } from './text.js';

const ESC: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const esc = (s: string): string => s.replace(/[&<>"']/g, (c) => ESC[c]!);

const W = 760;
const H = 70;
const M = 12;

/** Small stable jitter per node name, so dots of equal value do not hide each other. */
function jitter(name: string): number {
  let h = 2166136261;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 16777619) >>> 0;
  return (h % 1000) / 1000;
}

/** One scale for every path of a class: rails are compared with each other at a glance. */
function scale(ps: readonly PathDistribution[]): [number, number] {
  let lo = Infinity;
  let hi = -Infinity;
  for (const p of ps) {
    for (const x of p.points) [lo, hi] = [Math.min(lo, x.p50), Math.max(hi, x.p50)];
    if (p.band) [lo, hi] = [Math.min(lo, p.band.low), Math.max(hi, p.band.high)];
  }
  if (!Number.isFinite(lo)) return [0, 1];
  return hi > lo ? [lo, hi] : [lo * 0.9, hi * 1.1 || 1];
}

function strip(p: PathDistribution, [lo, hi]: [number, number]): string {
  const b = p.band;
  const x = (v: number): number => M + ((v - lo) / (hi - lo)) * (W - 2 * M);
  const parts: string[] = [`<svg class="strip" viewBox="0 0 ${W} ${H + 18}" width="${W}" height="${H + 18}" role="img" aria-label="${esc(`${p.probe} ${p.rail}`)}">`];
  if (b) {
    parts.push(`<rect class="band" x="${x(b.low).toFixed(1)}" y="4" width="${Math.max(1, x(b.high) - x(b.low)).toFixed(1)}" height="${H - 8}"><title>band ${esc(gbps(b.low))} – ${esc(gbps(b.high))}</title></rect>`);
    parts.push(`<line class="median" x1="${x(b.median).toFixed(1)}" x2="${x(b.median).toFixed(1)}" y1="2" y2="${H - 2}"><title>median ${esc(gbps(b.median))}</title></line>`);
  }
  for (const pt of p.points) {
    const cx = x(pt.p50).toFixed(1);
    const cy = (10 + jitter(pt.node) * (H - 20)).toFixed(1);
    const cls = pt.outlier === 'low' ? 'dot low' : pt.outlier === 'high' ? 'dot high' : 'dot';
    parts.push(`<circle class="${cls}" cx="${cx}" cy="${cy}" r="${pt.outlier ? 4.5 : 2.5}" data-node="${esc(pt.node)}"><title>${esc(`${pt.node}: ${gbps(pt.p50)}${pt.z === null ? '' : `, z ${pt.z.toFixed(1)}`}`)}</title></circle>`);
    const anchor = Number(cx) < 60 ? 'start' : Number(cx) > W - 60 ? 'end' : 'middle';
    if (pt.outlier) parts.push(`<text class="label" x="${cx}" y="${Math.max(10, Number(cy) - 7).toFixed(1)}" text-anchor="${anchor}">${esc(pt.node)}</text>`);
  }
  parts.push(`<text class="axis" x="${M}" y="${H + 14}">${esc(gbps(lo))}</text><text class="axis" x="${W - M}" y="${H + 14}" text-anchor="end">${esc(gbps(hi))}</text>`);
  parts.push('</svg>');
  return parts.join('');
}

function pathSection(p: PathDistribution, range: [number, number]): string {
  const b = p.band;
  const low = p.points.filter((x) => x.outlier === 'low').map((x) => x.node);
  const head = `${esc(p.probe)} <span class="rail">${esc(p.rail)}</span> ${esc(p.direction)} · ${p.points.length} nodes${b ? ` · median ${esc(gbps(b.median))} · band from ${esc(gbps(b.low))}` : ' · too few nodes for a band'}`;
  const tail = [low.length ? `<span class="bad">below the band: ${esc(low.join(', '))}</span>` : '', p.absent.length ? `<span class="bad">no figure: ${esc(p.absent.join(', '))}</span>` : ''].filter(Boolean).join(' · ');
  return `<figure><figcaption>${head}</figcaption>${strip(p, range)}${tail ? `<div class="note">${tail}</div>` : ''}</figure>`;
}

/** One node that differs or was not judged: each finding beside the class majority, with what to do about it. */
function flaggedRow(v: NodeVerdict): string {
  const rows = [
    ...v.differences.map((d) => `<tr><td class="imp ${d.impact}">${d.impact}</td><td>${esc(d.area)}</td><td>${esc(d.subject)}</td><td class="val">${esc(d.a)}</td><td class="maj">${esc(d.b)}</td><td class="do">${esc(d.response)}</td></tr>`),
    ...v.rails.map((r) => `<tr><td class="imp ${r.kind === 'absent' ? 'critical' : 'major'}">${r.kind === 'absent' ? 'critical' : 'major'}</td><td>bandwidth</td><td>${esc(`${r.probe} ${r.rail} ${r.direction}`)}</td><td class="val">${r.p50 === null ? 'no figure' : esc(gbps(r.p50))}</td><td class="maj">median ${esc(gbps(r.median))}</td><td class="do">${esc(railResponse(r))}</td></tr>`),
  ];
  const table = rows.length ? `<table><thead><tr><th>impact</th><th>area</th><th>subject</th><th>this node</th><th>class majority</th><th>what to do</th></tr></thead><tbody>${rows.join('')}</tbody></table>` : '';
  const notes = v.notes.length ? `<ul class="notes">${v.notes.map((n) => `<li>not judged: ${esc(n)}</li>`).join('')}</ul>` : '';
  const tag = v.worst ?? v.status;
  return `<section class="node" id="n-${esc(v.node)}"><h3>${esc(v.node)} <span class="imp ${esc(tag)}">${esc(tag)}</span> <small>class ${esc(v.class)}</small></h3>${table}${notes}</section>`;
}

function classSection(c: FleetClass): string {
  const range = scale(c.paths);
  const unread = c.unread.length ? ` · <span class="bad">${c.unread.length} not read: ${esc(c.unread.map((m) => m.node).join(', '))}</span>` : '';
  return `<section class="class"><h2>class ${esc(c.name)} <small>${c.nodes.length} nodes · ${c.read} snapshots read${unread} · majority as on ${esc(c.reference ?? '(no snapshot)')}</small></h2>${c.paths.map((p) => pathSection(p, range)).join('')}</section>`;
}

const CSS = `body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#1d2430;background:#fafbfc}h1{font-size:20px}h2{font-size:17px;margin-top:28px}h3{font-size:15px;margin:18px 0 6px}small{color:#667}
figure{margin:10px 0 16px}figcaption{font-weight:600;margin-bottom:2px}.rail{font-family:ui-monospace,monospace}
.strip{background:#fff;border:1px solid #dde}.band{fill:#d8f0dc}.median{stroke:#2a7a3a;stroke-width:1.5}.dot{fill:#4a6fa5;opacity:.75}.dot.low{fill:#c62828;opacity:1}.dot.high{fill:#ef8c00;opacity:1}
.label{font-size:10px;fill:#c62828}.axis{font-size:10px;fill:#667}.note{font-size:13px}.bad{color:#c62828}
table{border-collapse:collapse;margin:4px 0}td,th{border:1px solid #dde;padding:2px 8px;text-align:left;vertical-align:top}th{background:#eef1f5}
.imp.critical{color:#fff;background:#c62828}.imp.major{color:#fff;background:#ef6c00}.imp.minor{background:#fff3c4}.val{font-family:ui-monospace,monospace;color:#c62828}.maj{font-family:ui-monospace,monospace;color:#2a7a3a}
#nodes td{font-family:ui-monospace,monospace}#filter{margin:6px 0;padding:3px 6px;width:240px}.status-ok{color:#2a7a3a}.status-differs{color:#c62828}.status-missing,.status-unreadable,.status-incomplete{color:#8a5a00}
.imp.incomplete,.imp.unreadable,.imp.missing{color:#fff;background:#8a5a00}.do{font-size:12px;color:#334;max-width:420px}.notes{margin:2px 0 8px;color:#8a5a00}
.node{background:#fff;border:1px solid #dde;border-radius:4px;padding:2px 12px 8px;margin:8px 0}`;

const SCRIPT = `(function(){var f=document.getElementById('filter');var rows=Array.prototype.slice.call(document.querySelectorAll('#nodes tbody tr'));
f.addEventListener('input',function(){var q=f.value.trim().toLowerCase();rows.forEach(function(r){r.hidden=q!==''&&r.textContent.toLowerCase().indexOf(q)<0;});});
console.log('gdrgate fleet report: '+rows.length+' nodes');})();`;

export function renderFleetHtml(r: FleetReport): string {
  const s = r.summary;
  const flagged = r.nodes.filter((v) => v.status !== 'ok');
  const all = r.nodes
    .map((v) => `<tr><td>${esc(v.node)}</td><td>${esc(v.class)}</td><td class="status-${v.status}">${v.status}</td><td>${esc(v.worst ?? '')}</td><td>${v.differences.length + v.rails.length}</td></tr>`)
    .join('');
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>gdrgate fleet report — ${esc(r.dir)}</title>
<style>${CSS}</style></head><body>
<h1>gdrgate fleet report <small>${esc(r.dir)} · gdrgate ${esc(r.version)}</small></h1>
<p>${s.nodes} nodes (${s.read} read, ${s.unreadable} unreadable, ${s.missing} missing, ${s.incomplete} judged in part) in ${s.classes} class(es): <b>${s.flagged} differ</b> (${s.impacts.critical} critical, ${s.impacts.major} major, ${s.impacts.minor} minor); ${s.lowRails} rail(s) below their band, ${s.absentRails} without a figure.</p>${sourceLines(r).length ? `
<p class="sources">${sourceLines(r).map(esc).join('<br>')}</p>` : ''}
<h2>nodes that differ from their class or were not judged, worst first</h2>
${flagged.length ? flagged.map(flaggedRow).join('\n') : s.nodes === 0 ? `<p class="bad">nothing judged: no node found${r.problems.length ? `: ${esc(r.problems.slice(0, 5).join('; '))}` : ''}</p>` : r.exitCode === 0 ? '<p>none: every node judged, every node agrees with its class</p>' : '<p class="bad">every node judged agrees with its class, but inputs were not taken: see the notes below</p>'}${r.problems.length && s.nodes > 0 ? `
<h2>notes</h2><ul class="notes">${r.problems.slice(0, 50).map((p) => `<li>${esc(p)}</li>`).join('')}${r.problems.length > 50 ? `<li>+${r.problems.length - 50} more (the text report lists them all)</li>` : ''}</ul>` : ''}
<h2>bandwidth per rail</h2>
${r.classes.map(classSection).join('\n')}
<h2>every node</h2><input id="filter" type="search" placeholder="filter nodes" aria-label="filter nodes">
<table id="nodes"><thead><tr><th>node</th><th>class</th><th>status</th><th>worst</th><th>findings</th></tr></thead><tbody>${all}</tbody></table>
<script>${SCRIPT}</script>
</body></html>
`;
}
