// The harness the end-to-end files share (not a test file): a real single-node Slurm from test/e2e/sandbox on its own
// port and directory, Slurm client calls that always end, waiting for a state, a snapshot of the build for slurmd,
// and the gate's wrapper scripts with their .conf. See test/e2e/README.md.
import type { Test } from 'tap';
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

export const REPO = fileURLToPath(new URL('../../', import.meta.url));
export const SANDBOX = join(REPO, 'test/e2e/sandbox');
export const CLIENT_TIMEOUT_MS = 20_000; // every Slurm client call: sinfo hangs ~60 s when slurmctld is gone
export const HELD = 'launch failed requeued held';
export const T0 = performance.now();
/** `s` as a regular expression matching itself only (for the fixed parts of an anchored pattern). */
export const reEsc = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
export const secs = (from: number): string => `${((performance.now() - from) / 1000).toFixed(1)} s`;

/** Whether to run at all: CI or GDRGATE_E2E=1, and root (the sandbox starts munged, slurmctld and slurmd). */
export const enabled = !!process.env.CI || process.env.GDRGATE_E2E === '1';
export const isRoot = process.getuid?.() === 0;

/** `body` when enabled and root; otherwise one skip that says why (`rootWhy`, then `tail`). */
export async function runOrSkip(t: Test, name: string, body: () => Promise<void>, rootWhy = 'it must run as root', tail = ' — see test/e2e/README.md'): Promise<void> {
  if (!enabled || !isRoot) t.skip(`${name} e2e skipped: ${!enabled ? 'set GDRGATE_E2E=1 (or CI) to run it' : rootWhy}${tail}`, () => {});
  else await body();
}

// ---------------------------------------------------------------------------------------------- processes

export interface Ran {
  readonly status: number | null;
  readonly signal: string | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly ms: number;
  readonly timedOut: boolean;
}

export interface RunOpts {
  readonly env?: NodeJS.ProcessEnv;
  readonly timeoutMs?: number;
  readonly cwd?: string;
  /** Through env(1) -u NODE_OPTIONS: tap's processinfo puts its NODE_OPTIONS back into every child's environment. */
  readonly withoutNodeOptions?: boolean;
}

/** Runs a program without a shell, always under a timeout (SIGKILL), never throws. */
export function run(file: string, args: readonly string[], opts: RunOpts = {}): Ran {
  const t0 = performance.now();
  const [cmd, argv] = opts.withoutNodeOptions ? ['/usr/bin/env', ['-u', 'NODE_OPTIONS', file, ...args]] : [file, [...args]];
  const r = spawnSync(cmd, argv, {
    env: opts.env ?? process.env,
    cwd: opts.cwd ?? '/',
    timeout: opts.timeoutMs ?? CLIENT_TIMEOUT_MS,
    killSignal: 'SIGKILL',
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    maxBuffer: 16 * 1024 * 1024,
  });
  const timedOut = (r.error as NodeJS.ErrnoException | undefined)?.code === 'ETIMEDOUT';
  return {
    status: r.status,
    signal: r.signal,
    stdout: r.stdout ?? '',
    stderr: (r.stderr ?? '') + (r.error && !timedOut ? `\n[spawn: ${r.error.message}]` : ''),
    ms: Math.round(performance.now() - t0),
    timedOut,
  };
}

/**
 * The environment without anything that could point the sandbox or the clients elsewhere. With `forJobs`, nothing
 * of tap's either (NODE_OPTIONS, TAP*): sbatch copies this environment into the job, where node runs as the job's user.
 */
export function cleanEnv(extra: Record<string, string>, forJobs = false): NodeJS.ProcessEnv {
  const drop = forJobs ? /^(SLURM_|SANDBOX_|GATE_|GDRGATE_CONFIG$|NODE_OPTIONS$|TAP|_TAPJS)/ : /^(SLURM_|SANDBOX_|GATE_|GDRGATE_CONFIG$)/;
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!drop.test(k)) env[k] = v;
  return { ...env, ...extra };
}

/** Polls `probe` until `ok` or `timeoutMs`; the last value, and how long it took. */
export async function waitFor<T>(probe: () => T, ok: (v: T) => boolean, timeoutMs: number, everyMs = 250): Promise<{ ok: boolean; value: T; ms: number }> {
  const t0 = performance.now();
  let value = probe();
  while (!ok(value)) {
    if (performance.now() - t0 > timeoutMs) return { ok: false, value, ms: Math.round(performance.now() - t0) };
    await sleep(everyMs);
    value = probe();
  }
  return { ok: true, value, ms: Math.round(performance.now() - t0) };
}

