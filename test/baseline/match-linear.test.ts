// Host patterns run in every Prolog, synchronously, where the run's deadline cannot interrupt them: the reported
// hostile patterns finish at once, backtracking-only syntax is refused (at load and `baseline validate`), and
// every documented form still means what it meant.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import t from 'tap';
import { loadBaseline, selectClass } from '../../src/baseline/load.js';
import { compilePattern, MAX_PATTERN_CHARS } from '../../src/baseline/match.js';
import { NODE_NAME_MAX } from '../../src/slurm/node-name.js';
import { baselineOf, HGX } from '../checks/_trees.js';

/** The match and its work: states visited, a count the machine's load cannot change. */
const run = (p: string, h: string): { got: boolean; steps: number; bound: number } => {
  const c = compilePattern(p);
  const got = c.test(h);
  // No backtracking: every state is entered at most once per position of the name, so the work is linear in its
  // length, (length + 1) x (3 x states + 1) at most. A backtracking matcher needs 2^34 steps on the first case.
  return { got, steps: c.steps(), bound: (h.length + 1) * (3 * c.states + 1) };
};

t.test('the reported patterns end at once: work linear in the name', async (t) => {
  for (const [p, h, want] of [
    ['/(a+)+$/', `${'a'.repeat(34)}!`, false],
    ['/(a+)+$/', 'a'.repeat(35), true],
    ['/^(\\w+\\s?)*$/', `${'gpu'.repeat(11)}!`, false],
    ['/(a|aa)+b/', 'a'.repeat(NODE_NAME_MAX), false],
    ['*a*a*a*a*a*a*a*a*a*a*a*a*b', 'a'.repeat(NODE_NAME_MAX), false],
    ['*a*a*a*a*a*a*a*a*a*a*a*a*', 'a'.repeat(NODE_NAME_MAX), true],
    ['gpu[1-9][1-9][1-9][1-9][1-9][1-9]x', `gpu${'1'.repeat(200)}`, false],
  ] as const) {
    const { got, steps, bound } = run(p, h);
    t.equal(got, want, `${p} ~ ${h.slice(0, 12)}... (${h.length} chars)`);
    t.ok(steps > 0 && steps <= bound, `${p}: ${steps} states visited (linear bound ${bound})`);
  }
  // Twice the name, at most about twice the work (plus the one extra position): linear, not exponential.
  const once = run('/(a+)+$/', `${'a'.repeat(60)}!`).steps;
  const twice = run('/(a+)+$/', `${'a'.repeat(121)}!`).steps;
  t.ok(twice <= 2 * once + 3 * compilePattern('/(a+)+$/').states + 1, `n = 61: ${once} steps, 2n = 122: ${twice} steps`);
});

t.test('backtracking-only syntax is refused with a reason', async (t) => {
  for (const [p, why] of [
    ['/(gpu)\\1/', /backreferences are not supported/],
    ['/(?<r>a)\\k<r>/', /backreferences are not supported/],
    ['/gpu(?=0)/', /lookahead and lookbehind are not supported/],
    ['/(?<!x)gpu/', /lookahead and lookbehind are not supported/],
    ['/\\p{L}/', /unsupported escape \\p/],
    ['/a{65}/', /repetition \{65\} over 64/],
    ['/((a{60}){60})/', /more than 2000 automaton states/],
    ['/a**/', /nothing to repeat/],
    ['gpu[9-1]', /empty range 9-1/],
    ['gpu[1234567890]', /more than 9 digits/],
    ['gpu[z-a]', /range out of order/],
    [`gpu${'*'.repeat(MAX_PATTERN_CHARS)}`, /has 259 characters \(at most 256\)/],
  ] as const) t.throws(() => compilePattern(p), why, p.slice(0, 30));
});

t.test('a name longer than a node name can be matches nothing', async (t) => {
  t.equal(compilePattern('*').test('a'.repeat(NODE_NAME_MAX)), true);
  t.equal(compilePattern('*').test('a'.repeat(NODE_NAME_MAX + 1)), false);
});

