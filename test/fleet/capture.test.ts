// baseline capture --from-fleet writes only what `baseline validate` accepts: name ranges split into patterns the
// matcher compiles, the reference a node the fleet did not flag, bands drawn from the nodes that agreed only.
import t from 'tap';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { checkBaseline } from '../../src/baseline/load.js';
import { compilePattern, matchesAll, MAX_PATTERN_CHARS } from '../../src/baseline/match.js';
import { captureFromFleet } from '../../src/fleet/capture.js';
import { compressHostlist } from '../../src/fleet/hostlist.js';
import { runFleetReport } from '../../src/fleet/report-command.js';
import { generateFleet } from '../gen/fleet.js';
import { cli } from '../helpers/cli.js';

const CLEAN = { 'link-x8': 0, 'acs-redirect': 0, firmware: 0, 'missing-nic': 0, 'weak-rail': 0 };

t.test('70 names with gaps, and other shapes: every pattern compiles, matches every name and none of the gaps', async (t) => {
  const shapes: [string, string[]][] = [
    ['70 nodes, every other number', Array.from({ length: 70 }, (_, i) => `gpu${String(2 * i + 1).padStart(4, '0')}`)],
    ['300 nodes in runs of two', Array.from({ length: 300 }, (_, i) => `node${String(Math.floor(i / 2) * 3 + (i % 2)).padStart(5, '0')}`)],
    ['long prefixes', Array.from({ length: 40 }, (_, i) => `${'rack-a-row-b-'.repeat(6)}n${String(i * 2).padStart(3, '0')}`)],
    ['names without digits and unpadded numbers', ['login', 'gpu7', 'gpu9', 'gpu10', 'gpu12', 'gpu100']],
  ];
  for (const [what, names] of shapes) {
    const ps = compressHostlist(names);
    const compiled = ps.map((p) => {
      t.ok(p.length <= MAX_PATTERN_CHARS, `${what}: ${p.slice(0, 40)}... within ${MAX_PATTERN_CHARS} characters`);
      return compilePattern(p);
    });
    t.ok(names.every((n) => matchesAll(compiled, n)), `${what}: every name matched (${ps.length} pattern(s))`);
    const taken = new Set(names);
    const gaps = names.map((n) => n.replace(/(\d+)$/, (d) => String(Number(d) + 1).padStart(d.length, '0'))).filter((n) => !taken.has(n));
    t.same(gaps.filter((n) => matchesAll(compiled, n)), [], `${what}: no gap matched`);
  }
  const wide = compressHostlist(Array.from({ length: 70 }, (_, i) => `gpu${String(2 * i + 1).padStart(4, '0')}`));
  t.equal(wide.length, 2, '70 parts: two brackets (64 parts the most one takes)');
});

t.test('from a fleet whose first node has a weak rail: the reference is a clean node, the bands leave the weak node out', async (t) => {
  const dir = path.join(t.testdir(), 'fleet');
  await generateFleet(dir, { n: 8, seed: 31, rates: CLEAN });
  // gpu0001's first rail at 70 %: the same tree as every other node, flagged on bandwidth only.
  const spool = path.join(dir, 'gpu0001.samples.jsonl');
  const lines = readFileSync(spool, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { nic: string; value: number });
  writeFileSync(spool, lines.map((s) => JSON.stringify(s.nic === 'mlx5_0' ? { ...s, value: Math.round(s.value * 70) / 100 } : s)).join('\n') + '\n');
  const run = await runFleetReport({ dir, baseline: null });
  t.equal(run.report.nodes.find((v) => v.node === 'gpu0001')?.status, 'differs', 'the fleet flags gpu0001');
  const c = await captureFromFleet(run, { name: 'hgx', platform: 'bare-metal', at: '2026-12-03T00:00:00Z' });
  t.equal(c.reference, 'gpu0002', 'the first node the fleet did not flag');
  t.same(c.cls.probes?.map((p) => p.samples), [7, 7, 7, 7, 7, 7, 7, 7], 'every band from the 7 nodes that agreed, gpu0001 left out of all');
  await checkBaseline({ version: 1, classes: [c.cls] }, 'captured');
});

t.test('the CLI on 66 nodes with gaps in their names: the class it writes passes baseline validate', async (t) => {
  const root = t.testdir();
  const dir = path.join(root, 'fleet');
  await generateFleet(dir, { n: 132, seed: 32, rates: CLEAN, spools: false });
  for (let i = 2; i <= 132; i += 2) for (const f of [`gpu${String(i).padStart(4, '0')}.tar.gz`]) rmSync(path.join(dir, f));
  const r = cli(['baseline', 'capture', '--from-fleet', dir, '--class', 'hgx']);
  t.equal(r.code, 0, r.stderr);
  const b = JSON.parse(r.stdout) as { classes: { match: string[] }[] };
  t.equal(b.classes[0]!.match.length, 2, 'two patterns: 66 parts do not fit one bracket');
  const file = path.join(root, 'b.json');
  writeFileSync(file, r.stdout);
  const v = cli(['baseline', 'validate', file]);
  t.equal(v.code, 0, v.stderr);
});

t.test('1,100 names without numbers are packed into comma lists: a class within the 4,096 patterns and the states a baseline holds', async (t) => {
  const letters = (i: number): string => Array.from({ length: 3 }, (_, k) => String.fromCharCode(97 + (Math.floor(i / 26 ** k) % 26))).join('');
  const names = Array.from({ length: 1100 }, (_, i) => `login-${letters(i)}`);
  const ps = compressHostlist(names);
  t.equal(ps.length, 44, 'as few patterns as 256 characters allow: 25 names of 9 characters each (25 × 10 − 1 = 249)');
  t.ok(ps.every((p) => p.length <= MAX_PATTERN_CHARS));
  const compiled = ps.map(compilePattern);
  t.ok(names.every((n) => matchesAll(compiled, n)), 'every name matched');
  t.same(['login-zzz', 'login', 'login-aa', `login-${letters(1100)}`].filter((n) => matchesAll(compiled, n)), [], 'no other name');
});
