// Host patterns of baseline classes (NHC globs, Slurm ranges, /regex/, negation and lists) and their errors.
import t from 'tap';
import { compilePattern, matchesAll } from '../../src/baseline/match.js';
import { MAX_RANGE_PARTS } from '../../src/baseline/hostlist.js';
import { exactly } from '../helpers/exactly.js';

const table: [string, string, boolean][] = [
  ['gpu*', 'gpu017', true],
  ['gpu*', 'login1', false],
  ['gpu?', 'gpu7', true],
  ['gpu?', 'gpu17', false],
  ['gpu[001-064]', 'gpu007', true],
  ['gpu[001-064]', 'gpu7', false],
  ['gpu[001-064]', 'gpu065', false],
  ['gpu[001-064,100]', 'gpu100', true],
  ['gpu[1-16]', 'gpu12', true],
  ['gpu[1-16]', 'gpu17', false],
  ['rack[1-2]-gpu[01-08]', 'rack2-gpu08', true],
  ['rack[1-2]-gpu[01-08]', 'rack3-gpu08', false],
  ['node[abc]', 'nodeb', true],
  ['node[!abc]', 'nodeb', false],
  ['/^dgx-h100-\\d+$/', 'dgx-h100-12', true],
  ['/^dgx-h100-\\d+$/', 'dgx-a100-12', false],
  ['a.b', 'aXb', false],
  ['a.b', 'a.b', true],
  // As `scontrol show hostnames` expands them (Slurm 22.05, 24.11): each part its own width, wider numbers in full.
  ['gpu[01-100]', 'gpu100', true],
  ['gpu[01-100]', 'gpu099', false],
  ['gpu[1-9,010-012]', 'gpu010', true],
  ['gpu[1-9,010-012]', 'gpu10', false],
  ['gpu[001-064,1000]', 'gpu1000', true],
  ['gpu[1-16]', 'gpu007', false],
  ['gpu[1-010]', 'gpu10', true],
  ['gpu[1-010]', 'gpu010', false],
  // Commas outside brackets separate names, as in a Slurm hostlist.
  ['gpu[01-04],cpu01', 'cpu01', true],
  ['gpu[01-04],cpu01', 'gpu03', true],
  ['gpu[01-04],cpu01', 'cpu02', false],
  ['node[a,c]', 'nodec', true],
  // A '-' that ends a glob class is itself, as fnmatch has it: no range.
  ['gpu[a-]', 'gpu-', true],
  ['gpu[a-]', 'gpua', true],
  ['gpu[a-]', 'gpub', false],
];

t.test('host patterns: glob, Slurm ranges, regex', async (t) => {
  for (const [p, h, want] of table) t.equal(compilePattern(p).test(h), want, `${p} ~ ${h}`);
});

t.test('negation and lists', async (t) => {
  const ps = ['gpu[001-064]', '!gpu013'].map(compilePattern);
  t.equal(matchesAll(ps, 'gpu012'), true);
  t.equal(matchesAll(ps, 'gpu013'), false);
  t.equal(matchesAll(['!gpu013'].map(compilePattern), 'gpu012'), false, 'only negations match nothing');
});

t.test('bad patterns are errors naming the pattern', async (t) => {
  t.throws(() => compilePattern('/gpu[/'), /invalid regex in host pattern "\/gpu\[\/"/);
  t.throws(() => compilePattern('gpu[001-064'), /unclosed \[/);
  t.throws(() => compilePattern('!'), /empty host pattern/);
  t.throws(() => compilePattern('gpu[]'), /empty \[\]/);
  // `[!]` and `[^]` are the same glob (bash and fnmatch take `[^]` for the three characters, Python's fnmatch too):
  // both refused, never a class of one any character that `gpu[^]` would put every gpuX in.
  for (const p of ['gpu[!]', 'gpu[^]', '!gpu[^]']) t.throws(() => compilePattern(p), exactly(`empty [] in host pattern ${JSON.stringify(p)}`), p);
  // A Slurm range with a blank or a sign in it: as a class of characters it matched gpu5 and "gpu " for gpu[1-2, 5],
  // gpu1 but never gpu10-gpu16 for gpu[1-8, 10-16] (scontrol reads them as ranges).
  const ranges: readonly [string, string][] = [['gpu[1-2, 5]', '1-2, 5'], ['gpu[1-8, 10-16]', '1-8, 10-16'], ['gpu[+1-2]', '+1-2'], ['gpu[1-2,\t3]', '1-2,\t3'], ['gpu[1,a]', '1,a']];
  for (const [p, inner] of ranges)
    t.throws(() => compilePattern(p), exactly(`[${inner}] is neither a Slurm range (digits, '-' and ',', no blank or sign: as gpu[1-8,10-16]) nor a class of characters a node name may hold in host pattern ${JSON.stringify(p)}`), p);
  // Digits, dashes and commas that make no range: as a class of characters gpu[1-] put gpu- in the class.
  for (const inner of ['1-', '-1', '1--2', '1-2-3', '01-', '1,,2', '1,', '-', ','])
    t.throws(() => compilePattern(`gpu[${inner}]`), exactly(`[${inner}] is not a Slurm range (each part a number, or two joined by one '-': as gpu[1-8,10-16]); a class of digits and '-' is written as a /regex/ in host pattern ${JSON.stringify(`gpu[${inner}]`)}`), inner);
  t.equal(compilePattern('gpu[a-]').test('gpu-'), true, 'a class of characters with a letter stays one');
  t.throws(() => compilePattern(',,'), /^no name in a comma-separated list in host pattern ",,"$/);
  // Empty names in a list are dropped, as scontrol show hostnames drops them.
  for (const p of ['gpu1,,gpu2', 'gpu[01-04],', ',gpu1']) t.equal(compilePattern(p).test('gpu1') || compilePattern(p).test('gpu01'), true, p);
  t.equal(compilePattern('gpu1,,gpu2').test('gpu3'), false);
});

t.test('a Slurm range of exactly MAX_RANGE_PARTS parts is read; one part more is refused', async (t) => {
  const parts = (n: number): string => `gpu[${Array.from({ length: n }, (_, i) => i + 1).join(',')}]`;
  t.equal(MAX_RANGE_PARTS, 64);
  const p = compilePattern(parts(MAX_RANGE_PARTS));
  t.same([p.test('gpu1'), p.test('gpu64'), p.test('gpu65')], [true, true, false]);
  t.throws(() => compilePattern(parts(MAX_RANGE_PARTS + 1)), /^more than 64 parts in \[1,2,3,4,5,6,7,8,9,10\.\.\.\] in host pattern "gpu\[1,2,3,/);
});
