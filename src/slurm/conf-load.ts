// Reads a slurm.conf and every file its Include lines name, as Slurm does (include-walk.ts: where a relative name is
// looked up, the bounds on files and characters taken in). `%c` is the ClusterName read so far, lowercased
// (_parse_for_format). Files are read through a Host, whole or not at all (readText); the parsing is conf-parse.ts.
import { readTrusted, TEXT_MAX, type Host } from '../host/host.js';
import { parseConf, type ConfEntry } from './conf-parse.js';
import { walkIncludes } from './include-walk.js';

export interface LoadedConf {
  /** The conf named, then each included file in the order it was read. */
  readonly files: readonly string[];
  /** Every entry of every file, in the order slurmctld reads them (an Include's entries where the Include stands). */
  readonly entries: readonly ConfEntry[];
  readonly problems: readonly string[];
}

/** Files taken in, the conf and each Include's (a site's config has a handful). */
export const MAX_FILES = 64;
/** Characters taken in over all files, repeats included. */
export const MAX_TEXT = TEXT_MAX;

/**
 * `trusted`: each file (the conf and every Include) read only when root alone can change it (readTrusted): the
 * Prolog numbers the job's GPUs by it as root. A by-hand `slurm-config` only prints what it read.
 */
export function loadConf(host: Host, file: string, o: { readonly trusted?: boolean } = {}): Promise<LoadedConf> {
  return walkIncludes(host, file, {
    read: (f) => (o.trusted ? readTrusted(host, f, () => host.readText(f)) : host.readText(f)),
    parse: parseConf,
    expand: (inc, entries) => {
      if (!inc.target.includes('%c')) return { ok: true, value: inc.target };
      const cluster = [...entries].reverse().find((e) => e.name === 'clustername');
      if (!cluster) return { ok: false, problem: `${inc.file}:${inc.line}: Include ${inc.target}: %c before any ClusterName (slurmctld refuses this)` };
      return { ok: true, value: inc.target.split('%c').join(cluster.value.toLowerCase()) };
    },
    maxFiles: MAX_FILES,
    maxText: MAX_TEXT,
    maxTextWords: `${MAX_TEXT >> 20} MiB`,
    missingMeans: ' (slurmctld would not start)',
  });
}
