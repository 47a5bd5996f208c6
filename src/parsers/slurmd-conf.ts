// Which slurm.conf a running slurmd reads, from its command line and the environment it was started with
// (/proc/<pid>/cmdline and /proc/<pid>/environ, NUL-separated). slurmd's precedence (slurmd.c
// _establish_configuration, Slurm 20.11 to 25.05): a reconfigure's re-exec names its conf-cache
// (SLURMD_RECONF_CONF_CACHE); --conf-server fetches the files (configless); then -f FILE, then SLURM_CONF, then the
// default file compiled in where it is there, else configless again (fetch_config: SLURM_CONF_SERVER, else DNS SRV
// records; the comment above _establish_configuration ranks SLURM_CONF_SERVER second, its code does not). The options
// are read as getopt_long reads slurmd's (opt_string "bcCd:Df:F::GhL:Mn:N:svVZ", the same short options since 20.11;
// long options may be abbreviated to a unique prefix); anything this reading does not know (an option of another
// version, a relative file) is "cannot tell", never a guess. Pure.

export type SlurmdConf =
  /** slurmd reads this file (absolute). */
  | { readonly kind: 'file'; readonly file: string; readonly from: string }
  /** Configless (--conf-server): slurmd fetched the files into its conf-cache (linked as /run/slurm/conf). */
  | { readonly kind: 'configless'; readonly from: string }
  /** No file told: slurmd reads the default file compiled into it where it is there, else it is configless. */
  | { readonly kind: 'default' }
  | { readonly kind: 'unknown'; readonly why: string };

/** Short options that take an argument (':' in opt_string); 'F' takes one only when attached ('::'). */
const WITH_ARG = new Set(['d', 'f', 'L', 'n', 'N']);
const FLAGS = new Set(['b', 'c', 'C', 'D', 'F', 'G', 'h', 'M', 's', 'v', 'V', 'Z']);
/** slurmd's long options and whether each takes an argument (required_argument), 25.05's. */
const LONG: ReadonlyMap<string, boolean> = new Map([
  ['authinfo', true],
  ['ca-cert-file', true],
  ['conf', true],
  ['conf-server', true],
  ['extra', true],
  ['instance-id', true],
  ['instance-type', true],
  ['parameters', true],
  ['systemd', false],
  ['version', false],
]);

/** The NUL-separated strings of a cmdline or environ file (the last one ends with NUL). */
export function nulList(bytes: Uint8Array): string[] {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  const parts = text.split('\0');
  if (parts.at(-1) === '') parts.pop();
  return parts;
}

/** A long option as getopt_long matches it: the exact name, else the one name it is a prefix of; null: unknown or ambiguous. */
function longName(given: string): string | null {
  if (LONG.has(given)) return given;
  const matches = [...LONG.keys()].filter((n) => n.startsWith(given));
  return given !== '' && matches.length === 1 ? matches[0]! : null;
}

type Options = { readonly f: string | null; readonly confServer: boolean } | { readonly why: string };

function options(argv: readonly string[]): Options {
  let f: string | null = null;
  let confServer = false;
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') break;
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      const name = longName(eq < 0 ? a.slice(2) : a.slice(2, eq));
      if (name === null) return { why: `slurmd's option ${JSON.stringify(a)} is not one this reading knows` };
      if (LONG.get(name) && eq < 0) i++;
      if (name === 'conf-server') confServer = true;
      continue;
    }
    if (!a.startsWith('-') || a === '-') continue; // getopt_long permutes: an operand is skipped
    for (let j = 1; j < a.length; j++) {
      const c = a[j]!;
      if (WITH_ARG.has(c)) {
        const value = j + 1 < a.length ? a.slice(j + 1) : argv[++i];
        if (value === undefined) return { why: `slurmd's option -${c} has no argument` };
        if (c === 'f') f = value;
        break;
      }
      if (c === 'F') break; // -F[feature]: the rest of the word is its argument
      if (!FLAGS.has(c)) return { why: `slurmd's option -${c} is not one this reading knows` };
    }
  }
  return { f, confServer };
}

/** slurmd's slurm.conf from its argv and its starting environment ("NAME=value" strings). */
export function slurmdConf(argv: readonly string[], environ: readonly string[]): SlurmdConf {
  const env = (name: string): string | undefined => environ.find((e) => e.startsWith(`${name}=`))?.slice(name.length + 1);
  const cache = env('SLURMD_RECONF_CONF_CACHE');
  if (cache !== undefined) {
    return cache.startsWith('/') ? { kind: 'file', file: `${cache.replace(/\/+$/, '')}/slurm.conf`, from: 'SLURMD_RECONF_CONF_CACHE' } : { kind: 'unknown', why: `SLURMD_RECONF_CONF_CACHE ${JSON.stringify(cache)} is not an absolute path` };
  }
  const o = options(argv);
  if ('why' in o) return { kind: 'unknown', why: o.why };
  if (o.confServer) return { kind: 'configless', from: '--conf-server' };
  const file = o.f ?? env('SLURM_CONF') ?? null;
  const from = o.f !== null ? '-f' : 'SLURM_CONF';
  if (file === null || file === '') return { kind: 'default' };
  if (!file.startsWith('/')) return { kind: 'unknown', why: `slurmd's ${from} ${JSON.stringify(file)} is not an absolute path` };
  return { kind: 'file', file, from };
}
