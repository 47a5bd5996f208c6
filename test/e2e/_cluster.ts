// The 4-node Slurm of test/e2e/cluster as the cluster test files use it (not a test): one healthy H200 tree per node,
// the gate as every node's Prolog and HealthCheckProgram, a fresh cluster per case, and the final check that every
// cluster's network namespaces are gone (with the gate runs' durations, the evidence for docs/deadline.md).
import t, { type Test } from 'tap';
import { spawn } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULTS } from '../../src/config.js';
import { trainGpuTo } from '../helpers/h200-link.js';
import { cleanEnv, gateConf, installWrapper, REPO, run, runOrSkip, secs, snapshotBuild, T0, type Ran } from './_sandbox.js';

export const CLUSTER = join(REPO, 'test/e2e/cluster');
export const NODES = ['node1', 'node2', 'node3', 'node4'] as const;
export type NodeName = (typeof NODES)[number];
const TOOLS = ['/usr/sbin/ip', '/usr/bin/unshare', '/usr/bin/nsenter'];
const missingTools = TOOLS.filter((p) => !existsSync(p));
/** The gate's default deadline: the cluster's configs leave deadlineMs and scontrolTimeoutMs to the defaults. */
export const DEADLINE_MS = DEFAULTS.deadlineMs;
export const PCIE_REASON = /^gdrgate: pcie-link 0000:00:06\.0 /;
/** Our reason for a node's GPU trained to x8, whole: for `job`, or from the health check (no job). */
export const pcieReason = (job?: string): string => `gdrgate: pcie-link 0000:00:06.0 Gen5 x8 (want Gen5 x16)${job ? ` job=${job}` : ''}`;
// GDRGATE_CLUSTER_CASES=6a,6c,7: only these cases (the id before the name's colon); unset: all of them.
const ONLY = process.env.GDRGATE_CLUSTER_CASES?.split(',').map((s) => s.trim()).filter(Boolean) ?? null;
const wanted = (name: string): boolean => ONLY === null || ONLY.includes(name.slice(0, name.indexOf(':')));

/** Runs body as root with CI or GDRGATE_E2E=1 and the namespace tools present; else says why it skips. */
export async function runCluster(body: () => Promise<void>): Promise<void> {
  await runOrSkip(
    t,
    'cluster',
    async () => {
      if (missingTools.length) t.skip(`cluster e2e skipped: missing ${missingTools.join(', ')} (network/UTS/mount namespaces)`, () => {});
      else await body();
    },
    'it must run as root (it makes network namespaces and starts munged, slurmctld and four slurmd)',
    ' — a real 4-node Slurm from test/e2e/cluster; see test/e2e/README.md',
  );
}

/** A program run without a shell, without blocking the event loop (the test goes on meanwhile); SIGKILL at timeoutMs. */
export function runAsync(file: string, args: readonly string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((res) => {
    const ch = spawn(file, args, { env, cwd: '/', stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs, killSignal: 'SIGKILL' });
    let stdout = '';
    let stderr = '';
    ch.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    ch.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    ch.on('close', (status) => res({ status, stdout, stderr }));
  });
}

/** Per node, keys of its gdrgate.json to replace. */
export type NodeOver = Partial<Record<NodeName, Record<string, unknown>>>;

export interface Cluster {
  readonly DIR: string;
  readonly up: Ran;
  readonly slurm: (cmd: 'sinfo' | 'scontrol' | 'squeue' | 'sbatch' | 'scancel' | 'srun', args: readonly string[], timeoutMs?: number) => Ran;
  readonly gateLog: (n: NodeName) => Record<string, unknown>[];
  readonly reason: (n: NodeName) => string;
  readonly state: (n: NodeName) => string;
  readonly job: (id: string) => Record<string, string>;
  readonly submit: (args: readonly string[]) => string;
}