t.test('more of every documented form', async (t) => {
  for (const [p, h, want] of [
    ['/dgx/', 'node-dgx-3', true], // unanchored, as RegExp.test
    ['/^gpu(0[0-9]|1[0-2])$/', 'gpu11', true],
    ['/^gpu(0[0-9]|1[0-2])$/', 'gpu13', false],
    ['/^a{2,3}$/', 'aaaa', false],
    ['/gpu\\d{3}\\b/', 'gpu001-ib', true],
    ['/[^\\d]$/', 'gpu1', false],
    ['/a{/', 'a{', true], // `{` that is no repetition is a literal, as in JS
    ['gpu[1-3][1-3]', 'gpu13', true],
    ['rack[1-12]-[01-08]', 'rack10-07', true],
    ['rack[1-2][01-08]', 'rack108', true], // every split of the digits counts: 1 + 08
    ['gpu[1-16]', 'gpu007', false], // each part has its low bound's width, as Slurm gives it: gpu007 is not in gpu[1-16]
    ['gpu[1-16]', 'gpu7', true],
    ['gpu[0-9]', 'gpu10', false],
    ['gpu[001-064,100]', 'gpu1000', false],
    ['x[5-123]', 'x99', true],
    ['x[5-123]', 'x124', false],
    ['node[a-c]?', 'nodec7', true],
    ['node[!a-c]', 'noded', true],
    ['node[^a-c]', 'nodea', false],
  ] as const) t.equal(compilePattern(p).test(h), want, `${p} ~ ${h}`);
});

t.test('baseline load (and so `baseline validate`) refuses such a pattern, naming where it is', async (t) => {
  const cls = await baselineOf(HGX);
  const file = path.join(t.testdir(), 'baseline.json');
  await writeFile(file, JSON.stringify({ version: 1, classes: [{ ...cls, match: ['gpu[001-128]', '/(gpu)\\1/'] }] }));
  await t.rejects(loadBaseline(file), /\/classes\/0\/match\/1: invalid regex in host pattern "\/\(gpu\)\\\\1\/": backreferences are not supported/);
  await writeFile(file, JSON.stringify({ version: 1, classes: [{ ...cls, match: ['/(a+)+$/'] }] }));
  const b = await loadBaseline(file);
  t.throws(() => selectClass(b, `${'a'.repeat(34)}!`, file), /no class matches node/, 'a hostile name against a hostile pattern: a config error, at once');
});

t.test('the first class that matches is the node\'s, in the file\'s order', async (t) => {
  const cls = (name: string, match: string[]) => ({ name, match }) as unknown as Parameters<typeof selectClass>[0]['classes'][number];
  const b = { version: 1, classes: [cls('wide', ['gpu*']), cls('narrow', ['gpu00[1-9]']), cls('last', ['*'])] } as unknown as Parameters<typeof selectClass>[0];
  t.equal(selectClass(b, 'gpu001', 'b.json').name, 'wide', 'gpu001 matches all three: the first');
  t.equal(selectClass(b, 'cpu1', 'b.json').name, 'last');
});

t.test('the patterns of a file are bounded together: 20,000 patterns of 850 states each are refused at load, at once', async (t) => {
  const cls = await baselineOf(HGX);
  const file = path.join(t.testdir(), 'baseline.json');
  const big = '/(.?){64}(.?){64}(.?){64}(.?){64}(.?){64}(.?){64}(.?){40}z/';
  const states = compilePattern(big).states;
  t.equal(states, 850, "one pattern within its own bound (2,000 states)");
  const perClass = 1000;
  const classes = Array.from({ length: 20 }, (_, i) => ({ ...cls, name: `x${i}`, match: Array.from({ length: perClass }, () => big) }));
  await writeFile(file, JSON.stringify({ version: 1, classes: [...classes, { ...cls, name: 'real', match: ['*'] }] }));
  const k = Math.floor(200_000 / states); // the pattern that passes the sum
  await t.rejects(
    loadBaseline(file),
    new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: /classes/0/match/${k}: the host patterns up to here make ${(k + 1) * states} automaton states, more than the 200000 a baseline may hold in all \\(every Prolog runs them\\)$`),
  );
  await writeFile(file, JSON.stringify({ version: 1, classes: [{ ...cls, name: 'x', match: Array.from({ length: 4097 }, (_, i) => `gpu${i}`) }] }));
  await t.rejects(loadBaseline(file), /^.*: \/classes\/0\/match: must NOT have more than 4096 items$/, 'more than 4096 patterns in a class');
  // Just under the sum: loads, and selecting the class behind them stays within a Prolog's time.
  await writeFile(file, JSON.stringify({ version: 1, classes: [{ ...cls, name: 'x', match: Array.from({ length: k }, () => big) }, { ...cls, name: 'real', match: ['*'] }] }));
  const b = await loadBaseline(file);
  t.equal(selectClass(b, 'gpu001', file).name, 'real');
});
