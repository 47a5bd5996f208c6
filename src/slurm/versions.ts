// What each Slurm release does with the node scripts, as read in SchedMD/slurm's source (docs/slurm-versions.md says
// where): one table, so the merge (conf-merge.ts) asks "does this release ..." and never compares numbers itself.

/** The releases gdrgate knows, oldest first; the oldest is also what an unknown site is assumed to run. */
export const RELEASES = ['22.05', '23.02', '23.11', '24.05', '24.11', '25.05', '25.11', '26.05'] as const;
export type Release = (typeof RELEASES)[number];
export const OLDEST: Release = '22.05';

export interface Features {
  /** Prolog= and Epilog= may be given on several lines, run one after another (read_config.c: S_P_ARRAY, 24.05). */
  readonly multiPrologLines: boolean;
  /** PrologFlags the release accepts (read_config.c prolog_str2flags); any other fails slurmctld's start. */
  readonly prologFlags: readonly string[];
  /** PrologTimeout= and EpilogTimeout=, each overriding PrologEpilogTimeout for its side (25.05). */
  readonly splitTimeouts: boolean;
  /** Prolog=/Epilog= may be a bare name, found beside slurm.conf and shipped to configless nodes (23.11). */
  readonly relativePrologEpilog: boolean;
  /** The same for TaskProlog= (25.11). */
  readonly relativeTaskProlog: boolean;
  /**
   * PrologFlags that set Alloc themselves (prolog_str2flags: Contain, X11, RunInJob, ForceRequeueOnFail; NoHold in
   * _validate_and_set_defaults): with one of these the site's Prolog already runs at allocation. 26.05's DeferBatch
   * sets it too (its CHANGELOG), but Alloc is still written beside it there: explicit, harmless, and one plan that
   * holds whatever the release.
   */
  readonly impliesAlloc: readonly string[];
}

const BASE_FLAGS = ['Alloc', 'Contain', 'DeferBatch', 'NoHold', 'Serial', 'X11'];

export function features(r: Release): Features {
  const at = (min: Release): boolean => RELEASES.indexOf(r) >= RELEASES.indexOf(min);
  return {
    multiPrologLines: at('24.05'),
    prologFlags: [...BASE_FLAGS, ...(at('23.02') ? ['ForceRequeueOnFail'] : []), ...(at('24.05') ? ['RunInJob'] : [])],
    splitTimeouts: at('25.05'),
    relativePrologEpilog: at('23.11'),
    relativeTaskProlog: at('25.11'),
    impliesAlloc: IMPLIES_ALLOC,
  };
}

/** The flags that set Alloc in every release (features().impliesAlloc adds a release's own). */
const IMPLIES_ALLOC = ['Contain', 'X11', 'RunInJob', 'ForceRequeueOnFail', 'NoHold'];

/** `slurm 22.05.8`, `slurm-wlm 23.11.4`, `slurm 25.05.0-0rc1` → its release; null when it names none. */
export function parseVersion(text: string): { release: Release; exact: string; note: string | null } | null {
  const m = /\b(\d{2})\.(\d{2})(?:\.(\d+))?/.exec(text);
  if (!m) return null;
  const exact = m[3] === undefined ? `${m[1]}.${m[2]}` : `${m[1]}.${m[2]}.${m[3]}`;
  const seen = `${m[1]}.${m[2]}`;
  if ((RELEASES as readonly string[]).includes(seen)) return { release: seen as Release, exact, note: null };
  const newer = seen > RELEASES[RELEASES.length - 1]!;
  const release = newer ? RELEASES[RELEASES.length - 1]! : OLDEST;
  return { release, exact, note: `Slurm ${seen} is ${newer ? 'newer' : 'older'} than the releases gdrgate knows (${OLDEST}-${RELEASES[RELEASES.length - 1]}): treated as ${release}` };
}
