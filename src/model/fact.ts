// A fact read from the node: there, not there, or not knowable (and why). Three states, so that every check has to
// say what "unknown" means for it (a `skip` with the reason), instead of a null that reads as "absent" by accident.
export type Fact<T> =
  | { readonly state: 'present'; readonly value: T }
  | { readonly state: 'absent' }
  | { readonly state: 'unknown'; readonly why: string };

/** A fact that cannot be absent (a limit every process has, a listing where no directory means an empty list). */
export type Readable<T> = Exclude<Fact<T>, { readonly state: 'absent' }>;

export type Present<T> = Extract<Fact<T>, { readonly state: 'present' }>;
export type Unknown = Extract<Fact<never>, { readonly state: 'unknown' }>;

export const present = <T>(value: T): Present<T> => ({ state: 'present', value });
export const ABSENT: Fact<never> = { state: 'absent' };
export const unknown = (why: string): Unknown => ({ state: 'unknown', why });

/** The value when present; undefined when absent or unknown (for display and for code that only reads what is there). */
export function valueOf<T>(f: Fact<T>): T | undefined {
  return f.state === 'present' ? f.value : undefined;
}

/** How a report shows a fact: its value, `none` when absent, `unknown (why)` when it could not be read. */
export function factText<T>(f: Fact<T>, show: (v: T) => string = String): string {
  return f.state === 'present' ? show(f.value) : f.state === 'absent' ? 'none' : `unknown (${f.why})`;
}

/** Why a fact could not be read, or null: the first of several facts a finding depends on. */
export function whyUnknown(...fs: readonly Fact<unknown>[]): string | null {
  for (const f of fs) if (f.state === 'unknown') return f.why;
  return null;
}

/** A fact inside another (ACS inside config space): an absent or unknown outer fact makes the inner one unknown. */
export function within<T, U>(outer: Fact<T>, pick: (v: T) => Fact<U>, absentWhy: string): Fact<U> {
  if (outer.state === 'present') return pick(outer.value);
  return outer.state === 'absent' ? unknown(absentWhy) : outer;
}

/** The value, or null when absent or unknown: for code that reads only what is there. */
export function nul<T>(f: Fact<T>): T | null {
  return f.state === 'present' ? f.value : null;
}
