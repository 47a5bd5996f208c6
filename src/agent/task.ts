// The agent answers a TaskProlog (slurm/taskprolog.sh): the job's user asks, root answers. The TaskProlog reads the
// job's view with bash alone (task/facts.ts) into a file in the job's directory, which only the job's user and root
// can enter, and writes one line into the job's FIFO (agent/task-fifos.ts: stateDir/tasks-<id>, read for that job only):
//   v1 task <job> <pid> <fd> <view> <nonce> <config>
// The agent judges with the code `gdrgate task` runs, over those facts and nothing the user could aim elsewhere: it
// reads only the job's directory (the facts file, owned by the job's user, opened without following a link; the
// signed prolog.json; task.json), never a path the facts name. It answers into /proc/<pid>/fd/<fd> only when that
// process is the job's user's (all four uids) and holds a pipe there, and the answer carries the nonce, which only
// the job's user could read from the facts file. A user can therefore ask only about their own job and be answered
// only in their own process: what the answer says is what `gdrgate task` would say to them from the same reads.
// Anything the facts do not answer, or any doubt, and the agent says "fallback": the TaskProlog runs gdrgate itself;
// a request the facts do not prove (another nonce, pid or user) gets no answer at all: its pipe may be anyone's.
import { DEFAULTS, loadTrustedConfig, type Config } from '../config.js';
import { runHook } from '../engine/hook.js';
import { HeldDir } from '../host/held-dir.js';
import { modeAllowsRead, modeAllowsReadIn, type Ids } from '../host/mode-read.js';
import type { Host } from '../host/host.js';
import { jobDirName, parseJobId, PROLOG_FILE } from '../state/names.js';
import type { TaskRecord } from '../state/types.js';
import { statusWords } from '../parsers/proc-status.js';
import { factEnv, FactHost, MAX_FACTS_BYTES, NotGathered, parseFacts } from '../task/facts.js';
import { baselineClass, taskPrologHook } from '../task/hook.js';
import { MAX_REPLY_FD, MIN_REPLY_FD, PIPE_BUF, type Parsed } from './protocol.js';

export const TASK_FIFO = 'tasks';

export interface TaskRequest {
  readonly job: string;
  readonly pid: number;
  readonly fd: number;
  /** The view's name in the job's directory: the facts are task.<view>.facts. */
  readonly view: string;
  readonly nonce: string;
  readonly config: string;
}

export function parseTaskRequest(line: string): Parsed<TaskRequest> {
  const bytes = Buffer.byteLength(line); // as the pipe counts them
  if (bytes >= PIPE_BUF) return { ok: false, error: `request of ${bytes} bytes` };
  const p = line.split(' ');
  if (p.length !== 8 || p[0] !== 'v1' || p[1] !== 'task') return { ok: false, error: 'want "v1 task <job> <pid> <fd> <view> <nonce> <config>"' };
  const [, , job, pid, fd, view, nonce, config] = p as [string, string, string, string, string, string, string, string];
  if (parseJobId(job) === null) return { ok: false, error: `job ${JSON.stringify(job.slice(0, 40))} is not a job id` };
  if (!/^[1-9]\d{0,9}$/.test(pid) || Number(pid) > 2 ** 31 - 1) return { ok: false, error: 'not a process id' };
  if (!/^[1-9]\d{0,2}$/.test(fd) || Number(fd) < MIN_REPLY_FD || Number(fd) > MAX_REPLY_FD) return { ok: false, error: 'not a reply descriptor' };
  if (!/^[A-Za-z0-9.,=_-]{1,200}$/.test(view) || view.includes('..')) return { ok: false, error: 'not a view name' };
  if (!/^[0-9a-f]{8,64}$/.test(nonce)) return { ok: false, error: 'not a nonce' };
  if (!config.startsWith('/')) return { ok: false, error: 'config is not an absolute path' };
  if (/[\x00-\x20\x7f]/.test(config)) return { ok: false, error: 'config holds a space or a control character' };
  return { ok: true, value: { job, pid: Number(pid), fd: Number(fd), view, nonce, config } };
}

/**
 * What goes back: the TaskProlog's own output and exit code, and the task record it writes as the job's user; or why
 * the agent did not judge. `silent`: the request is not proven to come from the process it names, so nothing is
 * written there (its pipe may be anyone's: a root daemon's, another job's); a TaskProlog that did ask times out.
 */
export type TaskAnswer = { readonly ok: true; readonly code: number; readonly lines: readonly string[]; readonly record: TaskRecord | null } | { readonly ok: false; readonly why: string; readonly silent?: true };

/**
 * `ok <nonce> <code> <lines> <bytes>`, then that many bytes: the lines, the record (or -) and `end <nonce>`, a line
 * each. bash reads a pipe a byte a syscall when it reads lines, and a counted read (`read -N`) in one.
 */
export function formatTaskReply(nonce: string, a: TaskAnswer): string {
  if (!a.ok) return `fallback ${nonce} ${a.why.replace(/[\x00-\x1f\x7f]+/g, ' ').slice(0, 500)}\n`;
  const body = [...a.lines, a.record ? JSON.stringify(a.record) : '-', `end ${nonce}`].join('\n') + '\n';
  return `ok ${nonce} ${a.code} ${a.lines.length} ${Buffer.byteLength(body)}\n${body}`;
}

/** The ids access(2) uses: the filesystem uid and gid (the fourth of each), and the supplementary groups. */
function idsOf(status: string, uid: number): Ids {
  return { uid, gids: [...statusWords(status, 'Gid').slice(3, 4), ...statusWords(status, 'Groups')].map(Number) };
}

