// Follows the Include lines of a Slurm config file (slurm.conf, gres.conf: every file Slurm reads with s_p_parse_file) as
// Slurm does: a relative name is taken from the directory of the file first named in 23.02 and later
// (parse_config.c _parse_include_directive → read_config.c get_extra_conf_path, SLURM_CONF's directory, whatever file
// includes it), from the including file's in 22.05 (_add_full_path). The two differ only for an Include in an
// included file of another directory: then the one that is there is read (the Slurm that runs here reads it, or would
// not start), and where both are, which one cannot be told (a problem). A name with `*` Slurm does not glob (it says
// so and skips it, or fails): a problem. The caller parses each file and replaces Slurm's `%` modifiers.
// Bounded in all (a Prolog reads it): each file read once however often it is included, at most `maxFiles` files
// taken in (an Include taken again counts again: two Includes of one file a level fan out as 2^depth) and `maxText`
// characters over all of them; past either, a problem (what depends on it is then not derived, never guessed).
import path from 'node:path';
import type { Host, ReadResult } from '../host/host.js';

export interface IncludeLine {
  readonly file: string;
  readonly line: number;
  /** The file name as written, Slurm's `%` modifiers not yet replaced. */
  readonly target: string;
}

export type WalkItem<T> = { readonly kind: 'entry'; readonly entry: T } | { readonly kind: 'include'; readonly include: IncludeLine };

export interface WalkOptions<T> {
  /** One file whole, or why not. */
  readonly read: (file: string) => Promise<ReadResult<string>>;
  /** One file's text → its entries and Includes in file order, and the lines Slurm would refuse (`FILE:LINE: ...`). */
  readonly parse: (text: string, file: string) => { readonly order: readonly WalkItem<T>[]; readonly problems: readonly string[] };
  /** An Include's name with Slurm's `%` modifiers replaced (given the entries read so far), or the problem. */
  readonly expand: (inc: IncludeLine, entries: readonly T[]) => { readonly ok: true; readonly value: string } | { readonly ok: false; readonly problem: string };
  readonly maxFiles: number;
  /** Characters over all files taken in, repeats included; `maxTextWords` says it (`16 MiB`). */
  readonly maxText: number;
  readonly maxTextWords: string;
  /** Said after an included file that is not there: what Slurm does then (` (slurmctld would not start)`). */
  readonly missingMeans: string;
}

export interface Walked<T> {
  /** The file named, then each included file in the order it was read. */
  readonly files: readonly string[];
  /** Every entry of every file, in the order Slurm reads them (an Include's entries where the Include stands). */
  readonly entries: readonly T[];
  readonly problems: readonly string[];
}

/** Slurm gives up on deeper nesting long before; this bounds an Include loop. */
export const MAX_DEPTH = 16;

/** Walks `file` and its Includes; throws `FILE: why` when `file` itself is not read. */
export async function walkIncludes<T>(host: Host, file: string, o: WalkOptions<T>): Promise<Walked<T>> {
  const files: string[] = [];
  const entries: T[] = [];
  const problems: string[] = [];
  const top = path.posix.dirname(file);
  const texts = new Map<string, ReadResult<string>>();
  let taken = 0;
  let chars = 0;
  /** Null once read; else why not. */
  const read = async (f: string, depth: number): Promise<{ why: string; missing: boolean } | null> => {
    const known = texts.get(f);
    const text = known ?? (await o.read(f));
    if (!known) texts.set(f, text);
    if (!text.ok) return { why: text.missing ? 'no such file' : text.reason, missing: text.missing };
    if (++taken > o.maxFiles) return { why: `more than ${o.maxFiles} files included in all (an Include loop?), not read`, missing: false };
    if ((chars += text.value.length) > o.maxText) return { why: `more than ${o.maxTextWords} included in all, not read`, missing: false };
    files.push(f);
    const parsed = o.parse(text.value, f);
    problems.push(...parsed.problems);
    for (const item of parsed.order) {
      if (item.kind === 'entry') {
        entries.push(item.entry);
        continue;
      }
      const inc = item.include;
      const named = o.expand(inc, entries);
      if (!named.ok) {
        problems.push(named.problem);
        continue;
      }
      const target = named.value;
      if (target.includes('*')) {
        problems.push(`${inc.file}:${inc.line}: Include ${target}: Slurm does not expand a glob (it skips the line or refuses the file)`);
        continue;
      }
      let full = target.startsWith('/') ? target : path.posix.join(top, target);
      const old = target.startsWith('/') ? full : path.posix.join(path.posix.dirname(inc.file), target);
      if (old !== full) {
        const [now, then] = await Promise.all([host.stat(full), host.stat(old)]);
        if (now.ok && then.ok) {
          problems.push(`${inc.file}:${inc.line}: Include ${target}: both ${full} (Slurm 23.02 on) and ${old} (22.05) are there: which is read cannot be told`);
          continue;
        }
        if (then.ok) full = old;
      }
      if (depth >= MAX_DEPTH) {
        problems.push(`${inc.file}:${inc.line}: Include ${full}: nested more than ${MAX_DEPTH} deep (a loop?)`);
        continue;
      }
      const not = await read(full, depth + 1);
      // (A file too large for the reader that Slurm reads: the problem is this reader's, said without the last words.)
      if (not !== null) problems.push(`${inc.file}:${inc.line}: Include ${full}: ${not.why}${not.missing ? o.missingMeans : ''}`);
    }
    return null;
  };
  const not = await read(file, 0);
  if (not !== null) throw new Error(not.why.startsWith(`${file}:`) ? not.why : `${file}: ${not.why}`);
  return { files, entries, problems };
}