/** The trees, the baseline and the wrappers of one test file; clusterCase starts a fresh cluster per case. */
export function clusterSuite() {
  t.setTimeout(900_000);
  const WORK = mkdtempSync('/tmp/gdrgate-cluster-');
  chmodSync(WORK, 0o755);
  const CLI = snapshotBuild(WORK);
  const BASELINE = join(WORK, 'baseline.json');
  const JOBS = join(WORK, 'jobs');
  mkdirSync(JOBS);
  // One fixture tree per node, shared by the clusters below; a case breaks and mends its node's tree itself.
  const tree = (n: NodeName): string => join(WORK, 'trees', n);
  for (const n of NODES) cpSync(join(REPO, 'examples/h200-vm'), tree(n), { recursive: true, verbatimSymlinks: true });
  const mend = (): void => NODES.forEach((n) => trainGpuTo(tree(n), 16));
  // slurm/prolog.sh unchanged, as the Prolog and (named *health*) the HealthCheckProgram of every node. Its CONFIG is
  // under DIR/node, which each node's mount namespace binds to its own DIR/nodes/<name>: one path, a config per node.
  const PROLOG = join(WORK, 'gate-prolog.sh');
  const HEALTH = join(WORK, 'gate-health.sh');

  // A slow node: its gate's scontrol answers 1 s late (the real one then), so its prolog ends well after the others'.
  const SLOW_SCONTROL = join(WORK, 'scontrol-slow.sh');
  writeFileSync(SLOW_SCONTROL, '#!/bin/sh\n# cluster e2e: a slow scontrol\n/bin/sleep 1\nexec /usr/bin/scontrol "$@"\n', { mode: 0o755 });

  const cap = run(process.execPath, [CLI, 'baseline', 'capture', '--root', tree('node1'), '--class', 'cluster', '--match', 'node*', '--platform', 'virtualized'], { env: cleanEnv({}) });
  t.equal(cap.status, 0, 'baseline capture from a healthy tree', { stderr: cap.stderr });
  writeFileSync(BASELINE, cap.stdout);

  let clusters = 0;
  /** Every network namespace a cluster of this file made (start.sh's DIR/netns). */
  const namespaces: string[] = [];
  /** A fresh cluster for one case (~1-2 s), stopped in the case's teardown (and on exit if the file is cut short). */
  const cluster = (tt: Test, vars: Record<string, string>, over: NodeOver): Cluster => {
    const DIR = join(WORK, `c${++clusters}`);
    for (const n of NODES) {
      const nd = join(DIR, 'nodes', n);
      mkdirSync(nd, { recursive: true });
      const cfg = { baseline: BASELINE, root: tree(n), scontrol: '/usr/bin/scontrol', logFile: join(nd, 'gdrgate.log'), stateDir: join(nd, 'gate-run'), spool: join(nd, 'gate-spool'), ...over[n] };
      writeFileSync(join(nd, 'gdrgate.json'), JSON.stringify(cfg, null, 2) + '\n');
    }
    const conf = gateConf(CLI, join(DIR, 'node/gdrgate.json'));
    installWrapper('prolog', PROLOG, conf);
    installWrapper('prolog', HEALTH, conf);
    let stopped = false;
    const stop = (): Ran | null => (stopped ? null : ((stopped = true), run('/bin/bash', [join(CLUSTER, 'stop.sh'), DIR], { env: cleanEnv({}), timeoutMs: 60_000 })));
    const onExit = (): void => void stop();
    process.once('exit', onExit);
    tt.teardown(() => {
      process.off('exit', onExit);
      const r = stop();
      if (r) tt.comment(`stop: ${r.ms} ms${r.status !== 0 ? ` (exit ${r.status}: ${r.stderr.trim()})` : ` (${r.stderr.trim().split('\n').join(' | ')})`}`);
      if (!tt.passing()) tt.comment(`kept for inspection: ${DIR} (ctl/log, nodes/*/log, nodes/*/gdrgate.log)`);
    });
    const up = run('/bin/bash', [join(CLUSTER, 'start.sh'), DIR], { env: cleanEnv({ CLUSTER_PORT: '8100', GATE_PROLOG: PROLOG, ...vars }), timeoutMs: 120_000 });
    // The names start.sh gave this cluster's namespaces, kept before stop.sh removes its record: the kernel is asked at the end.
    if (existsSync(join(DIR, 'netns'))) namespaces.push(...readFileSync(join(DIR, 'netns'), 'utf8').split('\n').filter(Boolean));
    const env = cleanEnv({});
    const slurm: Cluster['slurm'] = (cmd, args, timeoutMs = 20_000) => run(join(DIR, 'bin', cmd), args, { env, timeoutMs, cwd: JOBS });
    const sinfo = (n: NodeName, f: string): string => slurm('sinfo', ['-h', '-N', '-n', n, '-o', f]).stdout.trim();
    const job = (id: string): Record<string, string> =>
      Object.fromEntries(
        slurm('scontrol', ['show', 'job', '-o', id])
          .stdout.trim()
          .split(/ (?=[A-Za-z:]+=)/)
          .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
      );
    const submit = (args: readonly string[]): string => {
      const r = slurm('sbatch', ['--parsable', '-o', '/dev/null', ...args]);
      if (r.status !== 0) throw new Error(`sbatch failed (${r.status}): ${r.stderr}`);
      return r.stdout.trim().split(';')[0]!;
    };
    const gateLog = (n: NodeName): Record<string, unknown>[] => {
      const f = join(DIR, 'nodes', n, 'gdrgate.log');
      return (existsSync(f) ? readFileSync(f, 'utf8') : '')
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    };
    return { DIR, up, slurm, gateLog, reason: (n) => sinfo(n, '%E'), state: (n) => sinfo(n, '%T'), job, submit };
  };

  const DONE = /^(COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY)$/;
  /** A case on its own fresh cluster, timed; trees mended first. */
  const clusterCase = (name: string, vars: Record<string, string>, body: (tt: Test, c: Cluster) => Promise<void>, over: NodeOver = {}, skip?: string): Promise<unknown> =>
    t.test(name, { skip: skip ?? (wanted(name) ? false : `not in GDRGATE_CLUSTER_CASES=${ONLY?.join(',')}`) }, async (tt) => {
      const c0 = performance.now();
      mend();
      // Job ids start at 1 on every cluster: the markers of an earlier case's job must not answer for this one's.
      for (const f of readdirSync(JOBS)) if (/^(prolog|release|task)\./.test(f)) rmSync(join(JOBS, f));
      const c = cluster(tt, vars, over);
      tt.comment(`start: ${c.up.ms} ms${c.up.status === 0 ? '' : ` — FAILED: ${c.up.stderr.slice(-3000)}`}`);
      if (c.up.status !== 0) {
        tt.fail('start.sh brought 4 nodes to idle');
        return;
      }
      try {
        await body(tt, c);
      } finally {
        tt.comment(`${name}: ${secs(c0)}`);
      }
    });
  const runOf = (c: Cluster, n: NodeName, id: string): Record<string, unknown> | undefined => c.gateLog(n).find((l) => l.msg === 'gdrgate run' && l.job === id);

  /** Every cluster's namespaces gone, the gate runs' durations said, the work directory removed when all passed. */
  const finish = (): void => {
    if (clusters === 0) return void t.comment(`no case of this file selected (GDRGATE_CLUSTER_CASES=${ONLY?.join(',')})`);
    // The kernel's list (`ip netns list`: "name" or "name (id: N)" per line), not stop.sh's record, which it removes anyway.
    const listed = run('/usr/sbin/ip', ['netns', 'list']);
    t.equal(listed.status, 0, 'ip netns list', { stderr: listed.stderr });
    const live = new Set(listed.stdout.split('\n').map((l) => l.split(' ')[0]!).filter(Boolean));
    t.ok(namespaces.length >= 5, `${namespaces.length} namespaces made by ${clusters} clusters`);
    const ours = namespaces.filter((n) => live.has(n));
    t.same(ours, [], `every cluster's namespaces deleted (${live.size} network namespaces on the host now)`);
    // The evidence for the default deadline (docs/deadline.md): every gate run of every cluster, passing or not.
    const all = ours.length ? [] : Array.from({ length: clusters }, (_, i) => join(WORK, `c${i + 1}`)).flatMap((d) => NODES.flatMap((n) => {
      const f = join(d, 'nodes', n, 'gdrgate.log');
      return existsSync(f) ? readFileSync(f, 'utf8').split('\n').filter((l) => l.includes('"msg":"gdrgate run"')).map((l) => JSON.parse(l) as Record<string, unknown>) : [];
    }));
    const spread = (xs: number[]): string => {
      const v = [...xs].sort((a, b) => a - b);
      return v.length ? `${v.length} runs, p50 ${v[Math.floor(v.length / 2)]} ms, p95 ${v[Math.min(v.length - 1, Math.floor(v.length * 0.95))]} ms, max ${v[v.length - 1]} ms` : 'none';
    };
    t.comment(`gate runs, passing: ${spread(all.filter((l) => l.action === 'none').map((l) => Number(l.durationMs)))}`);
    t.comment(`gate runs that called scontrol (drain, kept, failed): ${spread(all.filter((l) => l.action !== 'none').map((l) => Number(l.durationMs)))}`);
    if (t.passing()) rmSync(WORK, { recursive: true, force: true });
    t.comment(`cluster e2e: ${clusters} clusters started and stopped, ${secs(T0)} in all`);
  };
  return { WORK, CLI, JOBS, PROLOG, HEALTH, SLOW_SCONTROL, tree, mend, clusterCase, runOf, DONE, finish };
}
