// `npm run bench`, the fleet part: `gdrgate fleet report DIR --json` on realistic generated fleets of N = 1,000 and
// 10,000 8-GPU nodes (test/gen/fleet-real.ts: one class, faults at known rates, five samples per rail, no two
// snapshots alike, each with the summary its node writes in `fleet collect`), cached under the temp directory
// between runs (keyed by a digest of the compiled generator and gate code). Prints wall time, CPU time and peak RSS
// of the whole command, growth from the smaller to the larger N against N log N, and the detection: every injected
// fault found, no clean node flagged. BENCH_FLEET=1000,10000 sets the sizes; BENCH_FLEET_SNAPSHOTS=1 also times the
// smallest fleet with its summaries set aside (every node read from its snapshot, the path before summaries).
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { GenFleetNode } from '../test/gen/fleet.js';
import { generateRealFleet } from '../test/gen/fleet-real.js';

const REPO = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const CLI = path.join(REPO, 'dist/cli.js');
const SIZES = (process.env.BENCH_FLEET ?? '1000,10000').split(',').map(Number);
const SEED = 42;
const TIME = '/usr/bin/time';

/** The compiled code a generated fleet comes from (the generator, and the gate's snapshot builder it writes with). */
const BUILT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');

/**
 * A digest of that code: a fleet cached by another build holds the snapshots that build wrote (fewer files, say),
 * and would be timed as if this one had written them.
 */
function buildKey(): string {
  const h = createHash('sha256');
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.js')) h.update(p.slice(BUILT.length)).update(readFileSync(p));
    }
  };
  walk(path.join(BUILT, 'src'));
  walk(path.join(BUILT, 'test/gen'));
  return h.digest('hex').slice(0, 12);
}
const KEY = buildKey();

/** The generated fleet of n nodes, from the cache when a complete one of this build is there (others removed). */
async function fleet(n: number): Promise<{ dir: string; plan: GenFleetNode[] }> {
  const stem = `gdrgate-bench-realfleet-${n}-${SEED}`;
  const dir = path.join(tmpdir(), `${stem}-${KEY}`);
  for (const old of readdirSync(tmpdir())) if ((old === stem || old.startsWith(`${stem}-`)) && !old.startsWith(`${stem}-${KEY}`)) rmSync(path.join(tmpdir(), old), { recursive: true, force: true });
  const planFile = path.join(dir, 'plan.json');
  if (existsSync(planFile)) return { dir, plan: JSON.parse(readFileSync(planFile, 'utf8')) as GenFleetNode[] };
  const tmp = `${dir}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  const t = Date.now();
  const plan = await generateRealFleet(tmp, { n, seed: SEED, summaries: true, verifyEvery: 50 });
  writeFileSync(path.join(tmp, 'plan.json'), JSON.stringify(plan));
  rmSync(dir, { recursive: true, force: true });
  renameSync(tmp, dir);
  process.stderr.write(`generated ${n} nodes in ${((Date.now() - t) / 1000).toFixed(1)} s (${dir})\n`);
  return { dir, plan };
}

interface Run {
  readonly wallS: number;
  readonly cpuS: number;
  readonly rssMB: number;
  readonly report: { summary: { flagged: number; fromSummary: number; fromSnapshot: number }; nodes: { node: string; status: string }[] };
}

function run(dir: string): Run {
  const hasTime = existsSync(TIME);
  // A cached fleet keeps the times it was generated with (an hour before): its age is not what is measured here.
  const args = ['fleet', 'report', dir, '--json', '--max-age', '3650d'];
  const t = process.hrtime.bigint();
  const r = hasTime
    ? spawnSync(TIME, ['-f', 'GDRGATE-TIME %e %U %S %M', process.execPath, CLI, ...args], { encoding: 'utf8', maxBuffer: 1 << 30 })
    : spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', maxBuffer: 1 << 30 });
  const wall = Number(process.hrtime.bigint() - t) / 1e9;
  if (r.status !== 0 && r.status !== 1) throw new Error(`fleet report exited ${r.status}: ${r.stderr}`);
  const m = /GDRGATE-TIME ([\d.]+) ([\d.]+) ([\d.]+) (\d+)/.exec(r.stderr ?? '');
  return { wallS: m ? Number(m[1]) : wall, cpuS: m ? Number(m[2]) + Number(m[3]) : NaN, rssMB: m ? Number(m[4]) / 1024 : NaN, report: JSON.parse(r.stdout) as Run['report'] };
}

function detection(plan: readonly GenFleetNode[], report: Run['report']): string {
  const status = new Map(report.nodes.map((v) => [v.node, v.status]));
  const missed = plan.filter((n) => n.fault && status.get(n.name) !== 'differs').map((n) => n.name);
  const invented = plan.filter((n) => !n.fault && status.get(n.name) !== 'ok').map((n) => n.name);
  const faults = plan.filter((n) => n.fault).length;
  return `${faults - missed.length}/${faults} injected faults found${missed.length ? ` (missed ${missed.join(', ')})` : ''}, ${invented.length} clean node(s) flagged${invented.length ? ` (${invented.slice(0, 5).join(', ')})` : ''}`;
}

const line = (n: number, what: string, r: Run, plan: readonly GenFleetNode[]): string =>
  `fleet report N=${n} (${what}; judged from ${r.report.summary.fromSummary} summaries, ${r.report.summary.fromSnapshot} snapshots): wall ${r.wallS.toFixed(2)} s, CPU ${r.cpuS.toFixed(2)} s, peak RSS ${r.rssMB.toFixed(0)} MB; ${detection(plan, r.report)}`;

const results: { n: number; r: Run }[] = [];
for (const n of SIZES) {
  const { dir, plan } = await fleet(n);
  const files = readdirSync(dir).filter((f) => f.endsWith('.tar.gz')).length;
  const r = run(dir);
  results.push({ n, r });
  console.log(line(n, `${files} distinct snapshots with summaries + spools`, r, plan));
}
if (process.env.BENCH_FLEET_SNAPSHOTS === '1' && SIZES.length) {
  // The summaries moved aside (and back): every node read from its snapshot.
  const n = Math.min(...SIZES);
  const { dir, plan } = await fleet(n);
  const aside = `${dir}.summaries-aside`;
  mkdirSync(aside, { recursive: true });
  const moved = readdirSync(dir).filter((f) => f.endsWith('.summary.json'));
  for (const f of moved) renameSync(path.join(dir, f), path.join(aside, f));
  try {
    console.log(line(n, 'the same fleet, summaries set aside', run(dir), plan));
  } finally {
    for (const f of moved) renameSync(path.join(aside, f), path.join(dir, f));
    rmSync(aside, { recursive: true, force: true });
  }
}
const [a, b] = [results[0], results[results.length - 1]];
if (a && b && b.n > a.n) {
  const nlogn = (b.n * Math.log(b.n)) / (a.n * Math.log(a.n));
  console.log(`fleet report growth ${a.n} → ${b.n}: wall ×${(b.r.wallS / a.r.wallS).toFixed(1)}, CPU ×${(b.r.cpuS / a.r.cpuS).toFixed(1)} (N log N: ×${nlogn.toFixed(1)}); goal at 10,000: ≤ 10 s and ≤ 500 MB`);
}
