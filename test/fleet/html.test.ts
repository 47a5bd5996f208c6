// The HTML fleet report in a real headless Chromium (Debian's): it loads with no console output but its own
// ready line, shows every node, carries no external asset, and a screenshot is kept (.ci/out/fleet-report.png); and,
// without a browser, every string from the inputs is escaped (a `<script>` label never becomes one).
import t from 'tap';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { renderFleetHtml } from '../../src/fleet/html.js';
import { buildFleetReport } from '../../src/fleet/report.js';
import { runFleetReport } from '../../src/fleet/report-command.js';
import { generateFleet } from '../gen/fleet.js';
import { chromiumPath, loadPage, screenshot } from '../helpers/chromium.js';
import { REPO } from '../helpers/paths.js';

const bin = chromiumPath();
const READY = /^"gdrgate fleet report: (\d+) nodes", source: file:/;

t.test('headless Chromium: no console errors, every node shown, outliers marked, screenshot kept', { skip: bin ? false : 'no chromium (apt-get install chromium): the HTML report is not loaded in a browser' }, async (t) => {
  const dir = t.testdir();
  const fleet = path.join(dir, 'fleet');
  const plan = await generateFleet(fleet, { n: 30, seed: 9 });
  const { report } = await runFleetReport({ dir: fleet, baseline: null });
  const html = renderFleetHtml(report);
  t.notMatch(html, /\b(?:src|href)\s*=\s*["']?(?:[a-z]+:)?\/\//i, 'no external asset');
  t.notMatch(html, /<link\b|@import|url\(/i, 'no stylesheet or font fetched');
  const file = path.join(dir, 'fleet.html');
  writeFileSync(file, html);
  const page = loadPage(bin!, file, path.join(dir, 'profile'));
  t.equal(page.code, 0, 'chromium exited 0');
  t.equal(page.console[0], `"gdrgate fleet report: ${plan.length} nodes", source: ${pathToFileURL(file).href} (27)`, "the page's script ran and its console was captured");
  t.same(page.console.filter((l) => !READY.test(l)), [], 'nothing else on the console (no error, no warning)');
  const rows = [...page.dom.matchAll(/<tr><td>([^<]+)<\/td><td>[^<]*<\/td><td class="status-(\w+)">/g)].map((m) => [m[1]!, m[2]!]);
  t.same(rows.map((r) => r[0]).sort(), plan.map((n) => n.name).sort(), 'every node in the node table');
  for (const n of plan) t.equal(rows.find((r) => r[0] === n.name)?.[1], n.fault ? 'differs' : 'ok', `${n.name}: ${n.fault?.kind ?? 'clean'}`);
  const marked = new Set([...page.dom.matchAll(/<circle class="dot low"[^>]*data-node="([^"]+)"/g)].map((m) => m[1]!));
  const slow = plan.filter((n) => n.fault?.kind === 'weak-rail' || n.fault?.kind === 'link-x8').map((n) => n.name);
  t.same([...marked].sort(), slow.sort(), 'the strip plots mark exactly the slow rails');
  t.ok(page.dom.includes('class majority'), "each flagged node's differences sit beside the class majority");
  const out = path.join(REPO, '.ci/out');
  mkdirSync(out, { recursive: true });
  const png = path.join(out, 'fleet-report.png');
  t.equal(screenshot(bin!, file, png, path.join(dir, 'profile2')), 0, 'screenshot taken');
  t.same([...readFileSync(png).subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], `${png} is a PNG`);
});

t.test('the console check would catch a failing page (the detector itself is tested)', { skip: bin ? false : 'no chromium' }, async (t) => {
  const dir = t.testdir();
  const file = path.join(dir, 'broken.html');
  writeFileSync(file, '<!DOCTYPE html><html><body><script>null.f();</script></body></html>');
  const page = loadPage(bin!, file, path.join(dir, 'profile'));
  t.same(page.console, [`"Uncaught TypeError: Cannot read properties of null (reading 'f')", source: ${pathToFileURL(file).href} (1)`]);
});

t.test('the page opens on the worst nodes and their differences with what to do; the plots come after', async (t) => {
  const fleet = path.join(t.testdir(), 'fleet');
  await generateFleet(fleet, { n: 12, seed: 9 });
  const { report } = await runFleetReport({ dir: fleet, baseline: null });
  const html = renderFleetHtml(report);
  const worst = report.nodes[0]!;
  t.equal(worst.status, 'differs');
  const firstNode = html.indexOf(`<section class="node" id="n-${worst.node}">`);
  const firstPlot = html.indexOf('<svg class="strip"');
  t.ok(firstNode > 0 && firstPlot > 0 && firstNode < firstPlot, 'the worst node comes before the first plot');
  t.ok(html.indexOf('<section class="node"') === firstNode, 'and it is the first node shown');
  const d = worst.differences[0] ?? null;
  if (d) t.ok(html.includes(`<td class="do">${d.response.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;')}</td>`), 'its difference carries what to do');
  t.equal((html.match(/<th>what to do<\/th>/g) ?? []).length, report.nodes.filter((v) => v.differences.length + v.rails.length > 0).length, 'every finding table has its what-to-do column');
});

t.test('hostile labels, class names, notes and problems are escaped: the only script is the report\'s own', async (t) => {
  const evil = `<script>alert(1)</script>"'&`;
  const escaped = '&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&amp;';
  const stats = ['gpu0001', 'gpu0002', 'gpu0003', 'gpu0004'].map((node, i) => ({ node, probe: evil, recipeHash: evil, gpu: '0000:18:00.0', nic: evil, direction: evil, p50: i === 3 ? 2e10 : 4.9e10, min: null, count: 5, source: evil }));
  const report = buildFleetReport({ dir: evil, nodes: [], classOf: () => evil, stats, missing: [], broken: [{ node: 'gpu0002', why: evil }], problems: [evil] });
  const html = renderFleetHtml(report);
  t.same([...html.matchAll(/<script\b/gi)].length, 1, 'one script element');
  t.equal(html.includes('<script>alert'), false);
  t.equal(html.includes(evil), false, 'the raw text appears nowhere');
  t.ok(html.includes(`<title>gdrgate fleet report — ${escaped}</title>`), 'the directory escaped in the title');
  t.ok(html.includes(`class ${escaped}`), 'the class name escaped');
  t.ok(html.includes(`<li>not judged: ${escaped}</li>`), 'a note escaped');
  t.ok(html.includes(`${escaped} 0000:18:00.0↔${escaped} ${escaped}`), 'a rail finding\'s probe, adapter and direction escaped');
});

t.test("the report's notes are on the page whatever was judged, and an input not taken is never 'every node agrees'", async (t) => {
  const stats = ['gpu0001', 'gpu0002', 'gpu0003'].map((node) => ({ node, probe: 'ib-write-gpu', recipeHash: 'r1', gpu: '0000:18:00.0', nic: 'mlx5_0', direction: 'gpu->nic', p50: 4.9e10, min: null, count: 5, source: 'spool:x' }));
  const problem = 'gpu[0008].tar.gz: not a node name, skipped';
  const report = buildFleetReport({ dir: 'fleet', nodes: [], classOf: () => 'hgx', stats, missing: [], problems: [problem], refused: 1 });
  const html = renderFleetHtml(report);
  t.equal(report.exitCode, 1);
  t.ok(html.includes('<p class="bad">every node judged agrees with its class, but inputs were not taken: see the notes below</p>'), 'not "none: every node judged, every node agrees"');
  t.ok(html.includes(`<h2>notes</h2><ul class="notes"><li>${problem}</li></ul>`), 'the note itself');
});
