// Reads a JSON file the gate is configured with: size-capped, empty and malformed named as such.
// Synchronous (a local file of a few KiB; an async read would start libuv's thread pool for it), opened
// O_NONBLOCK and checked on the open descriptor, so a FIFO put there can neither block nor be read.
import fs from 'node:fs';
import { ConfigError } from '../errors.js';

export const MAX_FILE_BYTES = 16 * 1024 * 1024;

function readRegular(file: string, what: string): string {
  const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw new ConfigError(`${file}: ${what} is not a regular file`);
    if (st.size > MAX_FILE_BYTES) throw new ConfigError(`${file}: ${what} is ${st.size} bytes, more than ${MAX_FILE_BYTES}`);
    return fs.readFileSync(fd, 'utf8');
  } finally {
    fs.closeSync(fd);
  }
}

export async function readJsonFile(file: string, what: string): Promise<unknown> {
  let text: string;
  try {
    text = readRegular(file, what);
  } catch (e) {
    if (e instanceof ConfigError) throw e;
    throw new ConfigError(`${file}: cannot read ${what}: ${(e as Error).message}`, { cause: e });
  }
  if (text.trim() === '') throw new ConfigError(`${file}: ${what} is empty`);
  let data: unknown;
  try {
    data = JSON.parse(text) as unknown;
  } catch (e) {
    throw new ConfigError(`${file}: ${what} is not valid JSON: ${(e as Error).message}`, { cause: e });
  }
  const twice = keyTokensAtMost(text, keyCount(data)) ? null : duplicateKey(text);
  if (twice) throw new ConfigError(`${file}: ${what} names the key ${JSON.stringify(twice.key)} twice in one object (line ${twice.line}): which one is meant cannot be told`);
  return data;
}

/** The keys of every object in a parsed value (a loop, not recursion: JSON.parse takes any depth). */
function keyCount(v: unknown): number {
  const stack = [v];
  let n = 0;
  while (stack.length) {
    const x = stack.pop();
    if (x === null || typeof x !== 'object') continue;
    if (Array.isArray(x)) for (let i = 0; i < x.length; i++) stack.push(x[i]);
    else {
      // for…in: an object JSON.parse made has own keys only (Object.entries costs an array per key, ten times this).
      const o = x as Record<string, unknown>;
      for (const k in o) {
        n++;
        stack.push(o[k]);
      }
    }
  }
  return n;
}

const KEY_END = /"[ \t\n\r]*:/g;

/**
 * Whether the text holds at most `n` keys: every key ends in a quote and a colon, so fewer such ends than the parsed
 * value's keys means none was named twice (JSON.parse keeps one of each). A string holding `":` only costs the full
 * scan below (duplicateKey). Native: ~0.05 ms on a real 8-GPU class of 30 KB, which every Prolog reads.
 */
function keyTokensAtMost(text: string, n: number): boolean {
  let seen = 0;
  KEY_END.lastIndex = 0;
  while (KEY_END.test(text)) if (++seen > n) return false;
  return true;
}

/** A quote or a brace: between strings, all that tells objects and keys apart in text JSON.parse took. */
const MARKS = /["{}]/g;
const COLON = /\s*:/y;

/** Where the string opened at `from` (a quote) closes: the next quote not escaped (an even run of backslashes before it). */
function stringEnd(text: string, from: number): number {
  for (let q = text.indexOf('"', from + 1); ; q = text.indexOf('"', q + 1)) {
    if (q < 0) return text.length; // never, in text JSON.parse took
    let k = q - 1;
    while (text.charCodeAt(k) === 0x5c) k--;
    if ((q - 1 - k) % 2 === 0) return q;
  }
}

/**
 * The first key named twice in one object (its second occurrence's line), or null. JSON.parse keeps the last of
 * them, other readers the first (RFC 8259 §4: names SHOULD be unique, behaviour otherwise unpredictable): a config
 * or baseline that says two things is refused, never read as one. Keys compare as decoded (`"a"` is `"\u0061"`).
 * Linear in the text, no regex backtracking over a string however long (indexOf from quote to quote).
 */
function duplicateKey(text: string): { key: string; line: number } | null {
  const open: (Set<string> | null)[] = [];
  MARKS.lastIndex = 0;
  for (let m = MARKS.exec(text); m !== null; m = MARKS.exec(text)) {
    const at = m.index;
    if (m[0] === '{') open.push(null);
    else if (m[0] === '}') open.pop();
    else {
      const end = stringEnd(text, at);
      MARKS.lastIndex = end + 1;
      COLON.lastIndex = end + 1;
      if (!COLON.test(text)) continue;
      const raw = text.slice(at, end + 1);
      const key = raw.includes('\\') ? (JSON.parse(raw) as string) : raw.slice(1, -1);
      const keys = open[open.length - 1] ?? new Set<string>();
      open[open.length - 1] = keys;
      if (keys.has(key)) return { key, line: text.slice(0, at).split('\n').length };
      keys.add(key);
    }
  }
  return null;
}
