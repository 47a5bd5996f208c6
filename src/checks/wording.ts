// Wording is data: each record's codes (and a check's title, reason label and page) live in a JSON file beside its
// code (src/checks/<id>.json, src/task/records.json, src/epilog/bandwidth.json, schemas/wording.schema.json) and are
// checked once where they are loaded. A JSON import keeps its keys as literal types, so a code a record does not
// word still fails tsc; but it types `layer` as a plain string, and that is what is checked here, naming file and code.
import type { Layer } from '../model/finding.js';
import type { Wording } from './types.js';

/** Every layer a code may name; the compiler keeps the list complete against the Layer union. */
const LAYERS: Readonly<Record<Layer, true>> = { server: true, fabric: true, scheduler: true, security: true, application: true };
export const LAYER_NAMES = Object.keys(LAYERS) as readonly Layer[];

/** One code's wording as a JSON file gives it: the layer is any string until checked. */
export interface RawWording {
  readonly tells: string;
  readonly do: string;
  readonly layer: string;
}
export type RawCodes = Readonly<Record<string, RawWording>>;
/** The same codes once checked: every layer one of the Layer union. */
export type Worded<C extends RawCodes> = { readonly [K in keyof C]: Wording };

/** A check's wording file: what the registry, the drain reason and the docs test read, and its codes. */
export interface RawCheckWording<C extends RawCodes> {
  readonly title: string;
  readonly reasonLabel: string;
  readonly docs: string;
  readonly codes: C;
}

/** The same, checked. */
export interface CheckWording<C> extends Omit<RawCheckWording<RawCodes>, 'codes'> {
  readonly codes: C;
}

/** A wording file that does not hold what a report needs: a build that must not run. */
export class WordingError extends Error {
  override readonly name = 'WordingError';
}

const isText = (x: unknown): boolean => typeof x === 'string' && x.trim() !== '';
const isLayer = (x: unknown): x is Layer => typeof x === 'string' && Object.hasOwn(LAYERS, x);

/** What is wrong with one code's wording; empty when nothing is. */
function problems(w: unknown): string[] {
  if (typeof w !== 'object' || w === null) return ['not an object with tells, do and layer'];
  const { tells, do: act, layer } = w as Partial<Record<keyof RawWording, unknown>>;
  return [
    ...(isText(tells) ? [] : ['tells is not a non-empty string']),
    ...(isText(act) ? [] : ['do is not a non-empty string']),
    ...(isLayer(layer) ? [] : [`layer ${JSON.stringify(layer) ?? 'missing'} is not one of ${LAYER_NAMES.join(', ')}`]),
  ];
}

/** The codes of one record, checked: throws a WordingError naming the file and each code that is wrong. */
export function worded<C extends RawCodes>(file: string, codes: C): Worded<C> {
  const entries = typeof codes === 'object' && codes !== null ? Object.entries(codes) : [];
  const bad = entries.flatMap(([code, w]) => problems(w).map((p) => `${code}: ${p}`));
  if (entries.length === 0) bad.push('no codes');
  if (bad.length) throw new WordingError(`${file}: ${bad.join('; ')}`);
  return codes as C & Worded<C>;
}

/** A check's wording file, checked: its title, reason label and page as non-empty strings, and its codes. */
export function checkWording<C extends RawCodes>(file: string, w: RawCheckWording<C>): CheckWording<Worded<C>> {
  const bad = (['title', 'reasonLabel', 'docs'] as const).filter((k) => !isText(w[k])).map((k) => `${k} is not a non-empty string`);
  if (bad.length) throw new WordingError(`${file}: ${bad.join('; ')}`);
  return { title: w.title, reasonLabel: w.reasonLabel, docs: w.docs, codes: worded(file, w.codes) };
}
