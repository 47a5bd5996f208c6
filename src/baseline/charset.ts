// Sets of UTF-16 code units for the host-pattern matcher (as a JS RegExp without the `u` flag sees a string).

const MAX_UNIT = 0xffff;

/** Sorted, merged, inclusive [lo, hi] pairs. */
type Ranges = readonly (readonly [number, number])[];

function normalize(rs: Ranges): [number, number][] {
  const sorted = [...rs].sort((a, b) => a[0] - b[0]);
  const out: [number, number][] = [];
  for (const [lo, hi] of sorted) {
    const last = out[out.length - 1];
    if (last && lo <= last[1] + 1) last[1] = Math.max(last[1], hi);
    else out.push([lo, hi]);
  }
  return out;
}

export class CharSet {
  /** ASCII looked up in one step: host names are ASCII, and this runs for every character of every match. */
  private readonly ascii = new Uint8Array(128);
  private readonly wide: [number, number][];
  readonly ranges: [number, number][];

  constructor(ranges: Ranges) {
    this.ranges = normalize(ranges);
    this.wide = this.ranges.filter(([, hi]) => hi >= 128);
    for (const [lo, hi] of this.ranges) for (let c = lo; c <= Math.min(hi, 127); c++) this.ascii[c] = 1;
  }

  has(c: number): boolean {
    if (c < 128) return this.ascii[c] === 1;
    for (const [lo, hi] of this.wide) if (c >= lo && c <= hi) return true;
    return false;
  }

  static of(...chars: string[]): CharSet {
    return new CharSet(chars.map((ch) => [ch.charCodeAt(0), ch.charCodeAt(0)]));
  }

  static range(lo: number, hi: number): CharSet {
    return new CharSet([[lo, hi]]);
  }

  static union(sets: readonly CharSet[]): CharSet {
    return new CharSet(sets.flatMap((s) => s.ranges));
  }

  complement(): CharSet {
    const out: [number, number][] = [];
    let next = 0;
    for (const [lo, hi] of this.ranges) {
      if (lo > next) out.push([next, lo - 1]);
      next = hi + 1;
    }
    if (next <= MAX_UNIT) out.push([next, MAX_UNIT]);
    return new CharSet(out);
  }
}

export const DIGIT = CharSet.range(0x30, 0x39);
export const WORD = new CharSet([[0x30, 0x39], [0x41, 0x5a], [0x5f, 0x5f], [0x61, 0x7a]]);
/** JS `\s`: WhiteSpace and LineTerminator. */
export const SPACE = new CharSet([[0x09, 0x0d], [0x20, 0x20], [0xa0, 0xa0], [0x1680, 0x1680], [0x2000, 0x200a], [0x2028, 0x2029], [0x202f, 0x202f], [0x205f, 0x205f], [0x3000, 0x3000], [0xfeff, 0xfeff]]);
/** JS `.` without the `s` flag: anything but a line terminator. */
export const DOT = new CharSet([[0x0a, 0x0a], [0x0d, 0x0d], [0x2028, 0x2029]]).complement();
export const NONE = new CharSet([]);
export const ANY = NONE.complement();
