// The `/regex/` subset of host patterns, parsed to the matcher's tree (nfa.ts). It means what a JS RegExp
// without flags means for it; what needs backtracking (backreferences, lookaround) is refused with a reason.
import { ANY, CharSet, DIGIT, DOT, NONE, SPACE, WORD } from './charset.js';
import type { Node } from './nfa.js';

/** Largest count in `{m,n}`: host names are short, and each count copies the repeated part. */
export const MAX_REPEAT = 64;

const cat = (xs: Node[]): Node => (xs.length === 1 ? xs[0]! : { k: 'cat', xs });
const one = (set: CharSet): Node => ({ k: 'set', set });

const CLASS_ESCAPES: Readonly<Record<string, CharSet>> = {
  d: DIGIT,
  D: DIGIT.complement(),
  w: WORD,
  W: WORD.complement(),
  s: SPACE,
  S: SPACE.complement(),
};
const CONTROL: Readonly<Record<string, string>> = { t: '\t', n: '\n', r: '\r', f: '\f', v: '\v' };
/** A counted repetition at a position (sticky): the pattern is at most MAX_PATTERN_CHARS, so is this text. */
const BRACES = /\{(\d+)(,(\d*))?\}/y;

class Parser {
  private i = 0;
  constructor(private readonly src: string) {}

  private fail(why: string): never {
    throw new Error(`${why} at offset ${this.i}`);
  }

  private peek(k = 0): string | undefined {
    return this.src[this.i + k];
  }

  parse(): Node {
    const n = this.alternation();
    if (this.i < this.src.length) this.fail(`unmatched ${JSON.stringify(this.peek())}`);
    return n;
  }

  private alternation(): Node {
    const xs = [this.sequence()];
    while (this.peek() === '|') {
      this.i++;
      xs.push(this.sequence());
    }
    return xs.length === 1 ? xs[0]! : { k: 'alt', xs };
  }

  private sequence(): Node {
    const xs: Node[] = [];
    for (let c = this.peek(); c !== undefined && c !== '|' && c !== ')'; c = this.peek()) {
      const atom = this.atom();
      const q = this.quantifier();
      if (q === null) xs.push(atom);
      else if (atom.k === 'assert') this.fail('nothing to repeat');
      else xs.push({ k: 'rep', x: atom, ...q });
    }
    return cat(xs);
  }

  /**
   * `{m}`, `{m,}`, `{m,n}` when the text is one (else `{` is a literal, as in a JS RegExp without `u`), however many
   * digits it is written with: RegExp reads `{00000000000000000000001}` as `{1}`, and one over MAX_REPEAT is refused,
   * never taken for text.
   */
  private braces(): { min: number; max: number | null; len: number } | null {
    BRACES.lastIndex = this.i;
    const m = BRACES.exec(this.src);
    if (!m) return null;
    const min = Number(m[1]);
    const max = m[2] === undefined ? min : m[3] === '' ? null : Number(m[3]);
    if (max !== null && max < min) this.fail(`numbers out of order in ${m[0]}`);
    if (min > MAX_REPEAT || (max ?? 0) > MAX_REPEAT) this.fail(`repetition ${m[0]} over ${MAX_REPEAT}`);
    return { min, max, len: m[0].length };
  }

  private quantifier(): { min: number; max: number | null } | null {
    const c = this.peek();
    let q: { min: number; max: number | null } | null = null;
    if (c === '*') q = { min: 0, max: null };
    else if (c === '+') q = { min: 1, max: null };
    else if (c === '?') q = { min: 0, max: 1 };
    const b = c === '{' ? this.braces() : null;
    if (b) q = b;
    if (q === null) return null;
    this.i += b ? b.len : 1;
    // Lazy or greedy is the same for "does it match"; a second quantifier is a JS syntax error.
    if (this.peek() === '?') this.i++;
    const again = this.peek();
    if (again === '*' || again === '+' || again === '?' || (again === '{' && this.braces())) this.fail('nothing to repeat');
    return q;
  }

