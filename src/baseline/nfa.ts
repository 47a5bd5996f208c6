// A Thompson NFA run as a set of states (no backtracking): time O(name length x states) whatever the pattern,
// so no host pattern can stall a Prolog (the run's deadline cannot interrupt synchronous work).
import { CharSet, WORD } from './charset.js';

/** What the pattern parsers build: one character, sequence, choice, bounded repetition, zero-width assertion. */
export type Node =
  | { readonly k: 'set'; readonly set: CharSet }
  | { readonly k: 'cat'; readonly xs: readonly Node[] }
  | { readonly k: 'alt'; readonly xs: readonly Node[] }
  | { readonly k: 'rep'; readonly x: Node; readonly min: number; readonly max: number | null }
  | { readonly k: 'assert'; readonly at: Assertion };

export type Assertion = 'start' | 'end' | 'word' | 'not-word';

/** Most states one pattern may expand to (repetitions are copied): bounds the time of every match. */
export const MAX_STATES = 2000;

const OP_CHAR = 0;
const OP_SPLIT = 1;
const OP_ASSERT = 2;
const OP_MATCH = 3;

export class Nfa {
  private readonly op: number[] = [];
  private readonly out1: number[] = [];
  private readonly out2: number[] = [];
  private readonly sets: (CharSet | null)[] = [];
  private readonly asserts: (Assertion | null)[] = [];
  private readonly start: number;
  /** Begins with `^`: once no state is live, nothing later can match. */
  private readonly anchored: boolean;
  /** Visit stamps for the closure: a state is entered at most once per position. */
  private mark: Int32Array = new Int32Array(0);
  private stamp = 0;
  /** States the last test() took off its stack: the work it did, bounded by (length + 1) x (3 x size + 1). */
  private work = 0;

  constructor(root: Node) {
    const match = this.add(OP_MATCH, -1, -1);
    this.start = this.build(root, match);
    this.mark = new Int32Array(this.op.length);
    const first = root.k === 'cat' ? root.xs[0] : root;
    this.anchored = first?.k === 'assert' && first.at === 'start';
  }

  get size(): number {
    return this.op.length;
  }

  /** The work of the last test(), in states visited (a figure the machine's speed does not change). */
  get steps(): number {
    return this.work;
  }

  private add(op: number, a: number, b: number, set: CharSet | null = null, at: Assertion | null = null): number {
    if (this.op.length >= MAX_STATES) throw new Error(`expands to more than ${MAX_STATES} automaton states`);
    this.op.push(op);
    this.out1.push(a);
    this.out2.push(b);
    this.sets.push(set);
    this.asserts.push(at);
    return this.op.length - 1;
  }

  /** The states of `n`, entered at the returned state, leaving to `next`. Built back to front. */
  private build(n: Node, next: number): number {
    switch (n.k) {
      case 'set':
        return this.add(OP_CHAR, next, -1, n.set);
      case 'assert':
        return this.add(OP_ASSERT, next, -1, null, n.at);
      case 'cat':
        return n.xs.reduceRight((to, x) => this.build(x, to), next);
      case 'alt': {
        if (n.xs.length === 0) return next;
        let s = this.build(n.xs[n.xs.length - 1]!, next);
        for (let i = n.xs.length - 2; i >= 0; i--) s = this.add(OP_SPLIT, this.build(n.xs[i]!, next), s);
        return s;
      }
      case 'rep': {
        let s = next;
        if (n.max === null) {
          const loop = this.add(OP_SPLIT, -1, next);
          this.out1[loop] = this.build(n.x, loop);
          s = loop;
        } else for (let i = n.min; i < n.max; i++) s = this.add(OP_SPLIT, this.build(n.x, s), next);
        for (let i = 0; i < n.min; i++) s = this.build(n.x, s);
        return s;
      }
    }
  }

  private holds(at: Assertion, text: string, i: number): boolean {
    if (at === 'start') return i === 0;
    if (at === 'end') return i === text.length;
    const before = i > 0 && WORD.has(text.charCodeAt(i - 1));
    const after = i < text.length && WORD.has(text.charCodeAt(i));
    return (before !== after) === (at === 'word');
  }

  /** Adds the closure of `s` at position `i` to `into`; true when it reaches the match state. */
  private close(s0: number, text: string, i: number, into: number[], stack: number[]): boolean {
    stack.push(s0);
    let matched = false;
    while (stack.length) {
      const s = stack.pop()!;
      this.work++;
      if (s < 0 || this.mark[s] === this.stamp) continue;
      this.mark[s] = this.stamp;
      const op = this.op[s]!;
      if (op === OP_CHAR) into.push(s);
      else if (op === OP_MATCH) matched = true;
      else if (op === OP_SPLIT) stack.push(this.out2[s]!, this.out1[s]!);
      else if (this.holds(this.asserts[s]!, text, i)) stack.push(this.out1[s]!);
    }
    return matched;
  }

  /** Whether some substring of `text` matches (RegExp.prototype.test without flags); anchors make it whole. */
  test(text: string): boolean {
    const active: number[] = []; // character states live at position i
    const pending: number[] = []; // where the characters before i led
    const stack: number[] = [];
    this.work = 0;
    if (this.stamp > 0x3fffffff) this.mark.fill((this.stamp = 0));
    for (let i = 0; ; i++) {
      this.stamp++;
      active.length = 0;
      for (const s of pending) if (this.close(s, text, i, active, stack)) return true;
      // A fresh start at every position: the search is unanchored unless the pattern says otherwise.
      if (this.close(this.start, text, i, active, stack)) return true;
      if (i === text.length || (active.length === 0 && this.anchored)) return false;
      const c = text.charCodeAt(i);
      pending.length = 0;
      for (const s of active) if (this.sets[s]!.has(c)) pending.push(this.out1[s]!);
    }
  }
}
