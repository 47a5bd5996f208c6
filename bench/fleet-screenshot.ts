// The HTML fleet report's screenshot in docs/: a realistic generated fleet (test/gen/fleet-real.ts, 24 nodes, seed
// 42, every snapshot distinct, each node's summary beside its snapshot), one node's snapshot taken again after its
// summary (so the page shows a summary not used, and why), `gdrgate fleet report DIR --html`, and Debian's headless
// Chromium at 1280×1600. Usage: node .bench/bench/fleet-screenshot.js OUT.png (after npm run build and
// tsc -p bench/tsconfig.json).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { generateRealFleet, realSnapshot } from '../test/gen/fleet-real.js';
import { chromiumPath, screenshot } from '../test/helpers/chromium.js';

const REPO = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const out = process.argv[2];
if (!out) throw new Error('usage: fleet-screenshot OUT.png');
const bin = chromiumPath();
if (!bin) throw new Error('no chromium (apt-get install chromium)');
const work = mkdtempSync(path.join(tmpdir(), 'gdrgate-fleet-shot-'));
try {
  const dir = path.join(work, 'fleet');
  const plan = await generateRealFleet(dir, { n: 24, seed: 42, summaries: true });
  const clean = plan.findIndex((n) => !n.fault);
  writeFileSync(path.join(dir, `${plan[clean]!.name}.tar.gz`), await realSnapshot(null, plan[clean]!.name, 1000 + clean, 42));
  const html = path.join(work, 'fleet.html');
  const r = spawnSync(process.execPath, [path.join(REPO, 'dist/cli.js'), 'fleet', 'report', dir, '--html', html], { encoding: 'utf8' });
  if (r.status !== 1) throw new Error(`fleet report exited ${r.status}: ${r.stderr}`);
  const code = screenshot(bin, html, path.resolve(out), path.join(work, 'profile'));
  if (code !== 0) throw new Error(`chromium exited ${code}`);
  process.stdout.write(`${out}: ${statSync(out).size} bytes; ${plan.filter((n) => n.fault).length} faults injected in 24 nodes, ${plan[clean]!.name}'s snapshot taken again after its summary\n`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
