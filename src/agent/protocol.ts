// The agent's wire format, pure. A Prolog (slurm/prolog.sh) writes one line into the agent's request FIFO:
//   v2 prolog <pid> <fd> <config>
// and reads one line back from a pipe it holds open on descriptor <fd>, which the agent (root, as the Prolog is)
// opens as /proc/<pid>/fd/<fd>: no file to make or remove, so the Prolog spawns no mkfifo.
//   ok <summary line>            the node is healthy; the Prolog prints the line and exits 0
//   fallback <why>               anything else; the Prolog runs the gate itself, which judges again and may drain
// A line is at most PIPE_BUF bytes, so concurrent Prologs' writes into the one FIFO never interleave.

export const PIPE_BUF = 4096;
export const REQUEST_FIFO = 'requests';
export const PID_FILE = 'agent.pid';
/** The descriptors a Prolog may name: above the shell's own 0-2 and below what bash keeps for itself (255). */
export const MIN_REPLY_FD = 3;
export const MAX_REPLY_FD = 254;
/** Where the agent opens a Prolog's reply pipe. */
export const replyPath = (pid: number, fd: number): string => `/proc/${pid}/fd/${fd}`;

export interface Request {
  readonly pid: number;
  /** The Prolog's descriptor holding its reply pipe. */
  readonly fd: number;
  readonly config: string;
}

export type Parsed<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: string };

/** One request line, without its newline. The config path must be absolute and plain (no spaces, no control bytes). */
export function parseRequest(line: string): Parsed<Request> {
  // In bytes, as the pipe counts them (a line of UTF-16 units may hold more bytes than it has characters).
  const bytes = Buffer.byteLength(line);
  if (bytes >= PIPE_BUF) return { ok: false, error: `request of ${bytes} bytes (at most ${PIPE_BUF - 1})` };
  const parts = line.split(' ');
  if (parts[0] === 'v1') return { ok: false, error: 'protocol v1 (a reply FIFO) is not answered any more: that Prolog wrapper is older than this agent; it judges itself after its timeout' };
  if (parts[0] !== 'v2') return { ok: false, error: `unknown protocol ${JSON.stringify(parts[0] ?? '')} (want v2)` };
  if (parts[1] !== 'prolog') return { ok: false, error: `unknown request ${JSON.stringify(parts[1] ?? '')} (the agent answers prolog only)` };
  if (parts.length !== 5) return { ok: false, error: `want "v2 prolog <pid> <fd> <config>", got ${parts.length} fields` };
  const [, , pidText, fdText, config] = parts as [string, string, string, string, string];
  if (!/^[1-9]\d{0,9}$/.test(pidText) || Number(pidText) > 2 ** 31 - 1) return { ok: false, error: `pid ${JSON.stringify(pidText)} is not a process id` };
  if (!/^[1-9]\d{0,2}$/.test(fdText) || Number(fdText) < MIN_REPLY_FD || Number(fdText) > MAX_REPLY_FD)
    return { ok: false, error: `fd ${JSON.stringify(fdText)} is not a descriptor from ${MIN_REPLY_FD} to ${MAX_REPLY_FD}` };
  if (!config.startsWith('/')) return { ok: false, error: `config ${JSON.stringify(config)} is not an absolute path` };
  if (/[\x00-\x1f\x7f]/.test(config)) return { ok: false, error: `config ${JSON.stringify(config)} holds a control character` };
  return { ok: true, value: { pid: Number(pidText), fd: Number(fdText), config } };
}

/** The reply line, newline included, one line whatever `text` holds, and short enough for one atomic write. */
export function formatReply(kind: 'ok' | 'fallback', text: string): string {
  const flat = text.replace(/[\x00-\x1f\x7f]+/g, ' ');
  // 1,000 UTF-16 units are at most 3,000 bytes of UTF-8: under PIPE_BUF with the kind, the mark and the newline.
  return `${kind} ${flat.length > 1000 ? flat.slice(0, 999) + '…' : flat}\n`;
}

/**
 * /proc/<pid>/environ (NUL-separated NAME=value entries) as an environment. Only what the gate reads from a Prolog's
 * environment is kept: SLURM_* and SLURMD_*.
 */
export function parseEnviron(raw: Buffer | string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const entry of raw.toString('utf8').split('\0')) {
    const eq = entry.indexOf('=');
    if (eq <= 0) continue;
    const name = entry.slice(0, eq);
    if (name.startsWith('SLURM_') || name.startsWith('SLURMD_')) env[name] = entry.slice(eq + 1);
  }
  return env;
}
