// What each Slurm release does with the node scripts, as read in SchedMD/slurm's source (docs/slurm-versions.md says
// where): one table, so the merge (conf-merge.ts) asks "does this release ..." and never compares numbers itself.

/** The releases gdrgate knows, oldest first; the oldest is also what an unknown site is assumed to run. */
export const RELEASES = ['22.05', '23.02', '23.11', '24.05', '24.11', '25.05', '25.11', '26.05'] as const;
export type Release = (typeof RELEASES)[number];
export const OLDEST: Release = '22.05';

/** What a release turned on, with the first release that has it: each switch of `features()` said once. */
const SINCE = {
  /** Prolog= and Epilog= may be given on several lines, run one after another (read_config.c: S_P_ARRAY). */
  multiPrologLines: '24.05',
  /** PrologTimeout= and EpilogTimeout=, each overriding PrologEpilogTimeout for its side. */
  splitTimeouts: '25.05',
  /** Prolog=/Epilog= may be a bare name, found beside slurm.conf and shipped to configless nodes. */
  relativePrologEpilog: '23.11',
  /** The same for TaskProlog=. */
  relativeTaskProlog: '25.11',
  /** HealthCheckNodeState=START_ONLY: slurmd runs HealthCheckProgram as it starts, with no interval (slurmd.c). */
  healthStartOnly: '25.11',
  /** HealthCheckNodeState=REBOOT_ONLY: the same after a reboot slurmctld asked for. */
  healthRebootOnly: '26.05',
} as const satisfies Record<string, Release>;

/** PrologFlags every release accepts (read_config.c prolog_str2flags), then those a release added, with it. */
const BASE_FLAGS = ['Alloc', 'Contain', 'DeferBatch', 'NoHold', 'Serial', 'X11'];
const FLAGS_SINCE = { ForceRequeueOnFail: '23.02', RunInJob: '24.05' } as const satisfies Record<string, Release>;

export type Features = { readonly [K in keyof typeof SINCE]: boolean } & {
  /** PrologFlags the release accepts; any other fails slurmctld's start. */
  readonly prologFlags: readonly string[];
  /**
   * PrologFlags that set Alloc themselves (prolog_str2flags: Contain, X11, RunInJob, ForceRequeueOnFail; NoHold in
   * _validate_and_set_defaults): with one of these the site's Prolog already runs at allocation. 26.05's DeferBatch
   * sets it too (its CHANGELOG), but Alloc is still written beside it there: explicit, harmless, and one plan that
   * holds whatever the release.
   */
  readonly impliesAlloc: readonly string[];
};

export function features(r: Release): Features {
  const at = (min: Release): boolean => RELEASES.indexOf(r) >= RELEASES.indexOf(min);
  const switches = Object.fromEntries(Object.entries(SINCE).map(([k, min]) => [k, at(min)])) as { [K in keyof typeof SINCE]: boolean };
  const flags = (Object.keys(FLAGS_SINCE) as (keyof typeof FLAGS_SINCE)[]).filter((k) => at(FLAGS_SINCE[k]));
  return { ...switches, prologFlags: [...BASE_FLAGS, ...flags], impliesAlloc: IMPLIES_ALLOC };
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