const portFree = (port: number): Promise<boolean> =>
  new Promise((res) => {
    const s = createServer();
    s.once('error', () => res(false));
    s.listen(port, '0.0.0.0', () => s.close(() => res(true)));
  });

/**
 * The kernel's ephemeral range (ip_local_port_range): the local ports it hands to outgoing connections and to
 * listen(0). A daemon told to bind a port in it may find it taken between our check and its bind (another test
 * file's connection, a Slurm client's own listening port), so the random pick stays out of it.
 */
function ephemeralRange(): { lo: number; hi: number } {
  try {
    const [lo, hi] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (Number.isInteger(lo) && Number.isInteger(hi)) return { lo: lo!, hi: hi! };
  } catch {
    /* not Linux: the usual default */
  }
  return { lo: 32768, hi: 60999 };
}

/**
 * A free slurmctld/slurmd port pair (p, p + 1): the first from `from` up to `to` (exclusive), else a random one
 * from 20000 up, below the kernel's ephemeral range (above it when that range starts too low to leave room).
 */
export async function freePortPair(range?: { from: number; to: number }): Promise<number> {
  if (range) {
    for (let p = range.from; p < range.to; p += 2) if ((await portFree(p)) && (await portFree(p + 1))) return p;
    throw new Error(`no free port pair in ${range.from}-${range.to - 1}`);
  }
  const eph = ephemeralRange();
  const [from, to] = eph.lo - 20000 >= 2000 ? [20000, eph.lo - 1] : [eph.hi + 1, 65535];
  const pairs = Math.floor((to - from) / 2);
  for (let i = 0; i < 50; i++) {
    const p = from + 2 * Math.floor(Math.random() * pairs);
    if ((await portFree(p)) && (await portFree(p + 1))) return p;
  }
  throw new Error(`no free port pair for slurmctld/slurmd in ${from}-${to}`);
}

// ---------------------------------------------------------------------------------------------- the gate

/**
 * A snapshot of the build in WORK/gdrgate (dist, schemas, package.json; node_modules linked), so a rebuild in the
 * checkout while a file runs cannot hand slurmd a half-written dist. Its startup snapshot is made anew of the copy
 * (the checkout's is of the checkout's program, which the wrappers' CLI= no longer names). Returns its dist/cli.js.
 */
export function snapshotBuild(work: string): string {
  const pkg = join(work, 'gdrgate');
  for (const d of ['dist', 'schemas']) cpSync(join(REPO, d), join(pkg, d), { recursive: true, verbatimSymlinks: true });
  copyFileSync(join(REPO, 'package.json'), join(pkg, 'package.json'));
  symlinkSync(join(REPO, 'node_modules'), join(pkg, 'node_modules'));
  const blob = spawnSync(process.execPath, [join(pkg, 'dist/gdrgate.cjs'), 'startup-snapshot', '--out', join(pkg, 'dist/gate.blob'), '--warm-up', join(REPO, 'examples/h200-vm.tar.gz')], { encoding: 'utf8', timeout: 300_000 });
  if (blob.status !== 0) throw new Error(`startup-snapshot of the build's copy: exit ${blob.status}: ${blob.stderr}`);
  return join(pkg, 'dist/cli.js');
}

/** What slurm/*.sh read from the .conf beside them. */
export const gateConf = (cli: string, config: string, node: string = process.execPath): string => `NODE=${node}\nCLI=${cli}\nCONFIG=${config}\n`;

/** slurm/<script>.sh unchanged at `dst` (mode 0755), and when `conf` is given, dst's .conf beside it. */
export function installWrapper(script: 'prolog' | 'epilog' | 'taskprolog', dst: string, conf?: string): void {
  copyFileSync(join(REPO, `slurm/${script}.sh`), dst);
  chmodSync(dst, 0o755);
  if (conf !== undefined) writeFileSync(dst.replace(/\.sh$/, '.conf'), conf, { mode: 0o644 });
}

// ---------------------------------------------------------------------------------------------- the sandbox

export type SlurmCmd = 'sinfo' | 'scontrol' | 'squeue' | 'sbatch' | 'srun' | 'scancel';

