// The job's view as slurm/taskprolog.sh read it with bash alone (globs, `read`, `test`, `cd -P`: no process), for the
// agent to judge (agent/task.ts) with the very code `gdrgate task` runs: a Host that answers from these facts and
// nothing else. A question the facts do not answer throws NotGathered, and the agent then answers nothing (the task
// runs gdrgate itself): an answer is only ever what `gdrgate task` would have said from the same reads. Pure.
//
// The file, one record a line, fields separated by a tab (a value runs to the end of its line):
//   gdrgate-task-facts 1 <nonce> <pid> <uid> <fail>    fail: the TaskProlog's FAIL setting (0 or 1)
//   root <path>                    where the view was read (ROOT; / on a node)
//   env <NAME>[\t<value>]          a variable; without a value field it is unset
//   list <path> <n>|-|?            then n lines "\t<name>"; - missing, ? could not be told
//   text <path> <n>|-|?            then n lines "\t<line>" (the file's lines, each newline-ended)
//   kind <path> <kind>|-|?         stat(2), links followed
//   access <path> rw|?             access(2) read-write; anything else could not be told exactly (its errno)
//   real <path> <path>|-|?         the path with every link resolved
//   readable <path> 1|0|?          a regular file this user can open for reading
//   end
import type { AccessAnswer, Host, ReadResult, StatInfo } from '../host/host.js';
import type { Parsed } from '../parsers/sysfs.js';

export const FACTS_FORMAT = 'gdrgate-task-facts 1';
/** The facts file's cap: a node with 16 GPUs and 16 adapters writes ~8 KiB (most of it the /dev listing and the adapters' device links). */
export const MAX_FACTS_BYTES = 256 * 1024;
/** The variables the TaskProlog hands over, set or unset: what `gdrgate task` reads from its environment. */
export const FACT_ENV = ['SLURM_JOB_ID', 'SLURM_STEP_ID', 'SLURM_LOCALID', 'SLURM_JOB_GPUS', 'SLURM_STEP_GPUS', 'SLURM_GPUS_ON_NODE', 'CUDA_VISIBLE_DEVICES', 'SLURM_RLIMIT_MEMLOCK', 'SLURMD_NODENAME', 'NCCL_TOPO_FILE', 'GDRGATE_CONFIG'] as const;

const KINDS: readonly StatInfo['kind'][] = ['file', 'dir', 'link', 'char', 'block', 'fifo', 'socket', 'other'];
type Told<T> = { readonly t: 'is'; readonly v: T } | { readonly t: 'missing' } | { readonly t: 'untold' };

export interface Facts {
  readonly nonce: string;
  readonly pid: number;
  readonly uid: number;
  readonly fail: boolean;
  readonly root: string;
  readonly env: ReadonlyMap<string, string | undefined>;
  readonly list: ReadonlyMap<string, Told<readonly string[]>>;
  readonly text: ReadonlyMap<string, Told<string>>;
  readonly kind: ReadonlyMap<string, Told<StatInfo['kind']>>;
  readonly access: ReadonlyMap<string, Told<'rw'>>;
  readonly real: ReadonlyMap<string, Told<string>>;
  readonly readable: ReadonlyMap<string, Told<boolean>>;
}

/** A question the facts do not answer: the agent then answers nothing (agent/task.ts). */
export class NotGathered extends Error {
  constructor(readonly what: string) {
    super(`not among the TaskProlog's facts: ${what}`);
  }
}

const PATH_RE = /^\/[^\t\n]*$/;

