// Seeded fuzz of the host-pattern matcher. Short names: every accepted pattern agrees with JS RegExp (safe to
// run there, the names being short), globs with a RegExp built from their expansion. Long names: hostile
// patterns stay within a time bound per match. The whole file takes a few seconds.
import t from 'tap';
import { compilePattern } from '../../src/baseline/match.js';
import { NODE_NAME_MAX } from '../../src/slurm/node-name.js';
import { seeded, type Seeded } from '../helpers/seeded.js';

const NAME_CHARS = ['a', 'b', 'A', '0', '1', '7', '-', '.', '_', ' ', '\n', 'é'];
const name = (g: Seeded): string => g.join(NAME_CHARS, g.int(9));

/** A regex of the supported subset, over the names' alphabet. */
function regex(g: Seeded, depth: number): string {
  const atoms = ['a', 'b', '0', '-', '\\.', '.', '\\d', '\\w', '\\s', '\\W', '[ab]', '[^a]', '[0-9_]', '[a-]', '[\\d-]', '[]', '[^]', '\\-', 'é', '\\u0041', '\\x61'];
  const quant = ['', '', '', '*', '+', '?', '*?', '{2}', '{0,2}', '{1,}', '{1,3}?'];
  const parts = Array.from({ length: 1 + g.int(4) }, () => {
    const r = g.int(10);
    const atom = depth > 0 && r < 2 ? `(${r ? '?:' : ''}${regex(g, depth - 1)})` : r === 2 ? g.pick(['^', '$', '\\b', '\\B']) : g.pick(atoms);
    return /^[\^$]|^\\[bB]$/.test(atom) ? atom : atom + g.pick(quant);
  });
  const seq = parts.join('');
  return g.int(5) === 0 ? `${seq}|${regex(g, depth - 1 < 0 ? 0 : depth - 1)}` : seq;
}

t.test('regex: 3000 seeded patterns x 8 names agree with RegExp', async (t) => {
  const g = seeded(0xa11ce);
  let bad = 0;
  for (let i = 0; i < 3000 && bad < 5; i++) {
    const src = regex(g, 2);
    const mine = compilePattern(`/${src}/`);
    const js = new RegExp(src);
    for (let k = 0; k < 8; k++) {
      const h = name(g);
      if (mine.test(h) !== js.test(h)) {
        bad++;
        t.fail(`/${src}/ ~ ${JSON.stringify(h)}: RegExp says ${js.test(h)}`);
      }
    }
  }
  t.equal(bad, 0, 'all agree');
});

t.test('regex: random character soup is accepted only where RegExp accepts it, and then agrees', async (t) => {
  const g = seeded(0xb0b);
  const soup = ['a', 'b', '0', '(', ')', '[', ']', '{', '}', ',', '1', '2', '*', '+', '?', '|', '^', '$', '\\', '-', '.', ':', 'd'];
  let accepted = 0;
  let bad = 0;
  for (let i = 0; i < 5000 && bad < 5; i++) {
    const src = g.join(soup, 1 + g.int(10));
    let mine;
    try {
      mine = compilePattern(`/${src}/`);
    } catch {
      continue;
    }
    accepted++;
    let js: RegExp;
    try {
      js = new RegExp(src);
    } catch (e) {
      bad++;
      t.fail(`/${src}/ accepted, but RegExp says ${(e as Error).message}`);
      continue;
    }
    for (let k = 0; k < 4; k++) {
      const h = g.join(['a', 'b', '0', '1', '{', '}', ']', ',', '-', ':'], g.int(7));
      if (mine.test(h) !== js.test(h)) {
        bad++;
        t.fail(`/${src}/ ~ ${JSON.stringify(h)}: RegExp says ${js.test(h)}`);
      }
    }
  }
  t.equal(bad, 0, `${accepted} accepted patterns agree`);
  t.ok(accepted > 500, 'the soup reaches the matcher');
});

t.test('regex: {m,n} however long it is written means what RegExp reads, or is refused', async (t) => {
  // Leading zeros make a short count long text ({00000000000000000000001} is {1}): RegExp reads the count whatever
  // its length, so the matcher must too, never take the braces for literal text.
  const g = seeded(0x5eed);
  const num = (): string => '0'.repeat(g.int(40)) + String(g.int(4));
  const wrong: string[] = [];
  for (let i = 0; i < 400; i++) {
    const q = g.pick([`{${num()}}`, `{${num()},}`, `{${num()},${num()}}`]);
    const src = `^${g.pick(['a', '(?:ab)', '[ab]', '\\d'])}${q}${g.pick(['', '?'])}$`;
    let js: RegExp;
    try {
      js = new RegExp(src);
    } catch {
      continue; // {2,1}: out of order, a SyntaxError both ways
    }
    let mine;
    try {
      mine = compilePattern(`/${src}/`);
    } catch (e) {
      wrong.push(`/${src}/ refused (${(e as Error).message}), RegExp takes it`);
      continue;
    }
    for (const h of ['', 'a', 'aa', 'aaa', 'ab', 'abab', '1', '12', '123', `a${q}`, `ab${q}`])
      if (mine.test(h) !== js.test(h)) wrong.push(`/${src}/ ~ ${JSON.stringify(h)}: RegExp says ${js.test(h)}`);
  }
  t.same(wrong.slice(0, 5), [], 'every accepted count agrees');
  // A count over MAX_REPEAT is refused however it is written, never read as text.
  const refusal = (src: string): string | null => {
    try {
      compilePattern(src);
      return null;
    } catch (e) {
      return (e as Error).message;
    }
  };
  for (const q of ['{65}', `{${'0'.repeat(30)}65}`, '{1,99999999999999999999}', `{1,${'0'.repeat(30)}65}`]) {
    const src = `/^a${q}$/`;
    const shown = JSON.stringify(src.length > 80 ? `${src.slice(0, 77)}...` : src);
    t.equal(refusal(src), `invalid regex in host pattern ${shown}: repetition ${q} over 64 at offset 2`, q);
  }
});