/** Judges one request; `live` reads this machine's /proc (the asking process). */
export async function answerTask(req: TaskRequest, agentConfig: string, live: Host): Promise<TaskAnswer> {
  // Until the facts prove who asked, a refusal is silent: the request names a process, and anyone can write one.
  const quiet = (why: string): TaskAnswer => ({ ok: false, why, silent: true });
  // Only a config root alone can change (as every Prolog's): the agent acts on its stateDir as root.
  const cfg = await loadTrustedConfig(agentConfig).catch(() => null);
  if (!cfg) return quiet(`cannot read ${agentConfig}, or anyone but root could change it`);
  const stateDir = cfg.stateDir ?? DEFAULTS.stateDir;
  const dir = `${stateDir}/${jobDirName(req.job)}`;
  // The job's directory, and every name in it, only as held (host/held-dir.ts): a mount on or in it (its user's FUSE
  // file system?) is never entered, root would wait on its daemon; no window between a look and a use.
  const top = HeldDir.of(stateDir);
  if (typeof top === 'string') return quiet(top);
  let held: ReturnType<HeldDir['dir']>;
  try {
    held = top.dir(jobDirName(req.job));
  } catch (e) {
    return quiet(`${dir}: ${(e as Error).message}`);
  } finally {
    top.close();
  }
  if (held === 'mount') return quiet(`${dir} is a mount: not entered`);
  if (held === null || typeof held === 'string') return quiet(`${dir} is not a directory`);
  try {
    return await answerHeld(req, agentConfig, live, cfg, held, quiet);
  } finally {
    held.close();
  }
}

async function answerHeld(req: TaskRequest, agentConfig: string, live: Host, cfg: Config, held: HeldDir, quiet: (why: string) => TaskAnswer): Promise<TaskAnswer> {
  const stateDir = cfg.stateDir ?? DEFAULTS.stateDir;
  const dir = held.path;
  const uid = held.stats.uid;
  if (uid === 0) return quiet(`${dir} is root's: the Prolog has not handed it to the job's user`);
  // The asking process must be the job's user's: the answer goes into its descriptor.
  const status = await live.readText(`/proc/${req.pid}/status`);
  const uids = status.ok ? statusWords(status.value, 'Uid') : [];
  if (uids.length !== 4 || uids.some((u) => u !== String(uid))) return quiet(`pid ${req.pid} is not the job's user's (uid ${uid})`);
  const raw = held.read(`task.${req.view}.facts`, { max: MAX_FACTS_BYTES, owner: uid });
  if (!raw.ok) return quiet(raw.why);
  const facts = parseFacts(raw.value.toString('utf8'));
  if (!facts.ok) return quiet(`task.${req.view}.facts: ${facts.error}`);
  const f = facts.value;
  // The nonce only the job's user could read: from here on the process named is the one that asked.
  if (f.nonce !== req.nonce || f.pid !== req.pid || f.uid !== uid) return quiet(`task.${req.view}.facts is not this request's`);
  if (req.config !== agentConfig) return { ok: false, why: `the agent answers for ${agentConfig}, not ${req.config}` };
  // Facts read under a root of their own (the wrapper's ROOT, a test tree) are judged under it: FactHost answers from
  // the facts alone, and the answer goes only into the asking user's process. Read under /, the config's root is meant.
  const root = f.root === '/' ? (cfg.root ?? '/') : f.root;
  if (root !== f.root) return { ok: false, why: `the facts were read under ${f.root}, the config's root is ${root}` };
  const host = new FactHost(root, f);
  const env = factEnv(f, host);
  let record: TaskRecord | null = null;
  const keep = (_dir: string, rec: TaskRecord): { ok: true } => ((record = rec), { ok: true });
  try {
    // What the agent reads as root for the job's user, the user must be able to read: the facts say so (the user's
    // word: a "no" is taken), and so must the mode bits (a "yes" is checked: the facts are the user's to write).
    const ids = idsOf(status.ok ? status.value : '', uid);
    const prolog = `${dir}/${PROLOG_FILE}`;
    const userReads = (p: string): boolean => host.readable(p) && (p === prolog ? modeAllowsReadIn(held, PROLOG_FILE, ids, stateDir) : modeAllowsRead(p, ids));
    // A mount its user made on prolog.json is not entered, and said as such: the user reads what is mounted there.
    for (const p of [agentConfig, prolog, `${stateDir}/signing.pub`]) if (!userReads(p)) return { ok: false, why: p === prolog && held.lookQuietly(PROLOG_FILE) === 'mount' ? `${p} is a mount: not entered` : `the job's user cannot read ${p}` };
    const r = await runHook(
      taskPrologHook({ standalone: false, root: f.root === '/' ? undefined : f.root, config: agentConfig, fail: f.fail }, env, req.job, {
        host,
        uid,
        readable: (p) => host.readable(p),
        baseline: (c, node) => (!c || !host.readable(c.baseline) ? Promise.resolve(null) : modeAllowsRead(c.baseline, ids) ? baselineClass(c, node) : host.tell(`the baseline ${c.baseline}: readable, say the facts; not by its mode`)),
        keep,
        jobDir: held,
      }),
    );
    // A question the facts did not answer, even one the code that asked caught: not the answer gdrgate would give.
    if (host.untold !== null) return { ok: false, why: `not among the TaskProlog's facts: ${host.untold}` };
    const lines = r.report.flatMap((t) => t.split('\n')).filter((l) => l !== '');
    return { ok: true, code: r.code, lines, record };
  } catch (e) {
    return { ok: false, why: e instanceof NotGathered ? e.message : `the agent could not judge: ${(e as Error).message}` };
  }
}
