// The agent's wire format, pure. A Prolog (slurm/prolog.sh) writes one line into the agent's request FIFO:
//   v1 prolog <pid> <config>
// and reads one line back from the FIFO it made, <dir>/reply.<pid>:
//   ok <summary line>            the node is healthy; the Prolog prints the line and exits 0
//   fallback <why>               anything else; the Prolog runs the gate itself, which judges again and may drain
// A line is at most PIPE_BUF bytes, so concurrent Prologs' writes into the one FIFO never interleave.

export const PIPE_BUF = 4096;
export const REQUEST_FIFO = 'requests';
export const PID_FILE = 'agent.pid';
export const replyFifo = (pid: number): string => `reply.${pid}`;

export interface Request {
  readonly pid: number;
  readonly config: string;
}

export type Parsed<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: string };

/** One request line, without its newline. The config path must be absolute and plain (no spaces, no control bytes). */
export function parseRequest(line: string): Parsed<Request> {
  if (line.length >= PIPE_BUF) return { ok: false, error: `request of ${line.length} bytes (at most ${PIPE_BUF - 1})` };
  const parts = line.split(' ');
  if (parts[0] !== 'v1') return { ok: false, error: `unknown protocol ${JSON.stringify(parts[0] ?? '')} (want v1)` };
  if (parts[1] !== 'prolog') return { ok: false, error: `unknown request ${JSON.stringify(parts[1] ?? '')} (the agent answers prolog only)` };
  if (parts.length !== 4) return { ok: false, error: `want "v1 prolog <pid> <config>", got ${parts.length} fields` };
  const [, , pidText, config] = parts as [string, string, string, string];
  if (!/^[1-9]\d{0,9}$/.test(pidText) || Number(pidText) > 2 ** 31 - 1) return { ok: false, error: `pid ${JSON.stringify(pidText)} is not a process id` };
  if (!config.startsWith('/') || /[\x00-\x1f\x7f]/.test(config)) return { ok: false, error: `config ${JSON.stringify(config)} is not an absolute path` };
  return { ok: true, value: { pid: Number(pidText), config } };
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