/** A glob, and the JS RegExp its expansion means (Slurm brackets spelt out number by number). */
function glob(g: Seeded): { pattern: string; oracle: RegExp } {
  let pattern = '';
  let oracle = '^';
  for (let n = 1 + g.int(5); n > 0; n--) {
    const r = g.int(8);
    if (r === 0) [pattern, oracle] = [pattern + '*', oracle + '.*'];
    else if (r === 1) [pattern, oracle] = [pattern + '?', oracle + '.'];
    else if (r === 2) {
      const c = g.pick(['ab', '!a', 'a-c', '^0', '-a', '0a']); // never digits alone: [0-1] is a hostlist range
      [pattern, oracle] = [`${pattern}[${c}]`, `${oracle}[${c.replace(/^!/, '^')}]`];
    } else if (r < 5) {
      const padded = g.int(2) === 0;
      const width = padded ? 2 + g.int(2) : 1;
      const spans = Array.from({ length: 1 + g.int(3) }, () => {
        // Padded: the low bound is written with leading zeros, which makes Slurm (and the matcher) fix the width.
        const lo = g.int(padded ? 10 ** (width - 1) : 30);
        return [lo, lo + g.int(25)] as const;
      });
      const text = spans.map(([lo, hi]) => (lo === hi ? String(lo).padStart(width, '0') : `${String(lo).padStart(width, '0')}-${String(hi).padStart(width, '0')}`)).join(',');
      // As `scontrol show hostnames` writes them: each number padded to its part's low bound as written, wider ones in full.
      const alts = spans.flatMap(([lo, hi]) => Array.from({ length: hi - lo + 1 }, (_, k) => String(lo + k).padStart(padded ? width : String(lo).length, '0')));
      [pattern, oracle] = [`${pattern}[${text}]`, `${oracle}(?:${alts.join('|') || '(?!)'})`];
    } else {
      const c = g.pick(['a', 'b', '0', '1', '-', '.']);
      [pattern, oracle] = [pattern + c, oracle + (c === '.' ? '\\.' : c)];
    }
  }
  return { pattern, oracle: new RegExp(`${oracle}$`) };
}

t.test('glob: 3000 seeded patterns x 8 names agree with their expansion', async (t) => {
  const g = seeded(0x610b);
  const digits = (): string => '0'.repeat(g.int(2) * g.int(3)) + String(g.int(120));
  let bad = 0;
  for (let i = 0; i < 3000 && bad < 5; i++) {
    const { pattern, oracle } = glob(g);
    const mine = compilePattern(pattern);
    for (let k = 0; k < 8; k++) {
      const h = Array.from({ length: 1 + g.int(4) }, () => (g.int(2) ? digits() : g.pick(['a', 'b', '-', '.', 'c', '!']))).join('');
      if (mine.test(h) !== oracle.test(h)) {
        bad++;
        t.fail(`${pattern} ~ ${JSON.stringify(h)}: expansion ${oracle.source} says ${oracle.test(h)}`);
      }
    }
  }
  t.equal(bad, 0, 'all agree');
});

t.test('hostile: 300 seeded patterns against 255-character names, each match bounded', async (t) => {
  const g = seeded(0xdead);
  const pieces = ['(a+)+', '(a|aa)*', '(.*)*', '(a?){30}', '(\\w*\\s?)*', '[a-z]*', 'a{1,64}', '.?', '(?:a|a)+', '*', '?', 'a', '(x|y|.)+'];
  // Bounded in work, not time: the states each match visits (HostPattern.steps), against the automaton's linear bound,
  // (name length + 1) x (3 x states + 1). A backtracking engine needs exponentially many steps on these.
  let worst = 0;
  let ran = 0;
  const over: string[] = [];
  for (let i = 0; i < 300; i++) {
    const body = g.join(pieces, 1 + g.int(20)).slice(0, 250);
    const src = g.int(2) ? `/${body}${g.pick(['$', 'b$', '!'])}/` : body.replace(/[()|{}+\\]/g, '');
    let p;
    try {
      p = compilePattern(src);
    } catch {
      continue;
    }
    for (const h of ['a'.repeat(NODE_NAME_MAX - 1) + '!', 'a'.repeat(NODE_NAME_MAX), g.join(['a', 'b', ' ', 'x'], NODE_NAME_MAX)]) {
      p.test(h);
      const bound = (h.length + 1) * (3 * p.states + 1);
      worst = Math.max(worst, p.steps() / bound);
      if (p.steps() > bound) over.push(`${src} ~ ${h.slice(0, 12)}...: ${p.steps()} steps (bound ${bound})`);
      ran++;
    }
  }
  t.ok(ran > 300, `${ran} matches ran`);
  t.same(over, [], `every match inside its linear bound (worst ${(worst * 100).toFixed(0)}% of it)`);
});