export function parseFacts(text: string): Parsed<Facts> {
  const lines = text.split('\n');
  if (lines.pop() !== '') return { ok: false, error: 'the facts do not end with a newline' };
  const head = /^gdrgate-task-facts 1 ([0-9a-f]{8,64}) ([1-9]\d{0,9}) (0|[1-9]\d{0,9}) ([01])$/.exec(lines[0] ?? '');
  if (!head) return { ok: false, error: `not ${FACTS_FORMAT} facts` };
  const env = new Map<string, string | undefined>();
  const f = { list: new Map<string, Told<readonly string[]>>(), text: new Map<string, Told<string>>(), kind: new Map<string, Told<StatInfo['kind']>>(), access: new Map<string, Told<'rw'>>(), real: new Map<string, Told<string>>(), readable: new Map<string, Told<boolean>>() };
  let ended = false;
  let root: string | null = null;
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    const bad = (why: string): Parsed<Facts> => ({ ok: false, error: `line ${i + 1}: ${why}` });
    if (ended) return bad('after end');
    if (line === 'end') {
      ended = true;
      continue;
    }
    const [tag, a, b, ...more] = line.split('\t');
    if (tag === 'root') {
      if (root !== null || !a || !PATH_RE.test(a) || b !== undefined) return bad('a malformed root record');
      root = a;
      continue;
    }
    if (tag === 'env') {
      if (!a || !/^[A-Z_][A-Z0-9_]*$/.test(a) || env.has(a)) return bad('a malformed env record');
      // The value is the rest of the line: a tab in the job's own value (its NCCL_TOPO_FILE) is the value's, not a field
      // (split there, the record was malformed, the agent refused it unanswered and every such task waited 1 s).
      env.set(a, b === undefined ? undefined : [b, ...more].join('\t'));
      continue;
    }
    if (a === undefined || b === undefined || more.length || !PATH_RE.test(a)) return bad(`a malformed ${tag ?? ''} record`);
    const seen = (m: Map<string, unknown>): boolean => m.has(a);
    if (tag === 'list' || tag === 'text') {
      const m = tag === 'list' ? f.list : f.text;
      if (seen(m)) return bad(`${a} twice`);
      if (b === '-' || b === '?') {
        m.set(a, b === '-' ? { t: 'missing' } : { t: 'untold' });
        continue;
      }
      if (!/^(0|[1-9]\d{0,5})$/.test(b) || i + Number(b) >= lines.length) return bad(`${a}: a count of ${b} lines`);
      const body = lines.slice(i + 1, i + 1 + Number(b));
      if (!body.every((l) => l.startsWith('\t'))) return bad(`${a}: a line of its ${tag} does not start with a tab`);
      const vals = body.map((l) => l.slice(1));
      if (tag === 'list') {
        if (vals.some((n) => n === '' || n === '.' || n === '..' || n.includes('/'))) return bad(`${a}: an entry that is no file name`);
        f.list.set(a, { t: 'is', v: vals });
      } else f.text.set(a, { t: 'is', v: vals.map((l) => l + '\n').join('') });
      i += body.length;
      continue;
    }
    const told = <T>(v: T): Told<T> => (b === '-' ? { t: 'missing' } : b === '?' ? { t: 'untold' } : { t: 'is', v });
    if (tag === 'kind' && !seen(f.kind) && (b === '-' || b === '?' || KINDS.includes(b as StatInfo['kind']))) f.kind.set(a, told(b as StatInfo['kind']));
    else if (tag === 'access' && !seen(f.access) && (b === 'rw' || b === '?')) f.access.set(a, told('rw' as const));
    else if (tag === 'real' && !seen(f.real) && (b === '-' || b === '?' || PATH_RE.test(b))) f.real.set(a, told(b));
    else if (tag === 'readable' && !seen(f.readable) && (b === '1' || b === '0' || b === '?')) f.readable.set(a, told(b === '1'));
    else return bad(`a malformed or repeated ${tag ?? ''} record`);
  }
  if (!ended) return { ok: false, error: 'the facts are cut short (no end line)' };
  if (root === null) return { ok: false, error: 'no root record' };
  return { ok: true, value: { nonce: head[1]!, pid: Number(head[2]), uid: Number(head[3]), fail: head[4] === '1', root, env, ...f } };
}

/** The environment the facts hand over; reading any other variable throws NotGathered. */
export function factEnv(f: Facts, host: FactHost): NodeJS.ProcessEnv {
  const vals = Object.fromEntries([...f.env].filter(([, v]) => v !== undefined)) as Record<string, string>;
  const check = (k: string | symbol): void => {
    if (typeof k === 'string' && !f.env.has(k)) host.tell(`the variable ${k}`);
  };
  return new Proxy(vals, {
    get: (o, k) => (check(k), typeof k === 'string' ? o[k] : undefined),
    has: (o, k) => (check(k), k in o),
    ownKeys: () => host.tell('every variable'),
  });
}

