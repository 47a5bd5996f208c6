// What the agent tests share: a running agent on a throwaway gate installation, and slurm/prolog.sh run as
// slurmd runs it, a child of a process named slurmd (the agent judges only a Prolog: src/agent/client.ts).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { GateEnv } from '../helpers/gate-env.js';
import { CLI, REPO } from '../helpers/paths.js';

export const JOB = { SLURMD_NODENAME: 'vm', SLURM_JOB_ID: '42', SLURM_JOB_UID: String(process.getuid!()), SLURM_JOB_GID: String(process.getgid!()) };

export interface Agent {
  readonly proc: ChildProcess;
  readonly dir: string;
  readonly stderr: () => string;
  /** What it printed on stdout (nothing of its own: V8's, under --trace-gc). */
  readonly stdout: () => string;
  readonly exited: Promise<number | null>;
}

/**
 * The agent on `e`: `extra` its own arguments, `node` Node's flags (the package's unit: --max-semi-space-size=16
 * --expose-gc), `cli` the program it is started as.
 */
export async function startAgent(e: GateEnv, extra: string[] = [], node: string[] = [], cli = CLI): Promise<Agent> {
  const dir = path.join(e.dir, 'agent');
  let err = '';
  let out = '';
  const proc = spawn(process.execPath, [...node, cli, 'agent', '--config', e.config, '--dir', dir, ...extra], { stdio: ['ignore', 'pipe', 'pipe'] });
  proc.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((res) => proc.on('close', (c) => res(c)));
  const pidFile = path.join(dir, 'agent.pid');
  const mine = (): boolean => existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() === String(proc.pid);
  // Polled until its pid file is there (a Node start on a loaded 2-core machine can take seconds), or it exits.
  let gone = false;
  void exited.then(() => (gone = true));
  const until = performance.now() + 60_000;
  while (!mine() && !gone && performance.now() < until) await new Promise((r) => setTimeout(r, 20));
  if (!mine()) throw new Error(`agent did not start${gone ? ` (exited ${proc.exitCode ?? proc.signalCode})` : ' within 60 s'}: ${err}`);
  return { proc, dir, stderr: () => err, stdout: () => out, exited };
}

/**
 * A stand-in slurmd in `dir`: a script whose name, and so its /proc/<pid>/comm, is `slurmd`, that runs its
 * arguments as a child (not exec: it must stay their parent) and exits with their status.
 */
export function slurmdShim(dir: string): string {
  const file = path.join(dir, 'slurmd');
  writeFileSync(file, '#!/bin/bash\n"$@"\nexit $?\n', { mode: 0o755 });
  return file;
}

/** slurm/prolog.sh installed in e.dir as gdrgate-prolog.sh, its .conf beside it (root's, 0644); its path. */
export function installWrapper(e: GateEnv, conf: string): string {
  const file = path.join(e.dir, 'gdrgate-prolog.sh');
  copyFileSync(path.join(REPO, 'slurm/prolog.sh'), file);
  chmodSync(file, 0o755);
  // A generous timeout unless `conf` sets one: a loaded test machine must not turn an answer into a fallback.
  const confFile = path.join(e.dir, 'gdrgate-prolog.conf');
  writeFileSync(confFile, `NODE=${process.execPath}\nCLI=${CLI}\nCONFIG=${e.config}\nAGENT_TIMEOUT=20\n${conf}`);
  chmodSync(confFile, 0o644);
  return file;
}

/** slurm/prolog.sh as Slurm runs it: under slurmd, SLURM_* variables only, cwd /, its .conf beside it. */
export function wrapper(e: GateEnv, conf: string): (env?: Record<string, string>) => { code: number | null; stdout: string; ms: number } {
  const file = installWrapper(e, conf);
  const slurmd = slurmdShim(e.dir);
  return (env = JOB) => {
    const t0 = performance.now();
    const r = spawnSync(slurmd, [file], { encoding: 'utf8', env, cwd: '/', timeout: 60_000 });
    return { code: r.status, stdout: r.stdout, ms: performance.now() - t0 };
  };
}

export type Line = { msg: string; startup?: string; client?: number; agent?: string; job?: string; result?: string; why?: string };
/**
 * Lets the test's event loop read the agent's stderr (spawnSync blocks it) until `done` holds for it (or `re`
 * shows), or 60 s pass: a bound for a loaded machine, not a speed; it returns as soon as the condition holds.
 */
export async function stderrShows(a: Agent, re: RegExp | ((stderr: string) => boolean)): Promise<string> {
  const done = typeof re === 'function' ? re : (s: string) => re.test(s);
  const until = performance.now() + 60_000;
  while (!done(a.stderr()) && performance.now() < until) await new Promise((r) => setTimeout(r, 20));
  return a.stderr();
}
export const lines = (e: GateEnv): Line[] => (existsSync(e.log) ? readFileSync(e.log, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Line) : []);
export const lastRun = (e: GateEnv): Line => lines(e).filter((l) => l.msg === 'gdrgate run').at(-1)!;

/**
 * The agent's run lines for `jobs`, once all are there: the agent writes a run line after its answer (the Prolog may
 * have exited before), so they are waited for, up to 60 s (a bound for a loaded machine, not a speed: it returns as
 * soon as they are there). A line still being appended is read again on the next turn.
 */
export async function agentRuns(e: GateEnv, ...jobs: string[]): Promise<Line[]> {
  const want = jobs.length ? jobs : ['42'];
  const read = (): Line[] => {
    try {
      return lines(e).filter((l) => l.msg === 'gdrgate run' && l.startup === 'agent');
    } catch {
      return [];
    }
  };
  const until = performance.now() + 60_000;
  while (!want.every((j) => read().some((l) => l.job === j)) && performance.now() < until) await new Promise((r) => setTimeout(r, 20));
  return read();
}

const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
/**
 * A log record with what varies from run to run put as `<time>`, `<pid>`…: its time, and the numbers named in `keys`
 * (pids, durations), each only where it has that form; the rest as it is, for the whole record to be compared.
 */
export function masked(l: object | undefined, ...keys: string[]): Record<string, unknown> {
  const varies = (k: string, v: unknown): boolean => (k === 'time' ? typeof v === 'string' && ISO_TIME.test(v) : keys.includes(k) && Number.isSafeInteger(v) && (v as number) >= 0);
  return Object.fromEntries(Object.entries(l ?? {}).map(([k, v]) => [k, varies(k, v) ? `<${k}>` : v]));
}
/** A run line masked for its durations (and `keys`). */
export const maskedRun = (l: object | undefined, ...keys: string[]): Record<string, unknown> => masked(l, 'durationMs', 'afterMs', ...keys);
/** The run line of a healthy Prolog of `job` on the bundled capture, as maskedRun() gives it; `more` for the rest. */
export const healthyRun = (job: string, startup: 'agent' | 'snapshot', more: Record<string, unknown>): Record<string, unknown> => ({
  level: 30, time: '<time>', tool: 'gdrgate', mode: 'prolog', node: 'vm', job, durationMs: '<durationMs>', afterMs: '<afterMs>', startup,
  result: 'healthy', exitCode: 0, failedOpen: false, reason: null, action: 'none', summary: { pass: 11, warn: 0, fail: 0, skip: 5, error: 0 }, msg: 'gdrgate run', ...more,
});
/** The agent's stderr, a log record a line, each masked for its time. */
export const stderrRecords = (s: string): Record<string, unknown>[] => s.trim().split('\n').map((l) => masked(JSON.parse(l) as object));
