// Host patterns at their edges: each limit at its exact value and one past it, the rarely written escapes and
// classes against JS RegExp on every UTF-16 code unit, a `//` that is no regex, and the automaton's visit stamps
// across their wrap (the agent keeps compiled patterns for its whole life), and an anchored pattern's early stop.
import t from 'tap';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { loadBaseline, selectClass } from '../../src/baseline/load.js';
import { compilePattern, MAX_PATTERN_CHARS } from '../../src/baseline/match.js';
import { MAX_STATES, Nfa } from '../../src/baseline/nfa.js';
import { parseRegex } from '../../src/baseline/regex.js';
import { baselineOf, HGX } from '../checks/_trees.js';
import { exactly } from '../helpers/exactly.js';

const refusal = (p: string): string | null => {
  try {
    compilePattern(p);
    return null;
  } catch (e) {
    return (e as Error).message;
  }
};

t.test('every code unit: rare escapes and classes mean what RegExp means', async (t) => {
  // \v and [\b] (backspace) are written seldom; [0-93] overlaps a range with a point inside it; [^\x00-\ufffe] is the
  // last code unit alone; \s holds \r and U+FEFF, `.` leaves \r out; U+007F and U+0080 sit on the ASCII table's edge.
  const atoms = ['.', '\\d', '\\D', '\\w', '\\W', '\\s', '\\S', '\\v', '[\\b]', '[0-93]', '[a-a]', '[^a]', '[^\\x00-\\ufffe]', '[\\s\\S]', '[^\\u007f]'];
  const wrong: string[] = [];
  for (const a of atoms) {
    const mine = compilePattern(`/^${a}$/`);
    const js = new RegExp(`^${a}$`);
    for (let c = 0; c <= 0xffff; c++) {
      const h = String.fromCharCode(c);
      if (mine.test(h) !== js.test(h)) wrong.push(`/^${a}$/ ~ U+${c.toString(16).padStart(4, '0')}: RegExp says ${js.test(h)}`);
    }
  }
  t.same(wrong.slice(0, 5), [], `${atoms.length} atoms x 65,536 code units`);
  t.equal(compilePattern('node[a-a]').test('nodea'), true, 'a glob range of one character');
});

t.test('\\0 before a digit is a legacy octal escape in RegExp: refused, never read as NUL and a digit', async (t) => {
  t.equal(new RegExp('^\\01$').test('\x01'), true, 'RegExp reads \\01 as U+0001');
  t.equal(refusal('/^\\01$/'), 'invalid regex in host pattern "/^\\\\01$/": unsupported escape \\0 at offset 3');
  t.equal(compilePattern('/^a\\0$/').test('a\0'), true, '\\0 alone is NUL');
});

t.test('// is no empty regex matching every node: a name that is two slashes', async (t) => {
  const p = compilePattern('//');
  t.same([p.test('gpu001'), p.test(''), p.test('//')], [false, false, true]);
  t.same(['/', '!//'].map((s) => compilePattern(s).test('gpu001')), [false, false]);
});

t.test('limits at their exact value are taken, one past them refused', async (t) => {
  t.equal(MAX_STATES, 2000);
  const atMost = compilePattern('/(?:a{64}){31}a{11}|gpu/'); // 31 x 64 + 11 + 3 characters, a split and the match state
  t.equal(atMost.states, MAX_STATES);
  t.same([atMost.test('gpu001'), atMost.test('cpu001')], [true, false]);
  t.equal(refusal('/(?:a{64}){31}a{12}|gpu/'), 'invalid regex in host pattern "/(?:a{64}){31}a{12}|gpu/": expands to more than 2000 automaton states');
  const long = `gpu${'*'.repeat(MAX_PATTERN_CHARS - 3)}`;
  t.equal(compilePattern(long).test('gpu1'), true, `a pattern of ${MAX_PATTERN_CHARS} characters`);
  t.equal(refusal(`${long}*`), `host pattern "${long.slice(0, 77)}..." has 257 characters (at most 256)`);
  // Nine digits in either bound; ten in either is refused.
  const nine = compilePattern('gpu[1-123456789]');
  t.same([nine.test('gpu123456789'), nine.test('gpu123456790'), compilePattern('gpu[123456789]').test('gpu123456789')], [true, false, true]);
  t.equal(refusal('gpu[1-1234567890]'), 'a bound of more than 9 digits in [1-1234567890] in host pattern "gpu[1-1234567890]"');
  t.equal(refusal('gpu[1234567890-1234567891]'), 'a bound of more than 9 digits in [1234567890-123456789] in host pattern "gpu[1234567890-1234567891]"');
});

t.test('the automaton states of a whole file: exactly 200,000 load, one state more is refused', async (t) => {
  const cls = await baselineOf(HGX);
  const file = path.join(t.testdir(), 'baseline.json');
  const full = '/(?:a{64}){31}a{11}|gpu/'; // 2,000 states: 100 of them make the sum
  await writeFile(file, JSON.stringify({ version: 1, classes: [{ ...cls, name: 'x', match: Array.from({ length: 100 }, () => full) }] }));
  t.equal(selectClass(await loadBaseline(file), 'gpu001', file).name, 'x');
  await writeFile(file, JSON.stringify({ version: 1, classes: [{ ...cls, name: 'x', match: [...Array.from({ length: 100 }, () => full), '/a/'] }] }));
  await t.rejects(loadBaseline(file), exactly(`${file}: /classes/0/match/100: the host patterns up to here make 200002 automaton states, more than the 200000 a baseline may hold in all (every Prolog runs them)`));
});

t.test('visit stamps past 2^31 (a resident agent matching for months) neither loop nor grow the work', async (t) => {
  // Each alternative leads to the same state: without the per-position marks the live set doubles every character.
  const nfa = new Nfa(parseRegex('^(?:a|a)(?:a|a)(?:a|a)(?:a|a)(?:a|a)(?:a|a)(?:a|a)(?:a|a)(?:a|a)(?:a|a)(?:a|a)(?:a|a)b'));
  const name = `${'a'.repeat(12)}b`;
  t.equal(nfa.test(name), true);
  const fresh = nfa.steps;
  (nfa as unknown as { stamp: number }).stamp = 0x7fffffff - 4; // a stamp the Int32Array marks can barely hold
  t.same([nfa.test(name), nfa.steps], [true, fresh], 'the same answer and the same work');
});

t.test('an anchored pattern stops at the first character nothing can follow: the rest of the name costs nothing', async (t) => {
  for (const p of ['gpu[001-064]', '/^gpu\\d+$/', 'rack[1-2]-*']) {
    const c = compilePattern(p);
    const work = (h: string): [boolean, number] => [c.test(h), c.steps()];
    t.same(work(`x${'a'.repeat(254)}`), work('xa'), `${p}: a 255-character name that fails at its first character`);
    t.same(work(`gpx${'1'.repeat(252)}`), work('gpx1'), `${p}: one that fails at its third`);
  }
});