const missing = <T>(p: string, code = 'ENOENT'): ReadResult<T> => ({ ok: false, missing: code === 'ENOENT', reason: code === 'ENOENT' ? `${p}: no such file (ENOENT)` : code });

function pick<T>(m: ReadonlyMap<string, Told<T>>, what: string, p: string): { readonly found: true; readonly v: T } | { readonly found: false } {
  const r = m.get(p);
  if (r === undefined || r.t === 'untold') throw new NotGathered(`${what} of ${p}`);
  return r.t === 'is' ? { found: true, v: r.v } : { found: false };
}

/**
 * The job's view as a Host: every answer is a fact the TaskProlog read, in the words FsHost uses for the same
 * outcome (a missing file is ENOENT; a listing is sorted as FsHost sorts it).
 */
export class FactHost implements Host {
  /** The first question the facts did not answer (caught or not by the code that asked). */
  untold: string | null = null;
  constructor(readonly root: string, private readonly f: Facts) {}

  private pick<T>(m: ReadonlyMap<string, Told<T>>, what: string, p: string): { readonly found: true; readonly v: T } | { readonly found: false } {
    try {
      return pick(m, what, p);
    } catch (e) {
      this.untold ??= (e as NotGathered).what;
      throw e;
    }
  }

  tell(what: string): never {
    return this.never(what);
  }

  private never(what: string): never {
    this.untold ??= what;
    throw new NotGathered(what);
  }

  list(p: string): Promise<ReadResult<string[]>> {
    const r = this.pick(this.f.list, 'the listing', p);
    return Promise.resolve(r.found ? { ok: true, value: [...r.v].sort() } : missing(p));
  }

  readText(p: string): Promise<ReadResult<string>> {
    const r = this.pick(this.f.text, 'the text', p);
    return Promise.resolve(r.found ? { ok: true, value: r.v } : missing(p));
  }

  stat(p: string): Promise<ReadResult<StatInfo>> {
    const r = this.pick(this.f.kind, 'the kind', p);
    return Promise.resolve(r.found ? { ok: true, value: { kind: r.v, mode: 0, uid: -1, size: 0, rdev: 0 } } : missing(p));
  }

  /**
   * Told "rw", it is. Not told (bash cannot tell EACCES from EPERM: `?`, or no record) is asked only when read: under
   * Slurm's ConstrainDevices every other job's /dev/nvidiaN is denied, and the judge reads the access of the job's own
   * device nodes alone, so a node it never reads sends nobody to gdrgate; one it reads is a question not answered.
   */
  access(p: string): Promise<AccessAnswer> {
    const r = this.f.access.get(p);
    if (r?.t === 'is') return Promise.resolve({ access: 'rw' });
    const never = (): never => this.never(`read-write access of ${p}`);
    return Promise.resolve({
      get access(): AccessAnswer['access'] {
        return never();
      },
    });
  }

  /** The job's own view, judged for its user: nothing read here acts as root (nor is gres.conf or slurm.conf read). */
  untrusted(_p: string): string | null {
    return null;
  }

  realPath(p: string): Promise<ReadResult<string>> {
    const r = this.pick(this.f.real, 'the resolved path', p);
    return Promise.resolve(r.found ? { ok: true, value: r.v } : missing(p));
  }

  /** Whether the job's user can read `p` whole (the baseline, the host's NCCL topology file). */
  readable(p: string): boolean {
    const r = this.pick(this.f.readable, 'readability', p);
    return r.found && r.v;
  }

  readBytes(p: string): Promise<ReadResult<Uint8Array>> {
    return this.never(`the bytes of ${p}`);
  }

  readLink(p: string): Promise<ReadResult<string>> {
    return this.never(`the link ${p}`);
  }

  lstat(p: string): Promise<ReadResult<StatInfo>> {
    return this.never(`lstat of ${p}`);
  }
}
