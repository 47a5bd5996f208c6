// Reads a slurm.conf and every file its Include lines name, as Slurm does: a relative name is taken from the directory
// of the slurm.conf named in 23.02 and later (parse_config.c _parse_include_directive → read_config.c
// get_extra_conf_path, SLURM_CONF's directory, whatever file includes it), from the including file's in 22.05
// (_add_full_path). The two differ only for an Include in an included file of another directory: then the one that is
// there is read (the Slurm that runs here reads it, or would not start), and where both are, which one cannot be told
// (a problem). `%c` is the ClusterName read so far, lowercased (_parse_for_format). Files are read through a Host,
// whole or not at all (readText); the parsing is conf-parse.ts.
// Bounded in all (a Prolog reads it): each file read once however often it is included, at most MAX_FILES files taken
// in (an Include taken again counts again: two Includes of one file a level fan out as 2^depth) and MAX_TEXT
// characters over all of them; past either, a problem (the numbering is then not derived, never guessed).
import path from 'node:path';
import { readTrusted, TEXT_MAX, type Host } from '../host/host.js';
import { parseConf, type ConfEntry } from './conf-parse.js';

export interface LoadedConf {
  /** The conf named, then each included file in the order it was read. */
  readonly files: readonly string[];
  /** Every entry of every file, in the order slurmctld reads them (an Include's entries where the Include stands). */
  readonly entries: readonly ConfEntry[];
  readonly problems: readonly string[];
}

/** Slurm gives up on deeper nesting long before; this bounds an Include loop. */
const MAX_DEPTH = 16;
/** Files taken in, the conf and each Include's (a site's config has a handful). */
export const MAX_FILES = 64;
/** Characters taken in over all files, repeats included. */
export const MAX_TEXT = TEXT_MAX;

/**
 * `trusted`: each file (the conf and every Include) read only when root alone can change it (readTrusted): the
 * Prolog numbers the job's GPUs by it as root. A by-hand `slurm-config` only prints what it read.
 */
export async function loadConf(host: Host, file: string, o: { readonly trusted?: boolean } = {}): Promise<LoadedConf> {
  const files: string[] = [];
  const entries: ConfEntry[] = [];
  const problems: string[] = [];
  const top = path.posix.dirname(file);
  const texts = new Map<string, Awaited<ReturnType<Host['readText']>>>();
  let taken = 0;
  let chars = 0;
  /** Null once read; else why not. */
  const read = async (f: string, depth: number): Promise<{ why: string; missing: boolean } | null> => {
    const known = texts.get(f);
    const text = known ?? (await (o.trusted ? readTrusted(host, f, () => host.readText(f)) : host.readText(f)));
    if (!known) texts.set(f, text);
    if (!text.ok) return { why: text.missing ? 'no such file' : text.reason, missing: text.missing };
    if (++taken > MAX_FILES) return { why: `more than ${MAX_FILES} files included in all (an Include loop?), not read`, missing: false };
    if ((chars += text.value.length) > MAX_TEXT) return { why: `more than ${MAX_TEXT >> 20} MiB included in all, not read`, missing: false };
    files.push(f);
    const parsed = parseConf(text.value, f);
    problems.push(...parsed.problems);
    for (const item of parsed.order) {
      if (item.kind === 'entry') {
        entries.push(item.entry);
        continue;
      }
      const inc = item.include;
      let target = inc.target;
      if (target.includes('%c')) {
        const cluster = [...entries].reverse().find((e) => e.name === 'clustername');
        if (!cluster) {
          problems.push(`${inc.file}:${inc.line}: Include ${inc.target}: %c before any ClusterName (slurmctld refuses this)`);
          continue;
        }
        target = target.split('%c').join(cluster.value.toLowerCase());
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
      // (A file too large for readText slurmctld reads: the problem is this reader's, said without the last words.)
      if (not !== null) problems.push(`${inc.file}:${inc.line}: Include ${full}: ${not.why}${not.missing ? ' (slurmctld would not start)' : ''}`);
    }
    return null;
  };
  const not = await read(file, 0);
  if (not !== null) throw new Error(not.why.startsWith(`${file}:`) ? not.why : `${file}: ${not.why}`);
  return { files, entries, problems };
}
