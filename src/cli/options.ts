// The shapes of the command line's values, checked once for every command: an option that takes a value refuses
// a missing or empty one (`check --root` would otherwise read `/`) and one given twice (yargs would hand over an
// array); a number is plain digits in its range (`--window abc` would otherwise be NaN). A refusal is a UsageError.
import { UsageError } from '../errors.js';

/** What yargs hands a coercion: a string, an array when the option came twice, undefined when it had no value. */
type Raw = unknown;

function one(flag: string, v: Raw): string {
  if (Array.isArray(v)) throw new UsageError(`${flag}: given ${v.length} times; give it once`);
  if (v === undefined || v === null || v === '') throw new UsageError(`${flag}: needs a value`);
  return String(v);
}

/** A non-empty string, once. `flag` as the user types it: `--root`, or `<dir>` for a positional. */
export const textValue =
  (flag: string) =>
  (v: Raw): string =>
    one(flag, v);

/** A whole number from `min` to `max`, written as digits only (no sign, exponent, hex or blanks). */
export const countValue =
  (flag: string, min: number, max: number) =>
  (v: Raw): number => {
    const s = one(flag, v);
    const n = /^\d{1,15}$/.test(s) ? Number(s) : NaN;
    if (!(n >= min && n <= max)) throw new UsageError(`${flag} ${s}: want a whole number from ${min} to ${max}`);
    return n;
  };

/** A number above 0 and at most `max`, written as digits with an optional fraction (`1.5`). */
export const amountValue =
  (flag: string, max: number) =>
  (v: Raw): number => {
    const s = one(flag, v);
    const n = /^\d{1,15}(\.\d{1,15})?$/.test(s) ? Number(s) : NaN;
    if (!(n > 0 && n <= max)) throw new UsageError(`${flag} ${s}: want a number above 0 and at most ${max}`);
    return n;
  };

const UNIT_MS: Readonly<Record<string, number>> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `90s`, `90m`, `24h`, `7d` in ms; null for anything else (a sign, a fraction, no unit, another unit). */
export function durationMs(s: string): number | null {
  const m = /^(\d{1,9})([smhd])$/.exec(s);
  return m ? Number(m[1]) * UNIT_MS[m[2]!]! : null;
}

/** A duration above 0 and at most `maxMs`, as `durationMs` reads it; ms. */
export const durationValue =
  (flag: string, maxMs: number) =>
  (v: Raw): number => {
    const s = one(flag, v);
    const n = durationMs(s);
    if (n === null || !(n > 0 && n <= maxMs)) throw new UsageError(`${flag} ${s}: want a duration above 0 and at most ${maxMs / 86_400_000}d, a whole number and a unit (90m, 24h, 7d)`);
    return n;
  };

/** One or more non-empty strings (the option may come several times: `--only a --only b`). */
export const listValue =
  (flag: string) =>
  (v: Raw): string[] => {
    const all = (Array.isArray(v) ? v : [v]).map(String);
    if (v === undefined || all.length === 0) throw new UsageError(`${flag}: needs a value`);
    if (all.some((s) => s === '')) throw new UsageError(`${flag}: an empty value`);
    return all;
  };

/** An option taking one string: `.option('root', text('--root', {...}))`. */
type TextOptions = { describe?: string; default?: string; demandOption?: true; nargs?: 1 };
export const text = <O extends TextOptions>(flag: string, o: O) =>
  ({ ...o, type: 'string', requiresArg: true, coerce: textValue(flag) }) as const;
/** Options taking one string each, by name: the flag a refusal quotes is `--<name>`, so the name is written once. */
export function texts<D extends Record<string, TextOptions>>(d: D): { [K in keyof D & string]: ReturnType<typeof text<D[K]>> } {
  return Object.fromEntries(Object.entries(d).map(([name, o]) => [name, text(`--${name}`, o)])) as { [K in keyof D & string]: ReturnType<typeof text<D[K]>> };
}
/** An option taking one whole number, shown with its range. */
export const count = (flag: string, min: number, max: number, describe: string) =>
  ({ type: 'string', requiresArg: true, describe: `${describe} [a whole number, ${min} to ${max}]`, coerce: countValue(flag, min, max) }) as const;
/** An option taking one positive number, shown with its range. */
export const amount = (flag: string, max: number, describe: string) =>
  ({ type: 'string', requiresArg: true, describe: `${describe} [a number above 0, at most ${max}]`, coerce: amountValue(flag, max) }) as const;
/** An option taking one duration (`7d`, `36h`), handed over in ms. */
export const duration = (flag: string, maxMs: number, describe: string) =>
  ({ type: 'string', requiresArg: true, describe: `${describe} [a whole number and s, m, h or d]`, coerce: durationValue(flag, maxMs) }) as const;
/** An option taking one or more strings. */
export const list = (flag: string, describe?: string) => ({ type: 'array', string: true, describe, coerce: listValue(flag) }) as const;
/** An option taking one or more ids, each value split on commas and blanks (`--only a,b`, `--only "a b"`, `--only a b`). */
export const ids = (flag: string, describe?: string) => ({ type: 'array', string: true, describe, coerce: idsValue(flag) }) as const;
const idsValue =
  (flag: string) =>
  (v: Raw): string[] => {
    const all = listValue(flag)(v).flatMap((s) => s.split(/[\s,]+/)).filter(Boolean);
    if (all.length === 0) throw new UsageError(`${flag}: needs a value`);
    return all;
  };
/** A switch, off unless given (`on`: on unless `--no-<name>`). */
export const flag = (describe: string, on = false) => ({ type: 'boolean', default: on, describe }) as const;
/** A positional taking one string. */
export const word = (name: string, describe?: string) => ({ type: 'string', demandOption: true, describe, coerce: textValue(`<${name}>`) }) as const;