  private atom(): Node {
    const c = this.src[this.i++]!;
    if (c === '(') return this.group();
    if (c === '[') return one(this.charClass());
    if (c === '.') return one(DOT);
    if (c === '^') return { k: 'assert', at: 'start' };
    if (c === '$') return { k: 'assert', at: 'end' };
    if (c === '*' || c === '+' || c === '?') this.fail('nothing to repeat');
    if (c === '{') {
      this.i--;
      if (this.braces()) this.fail('nothing to repeat');
      this.i++;
    }
    if (c === '\\') {
      const e = this.peek();
      if (e === 'b' || e === 'B') {
        this.i++;
        return { k: 'assert', at: e === 'b' ? 'word' : 'not-word' };
      }
      return one(this.escape(false));
    }
    return one(CharSet.of(c));
  }

  private group(): Node {
    if (this.peek() === '?') {
      const head = this.src.slice(this.i, this.i + 3);
      if (head.startsWith('?:')) this.i += 2;
      else if (/^\?<[A-Za-z_$]/.test(head)) this.i = this.src.indexOf('>', this.i) + 1 || this.fail('unterminated group name');
      else if (/^\?(=|!|<=|<!)/.test(head)) this.fail('lookahead and lookbehind are not supported (they need backtracking)');
      else this.fail('invalid group');
    }
    const inner = this.alternation();
    if (this.src[this.i++] !== ')') this.fail('unterminated group');
    // Wrapped: a group is an atom even around an assertion alone (`($)+` is valid JS).
    return { k: 'cat', xs: [inner] };
  }

  /** After a backslash: one character's set. `inClass`: `\b` is backspace, as in JS. */
  private escape(inClass: boolean): CharSet {
    const e = this.src[this.i++];
    if (e === undefined) this.fail('\\ at end of pattern');
    const cls = CLASS_ESCAPES[e];
    if (cls) return cls;
    const ctl = CONTROL[e];
    if (ctl) return CharSet.of(ctl);
    if (inClass && e === 'b') return CharSet.of('\b');
    if (e === '0' && !/\d/.test(this.peek() ?? '')) return CharSet.of('\0');
    if (/[1-9]/.test(e) || e === 'k') this.fail('backreferences are not supported (they need backtracking)');
    const hex = e === 'x' ? 2 : e === 'u' ? 4 : 0;
    if (hex) {
      const digits = this.src.slice(this.i, this.i + hex);
      if (digits.length !== hex || !/^[0-9a-fA-F]+$/.test(digits)) this.fail(`\\${e} needs ${hex} hex digits`);
      this.i += hex;
      return CharSet.of(String.fromCharCode(parseInt(digits, 16)));
    }
    if (/[A-Za-z0-9]/.test(e)) this.fail(`unsupported escape \\${e}`);
    return CharSet.of(e);
  }

  /** After `[`: the set up to the closing `]` (`[]` matches nothing, `[^]` anything). */
  private charClass(): CharSet {
    const negated = this.peek() === '^';
    if (negated) this.i++;
    const parts: CharSet[] = [];
    for (;;) {
      const c = this.src[this.i++];
      if (c === undefined) this.fail('unterminated character class');
      if (c === ']') break;
      const lo = c === '\\' ? this.escape(true) : CharSet.of(c);
      if (this.peek() === '-' && this.peek(1) !== ']' && this.peek(1) !== undefined) {
        this.i++;
        const h = this.src[this.i++]!;
        const hi = h === '\\' ? this.escape(true) : CharSet.of(h);
        parts.push(classRange(lo, hi, (why) => this.fail(why)));
      } else parts.push(lo);
    }
    const set = parts.length ? CharSet.union(parts) : NONE;
    return negated ? (parts.length ? set.complement() : ANY) : set;
  }
}

/** `a-z` in a class: both ends single characters, in order (JS refuses the rest, or reads it oddly). */
export function classRange(lo: CharSet, hi: CharSet, fail: (why: string) => never): CharSet {
  const [a, b] = [lo.ranges, hi.ranges];
  if (a.length !== 1 || b.length !== 1 || a[0]![0] !== a[0]![1] || b[0]![0] !== b[0]![1]) fail('a class escape cannot end a range');
  if (a[0]![0] > b[0]![0]) fail('range out of order in character class');
  return CharSet.range(a[0]![0], b[0]![0]);
}

/** Throws Error saying what is wrong and where. */
export function parseRegex(src: string): Node {
  return new Parser(src).parse();
}