export interface Sandbox {
  /** The mkdtemp directory (0755: munged, as the munge user, must reach DIR/munge). */
  readonly WORK: string;
  /** The sandbox itself: etc/, log/, state/, run/ ... */
  readonly DIR: string;
  readonly CONF: string;
  /** The gate's config, baseline and log, in WORK. */
  readonly CONFIG: string;
  readonly BASELINE: string;
  readonly LOG: string;
  readonly port: number;
  /** start.sh with these SANDBOX_* / GATE_* variables (SANDBOX_PORT added); the node name is its last line. */
  start(vars: Record<string, string>): Ran & { node: string };
  /** stop.sh, once; null when already stopped. */
  stop(): Ran | null;
}

/**
 * A sandbox directory under /tmp, stopped and (when `t` passes) removed in teardown, stopped on exit if the file is
 * cut short. `inspect` says what else to look at when kept (after the Slurm logs and the gate log).
 */
export function sandbox(t: Test, o: { prefix: string; port: number; inspect?: () => string; forJobs?: boolean }): Sandbox {
  const WORK = mkdtempSync(o.prefix);
  chmodSync(WORK, 0o755);
  const DIR = join(WORK, 'slurm');
  const LOG = join(WORK, 'gdrgate.log');
  const runOpts = { withoutNodeOptions: o.forJobs === true };
  let stopped = false;
  const stop = (): Ran | null => {
    if (stopped) return null;
    stopped = true;
    return run('/bin/bash', [join(SANDBOX, 'stop.sh'), DIR], { ...runOpts, env: cleanEnv({}, o.forJobs), timeoutMs: 60_000 });
  };
  // Teardown normally; the exit hook only if the file is cut short (tap timeout, crash).
  process.once('exit', () => void stop());
  t.teardown(() => {
    const r = stop();
    if (r && r.status !== 0) t.comment(`stop.sh exited ${r.status}: ${r.stderr.trim()}`);
    if (t.passing()) rmSync(WORK, { recursive: true, force: true });
    else t.comment(`kept for inspection: ${WORK} (Slurm logs in ${DIR}/log, gate log ${LOG}${o.inspect ? `, ${o.inspect()}` : ''})`);
    t.comment(`total wall time ${secs(T0)}`);
  });
  const start = (vars: Record<string, string>): Ran & { node: string } => {
    const r = run('/bin/bash', [join(SANDBOX, 'start.sh'), DIR], {
      ...runOpts,
      env: cleanEnv({ ...vars, SANDBOX_PORT: String(o.port) }, o.forJobs),
      timeoutMs: 240_000, // first use installs the packages with apt
    });
    return { ...r, node: r.stdout.trim().split('\n').pop()!.trim() };
  };
  return { WORK, DIR, CONF: join(DIR, 'etc/slurm.conf'), CONFIG: join(WORK, 'gdrgate.json'), BASELINE: join(WORK, 'baseline.json'), LOG, port: o.port, start, stop };
}

/** Slurm clients against the sandbox at `conf`, each under a timeout, and the node's state as sinfo/scontrol show it. */
export function slurmClients(conf: string, node: string, cwd = '/') {
  const env = cleanEnv({ SLURM_CONF: conf });
  const slurm = (cmd: SlurmCmd, args: readonly string[], timeoutMs = CLIENT_TIMEOUT_MS): Ran => run(`/usr/bin/${cmd}`, args, { env, timeoutMs, cwd });
  /** sinfo %T: idle, drained, mixed ... */
  const state = (): string => slurm('sinfo', ['-h', '-N', '-n', node, '-o', '%T']).stdout.trim();
  /** sinfo %E: the drain reason, "none" when there is none. */
  const reason = (): string => slurm('sinfo', ['-h', '-N', '-n', node, '-o', '%E']).stdout.trim();
  /** scontrol State=: IDLE+DRAIN, MIXED+COMPLETING ... */
  const nodeFlags = (): string => /(?:^| )State=(\S+)/.exec(slurm('scontrol', ['show', 'node', '-o', node]).stdout)?.[1] ?? '?';
  const waitIdle = (timeoutMs = 30_000) => waitFor(state, (v) => v === 'idle', timeoutMs);
  return { env, slurm, state, reason, nodeFlags, waitIdle };
}

/**
 * A job-view log line: `pattern` by t.match, and its findings exactly, as `status code` each (a list inside t.match
 * is only a prefix: `findings: []` passes for any findings).
 */
export function viewIs(t: Test, line: Record<string, unknown> | undefined, pattern: Record<string, unknown>, findings: readonly string[], msg: string): void {
  t.match(line, pattern, msg);
  const fs = line?.findings;
  t.same(Array.isArray(fs) ? (fs as { status: string; code: string }[]).map((f) => `${f.status} ${f.code}`) : fs, findings, `${msg}: the findings, exactly`);
}
