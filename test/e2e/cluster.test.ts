// End to end on a real multi-node Slurm 22.05 (test/e2e/cluster: one slurmctld and four slurmd, each in its own
// network, UTS and mount namespace): the gate as every node's Prolog and HealthCheckProgram, judged by what Slurm
// reports. What a single node cannot show: the job the gate stops runs on another node; a two-node batch job and
// PrologFlags; an idle broken node drained by the health check. Runs when CI is set or GDRGATE_E2E=1, as root,
// with ip, unshare and nsenter; see test/e2e/README.md.
import t, { type Test } from 'tap';
import { spawn } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULTS } from '../../src/config.js';
import { trainGpuTo } from '../helpers/h200-link.js';
import { renderDrill, type DrillReport } from '../../src/drill/report.js';
import { validate } from '../helpers/schema.js';
import { cleanEnv, gateConf, HELD, installWrapper, REPO, run, runOrSkip, secs, snapshotBuild, T0, waitFor, type Ran } from './_sandbox.js';

const CLUSTER = join(REPO, 'test/e2e/cluster');
const NODES = ['node1', 'node2', 'node3', 'node4'] as const;
type NodeName = (typeof NODES)[number];
const TOOLS = ['/usr/sbin/ip', '/usr/bin/unshare', '/usr/bin/nsenter'];
const missingTools = TOOLS.filter((p) => !existsSync(p));
/** The gate's default deadline: the cluster's configs leave deadlineMs and scontrolTimeoutMs to the defaults. */
const DEADLINE_MS = DEFAULTS.deadlineMs;
const PCIE_REASON = /^gdrgate: pcie-link 0000:00:06\.0 /;
// GDRGATE_CLUSTER_CASES=6a,6c,7: only these cases (the id before the name's colon); unset: all of them.
const ONLY = process.env.GDRGATE_CLUSTER_CASES?.split(',').map((s) => s.trim()).filter(Boolean) ?? null;
const wanted = (name: string): boolean => ONLY === null || ONLY.includes(name.slice(0, name.indexOf(':')));

await runOrSkip(
  t,
  'cluster',
  async () => {
    if (missingTools.length) t.skip(`cluster e2e skipped: missing ${missingTools.join(', ')} (network/UTS/mount namespaces)`, () => {});
    else await e2e();
  },
  'it must run as root (it makes network namespaces and starts munged, slurmctld and four slurmd)',
  ' — a real 4-node Slurm from test/e2e/cluster; see test/e2e/README.md',
);

/** A program run without a shell, without blocking the event loop (the test goes on meanwhile); SIGKILL at timeoutMs. */
function runAsync(file: string, args: readonly string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<{ status: number | null; stdout: string; stderr: string }> {
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
type NodeOver = Partial<Record<NodeName, Record<string, unknown>>>;

interface Cluster {
  readonly DIR: string;
  readonly up: Ran;
  readonly slurm: (cmd: 'sinfo' | 'scontrol' | 'squeue' | 'sbatch' | 'scancel' | 'srun', args: readonly string[], timeoutMs?: number) => Ran;
  readonly gateLog: (n: NodeName) => Record<string, unknown>[];
  readonly reason: (n: NodeName) => string;
  readonly state: (n: NodeName) => string;
  readonly job: (id: string) => Record<string, string>;
  readonly submit: (args: readonly string[]) => string;
}

async function e2e(): Promise<void> {
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
      const cfg = { baseline: BASELINE, root: tree(n), scontrol: '/usr/bin/scontrol', logFile: join(nd, 'gdrgate.log'), stateDir: join(nd, 'gate-run'), ...over[n] };
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

  // ------------------------------------------------------------------ 0. the cluster itself
  await clusterCase('0: four nodes, each its own hostname and namespaces', {}, async (tt, c) => {
    const r = c.slurm('srun', ['-N4', '-l', '/bin/hostname']);
    tt.equal(r.status, 0, 'srun -N4 hostname', { stderr: r.stderr });
    tt.same(r.stdout.trim().split('\n').map((l) => l.replace(/^\d+: /, '')).sort(), [...NODES], 'each slurmd sees its own hostname');
    const ns = readFileSync(join(c.DIR, 'netns'), 'utf8').trim().split('\n');
    const hostLinks = run('/usr/sbin/ip', ['-o', 'link', 'show']).stdout;
    tt.notOk(/\bbr0\b|\bv1[1-4]@/.test(hostLinks), "neither the bridge nor a veth is in the host's namespace");
    tt.equal(ns.length, 5, 'five network namespaces recorded (controller + four nodes)');
  });

  // ------------------------------------------------------------------ 1. two-node job, both prologs pass
  await clusterCase('1: two-node job on healthy nodes', {}, async (tt, c) => {
    const id = c.submit(['-N2', '-w', 'node1,node2', '--wrap', 'srun -N2 /bin/true']);
    const done = await waitFor(() => c.job(id).JobState ?? '', (v) => DONE.test(v), 30_000);
    tt.comment(`case 1 submit to completion: ${done.ms} ms`);
    tt.match(c.job(id), { JobState: /^COMPLETED$/, NodeList: /^node\[1-2\]$/, ExitCode: /^0:0$/ }, 'the job completed on both nodes');
    for (const n of ['node1', 'node2'] as const) tt.match(runOf(c, n, id), { result: /^healthy$/, exitCode: 0, startup: /^snapshot$/ }, `${n}: its prolog passed (its own log)`);
    tt.equal(c.gateLog('node3').length + c.gateLog('node4').length, 0, 'no prolog ran on the nodes the job did not get');
    tt.same(NODES.map(c.state), ['idle', 'idle', 'idle', 'idle'], 'all nodes idle');
  });

  // ------------------------------------------------------------------ 2. the job the gate stops runs elsewhere
  await clusterCase('2: x8 node drained; with nohold_on_prolog_fail the job completes on another node', { CLUSTER_EXTRA_CONF: 'SchedulerParameters=nohold_on_prolog_fail' }, async (tt, c) => {
    trainGpuTo(tree('node1'), 8);
    // Nodes 2-4 busy (one CPU each), so node1 is the only idle node when the job arrives.
    const filler = c.submit(['-N3', '-w', 'node[2-4]', '--wrap', '/bin/sleep 6']);
    const busy = await waitFor(() => c.job(filler).JobState, (v) => v === 'RUNNING', 30_000);
    tt.ok(busy.ok, `filler on node[2-4] running (${busy.value})`);
    const s0 = performance.now();
    const id = c.submit(['-J', 'case2', '--wrap', '/bin/hostname']);
    const done = await waitFor(() => c.job(id).JobState ?? '', (v) => DONE.test(v), 120_000, 250); // the requeued job waits for its EligibleTime and a scheduler pass
    const ms = Math.round(performance.now() - s0);
    const j = c.job(id);
    tt.match(j, { JobState: /^COMPLETED$/, Restarts: /^1$/, ExitCode: /^0:0$/ }, `requeued once and completed (${ms} ms from submit)`, { done });
    tt.not(j.NodeList, 'node1', `it ran on ${j.NodeList}, not on the broken node`);
    tt.match(c.reason('node1'), PCIE_REASON, 'node1 drained with our reason');
    tt.match(c.reason('node1'), new RegExp(`job=${id}$`), "our reason names the job");
    tt.match(runOf(c, 'node1', id), { result: /^unhealthy$/, action: /^drained$/ }, "node1's log: drained for the job");
    tt.comment(`case 2 submit to completion: ${ms} ms`);
    tt.comment(`scontrol show job ${id}:\n${c.slurm('scontrol', ['show', 'job', id]).stdout.trimEnd()}`);
  });

  await clusterCase('2b: without nohold_on_prolog_fail the job is requeued held', {}, async (tt, c) => {
    trainGpuTo(tree('node1'), 8);
    const id = c.submit(['-w', 'node1', '--wrap', '/bin/true']);
    const held = await waitFor(() => c.slurm('squeue', ['-h', '-j', id, '-o', '%T|%r']).stdout.trim(), (v) => v === `PENDING|${HELD}`, 30_000);
    tt.ok(held.ok, `held: ${held.value} (${held.ms} ms)`);
    tt.match(c.reason('node1'), PCIE_REASON, 'node1 drained with our reason');
    tt.same(['node2', 'node3', 'node4'].map((n) => c.state(n as NodeName)), ['idle', 'idle', 'idle'], 'the other nodes untouched');
  });

  // ------------------------------------------------------------------ 3. a two-node batch job, one prolog fails
  const slowNode2: NodeOver = { node2: { scontrol: SLOW_SCONTROL } };
  /**
   * node1 (the batch host: first of the allocation) is healthy; node2 fails its prolog, seconds after node1's passed
   * (its scontrol is slow). The batch script first creates a marker file; the job is requeued held.
   */
  const twoNodeBatch = async (tt: Test, c: Cluster, tag: string): Promise<{ id: string; started: number | null; failedAt: number }> => {
    trainGpuTo(tree('node2'), 8);
    const mark = join(JOBS, `started.${tag}`);
    rmSync(mark, { force: true });
    const id = c.submit(['-N2', '-w', 'node1,node2', '--wrap', `: > ${mark}; srun -N2 /bin/true`]);
    const drained = await waitFor(() => c.reason('node2'), (v) => PCIE_REASON.test(v), 30_000);
    tt.ok(drained.ok, `node2 drained with our reason (${drained.value})`);
    const held = await waitFor(() => c.slurm('squeue', ['-h', '-j', id, '-o', '%T|%r']).stdout.trim(), (v) => v === `PENDING|${HELD}`, 30_000);
    tt.ok(held.ok, `job requeued held: ${held.value}`);
    tt.match(runOf(c, 'node1', id), { result: /^healthy$/ }, "node1's prolog passed");
    const failed = runOf(c, 'node2', id);
    tt.match(failed, { result: /^unhealthy$/, action: /^drained$/ }, "node2's prolog drained it");
    const failedAt = Date.parse(String(failed?.time));
    // When the script started: the marker's mtime (the requeue may kill it a few ms later, before it could write more).
    const started = existsSync(mark) ? statSync(mark).mtimeMs : null;
    tt.comment(`${tag}: node2's gate ended at +${failedAt - Date.parse(String(runOf(c, 'node1', id)?.time))} ms after node1's; batch script ${started === null ? 'never started' : started >= failedAt ? `started ${Math.round(started - failedAt)} ms after node2's gate ended` : `started ${Math.round(failedAt - started)} ms BEFORE node2's gate ended`}`);
    return { id, started, failedAt };
  };
  await clusterCase('3: PrologFlags=Alloc,DeferBatch: the batch script does not start before every prolog has ended', {}, async (tt, c) => {
    tt.match(readFileSync(join(c.DIR, 'etc/slurm.conf'), 'utf8'), /^PrologFlags=Alloc,DeferBatch$/m, "slurm/slurm.conf.snippet's PrologFlags");
    const r = await twoNodeBatch(tt, c, 'Alloc,DeferBatch');
    // Slurm 22.05 launches the batch step when the last prolog completes, even a failed one; the requeue that the
    // failure causes cancels it a few ms later. So it may start, but never while a node's prolog is still running.
    tt.ok(r.started === null || r.started >= r.failedAt - 50, 'the batch script did not start while node2 was still in its prolog');
  }, slowNode2);
  await clusterCase('3b: PrologFlags=Alloc alone: the batch script starts while the other node is still in its prolog', { CLUSTER_PROLOG_FLAGS: 'Alloc' }, async (tt, c) => {
    const r = await twoNodeBatch(tt, c, 'Alloc');
    tt.ok(r.started !== null && r.started < r.failedAt - 1000, 'with Alloc alone the batch script ran on node1 before node2 failed its prolog');
  }, slowNode2);

  // ------------------------------------------------------------------ 4. HealthCheckProgram on idle nodes
  await clusterCase('4: HealthCheckProgram drains an idle broken node, resumes it when fixed, leaves a human drain', { GATE_HEALTH: HEALTH, CLUSTER_HEALTH_INTERVAL: '2' }, async (tt, c) => {
    const HUMAN = 'rack maintenance by ops';
    tt.equal(c.slurm('scontrol', ['update', 'nodename=node4', 'state=drain', `reason=${HUMAN}`]).status, 0, 'a human drains node4');
    const h0 = performance.now();
    trainGpuTo(tree('node3'), 8);
    const drained = await waitFor(() => c.reason('node3'), (v) => PCIE_REASON.test(v), 60_000);
    tt.ok(drained.ok, `idle node3 drained by the health check in ${secs(h0)}: ${drained.value}`);
    tt.notMatch(drained.value, /job=/, 'no job was involved');
    tt.equal(c.slurm('squeue', ['-h', '-t', 'all', '-o', '%i']).stdout.trim(), '', 'no job ever ran');
    tt.match(c.state('node3'), /^drain/, 'node3 drained');
    const f0 = performance.now();
    trainGpuTo(tree('node3'), 16);
    const back = await waitFor(() => c.state('node3'), (v) => v === 'idle', 60_000);
    tt.ok(back.ok, `node3 resumed itself after the fix in ${secs(f0)} (${back.value})`);
    tt.equal(c.reason('node4'), HUMAN, "node4 keeps the human's reason, word for word");
    tt.match(c.state('node4'), /^drain/, 'node4 still drained');
    tt.same(['node1', 'node2'].map((n) => c.state(n as NodeName)), ['idle', 'idle'], 'healthy nodes untouched');
  });
  // ------------------------------------------------------------------ 5. the agent on every node, 200 jobs
  await clusterCase('5: gdrgate agent on every node answers the Prologs of 200 jobs, all completed', {}, async (tt, c) => {
    const JOBS_N = 200;
    // The Prolog asks its node's agent (AGENT= in the wrapper's .conf), under DIR/node: each node's own directory.
    writeFileSync(PROLOG.replace(/\.sh$/, '.conf'), `${gateConf(CLI, join(c.DIR, 'node/gdrgate.json'))}AGENT=${join(c.DIR, 'node/agent')}\n`, { mode: 0o644 });
    // Each agent in its node's namespaces (its slurmd's), as examples/systemd/gdrgate-agent.service starts it.
    const agents = NODES.map((n) => {
      mkdirSync(join(c.DIR, 'nodes', n, 'agent'), { mode: 0o700 });
      const pid = readFileSync(join(c.DIR, 'nodes', n, 'run/slurmd.pid'), 'utf8').trim();
      const args = ['-t', pid, '-n', '-m', '-u', '--', process.execPath, '--max-semi-space-size=2', CLI, 'agent', '--config', join(c.DIR, 'node/gdrgate.json'), '--dir', join(c.DIR, 'node/agent')];
      return spawn('/usr/bin/nsenter', args, { env: cleanEnv({}), cwd: '/', stdio: 'ignore' });
    });
    tt.teardown(() => agents.forEach((a) => a.kill('SIGTERM')));
    const up = await waitFor(() => NODES.filter((n) => existsSync(join(c.DIR, 'nodes', n, 'agent/agent.pid'))), (v) => v.length === NODES.length, 30_000, 100);
    tt.same(up.value, [...NODES], `an agent listening on every node (${up.ms} ms)`);
    const a0 = performance.now();
    const array = c.submit([`--array=1-${JOBS_N}`, '--wrap', '/bin/true']);
    const gone = await waitFor(() => c.slurm('squeue', ['-h', '-j', array, '-o', '%i']).stdout.trim(), (v) => v === '', 600_000, 500);
    tt.ok(gone.ok, `the ${JOBS_N} jobs left the queue in ${secs(a0)}`);
    // One line per array task: its own JobId (the Prolog's SLURM_JOB_ID) and its state.
    const tasks = c.slurm('scontrol', ['show', 'job', '-o', array]).stdout.trim().split('\n').filter(Boolean).map((l) => ({ id: /(?:^| )JobId=(\d+) /.exec(l)?.[1] ?? '?', state: /(?:^| )JobState=(\S+) /.exec(l)?.[1] ?? '?' }));
    tt.equal(tasks.length, JOBS_N, `${JOBS_N} array tasks`);
    tt.same([...new Set(tasks.map((x) => x.state))], ['COMPLETED'], 'every one COMPLETED');
    const runs = NODES.flatMap((n) => c.gateLog(n).filter((l) => l.msg === 'gdrgate run').map((l): Record<string, unknown> & { node: NodeName } => ({ ...l, node: n })));
    const ids = tasks.map((x) => x.id).sort();
    tt.same(runs.map((l) => String(l.job)).sort(), ids, 'one Prolog per job, no more, no fewer');
    tt.same(runs.filter((l) => l.startup !== 'agent' || l.result !== 'healthy' || l.exitCode !== 0).map((l) => `${l.node} job ${String(l.job)}: ${String(l.startup)} ${String(l.result)} ${String(l.agent ?? '')}`), [], 'every Prolog answered healthy by its agent');
    tt.ok(NODES.every((n) => runs.some((l) => l.node === n)), `the jobs spread over the nodes: ${NODES.map((n) => `${n} ${runs.filter((l) => l.node === n).length}`).join(', ')}`);
    tt.same(NODES.map(c.state), ['idle', 'idle', 'idle', 'idle'], 'all nodes idle, none drained');
    tt.same(agents.map((a) => a.exitCode), [null, null, null, null], 'every agent still running');
  });
  // ------------------------------------------------------------------ 6. faults (the gate never drains a healthy node)
  const restart = (c: Cluster, name: 'ctl' | 'munge' | NodeName): Ran => run('/bin/bash', [join(CLUSTER, 'daemon.sh'), c.DIR, name], { env: cleanEnv({}), timeoutMs: 30_000 });
  const pidOf = (c: Cluster, name: 'ctl' | NodeName): number => Number(readFileSync(name === 'ctl' ? join(c.DIR, 'ctl/run/slurmctld.pid') : join(c.DIR, 'nodes', name, 'run/slurmd.pid'), 'utf8').trim());
  /** After a fault: every node back to plain idle, no reason of ours anywhere, every gate run for `id` passed within its deadline. */
  const recovered = async (tt: Test, c: Cluster, id: string): Promise<void> => {
    const idle = await waitFor(() => NODES.map(c.state).join(' '), (v) => v === 'idle idle idle idle', 90_000, 500);
    tt.ok(idle.ok, `the cluster returned to idle in ${idle.ms} ms (${idle.value})`);
    tt.same(NODES.map(c.reason).filter((r) => r.startsWith('gdrgate:')), [], 'no node drained by the gate');
    const runs = NODES.flatMap((n) => c.gateLog(n).filter((l) => l.msg === 'gdrgate run' && l.job === id));
    tt.ok(runs.length > 0 && runs.every((l) => l.exitCode === 0 && Number(l.durationMs) < DEADLINE_MS), `every gate run for job ${id} passed within its deadline of ${DEADLINE_MS} ms (${runs.length} runs, max ${Math.max(...runs.map((l) => Number(l.durationMs)))} ms)`);
  };
  // A Prolog held at its start, so a fault can be set up while every node's Prolog is known to be running: it says
  // so (JOBS/prolog.<node>.<job>), waits until the test releases the job (JOBS/release.<job>; 1,200 naps of 0.1 s at
  // most, a bound for a test cut short, past PrologEpilogTimeout: 300 let a slow machine's gates start before the
  // fault was set up), then runs the gate's prolog.sh (exec: its $0 is prolog.sh's, whose .conf is found beside it).
  const holdPrologs = (tt: Test, c: Cluster, id: string, nodes: readonly NodeName[]) =>
    waitFor(() => nodes.filter((n) => existsSync(join(JOBS, `prolog.${n}.${id}`))), (v) => v.length === nodes.length, 30_000, 100).then((h) => {
      tt.ok(h.ok, `the Prolog of job ${id} started on ${h.value.join(',') || 'no node'} and waits there`);
      return Math.min(...h.value.map((n) => statSync(join(JOBS, `prolog.${n}.${id}`)).mtimeMs));
    });
  const release = (id: string): void => writeFileSync(join(JOBS, `release.${id}`), '');
  const gateRuns = (c: Cluster, id: string): Record<string, unknown>[] => NODES.flatMap((n) => c.gateLog(n).filter((l) => l.msg === 'gdrgate run' && l.job === id));
  const HOLD_PROLOG = join(WORK, 'hold-prolog.sh');
  writeFileSync(
    HOLD_PROLOG,
    `#!/bin/sh\n# cluster e2e: a Prolog held until the test releases its job, then the gate's own prolog.sh\n: > ${JOBS}/prolog.$SLURMD_NODENAME.$SLURM_JOB_ID\ni=0\nwhile [ ! -e ${JOBS}/release.$SLURM_JOB_ID ] && [ $i -lt 1200 ]; do /bin/sleep 0.1; i=$((i + 1)); done\nexec ${PROLOG}\n`,
    { mode: 0o755 },
  );
  const HOLD = { GATE_PROLOG: HOLD_PROLOG };

  // With PrologFlags=DeferBatch the batch script's launch waits in slurmctld's agent queue (in memory) until every
  // Prolog has ended: a SIGKILL takes it along, and the recovered job sits RUNNING with no script. Slurm's own remedy
  // (src/slurmctld/job_mgr.c, _purge_missing_jobs): when the batch host registers and the job is more than
  // BatchStartTimeout (10 s) + MessageTimeout (at most 10 s) older than slurmctld's restart, it is requeued. After the
  // restart's own registrations, a node registers every 20th ping, a ping every SlurmdTimeout/3 s
  // (src/slurmctld/ping_nodes.c): SlurmdTimeout=6 bounds that at 3 + 19 x 2 = 41 s after the restart (60 s: 383 s).
  await clusterCase('6a: slurmctld SIGKILLed while the prologs of a saved 4-node job run, restarted 2 s later', { ...HOLD, CLUSTER_SLURMD_TIMEOUT: '6' }, async (tt, c) => {
    const name = `gdrgate-6a-${Date.now().toString(36)}`;
    const id = c.submit(['-N4', '-J', name, '--wrap', 'srun -N4 /bin/sleep 2']);
    const prologsFrom = await holdPrologs(tt, c, id, NODES);
    // slurmctld writes its state at most every SAVE_MAX_WAIT (5 s, src/slurmctld/state_save.c): a job killed with
    // it before then is gone. Wait for a save written after the allocation (the Prologs started) that holds the job.
    const JOB_STATE = join(c.DIR, 'ctl/state/job_state');
    const saved = await waitFor(() => existsSync(JOB_STATE) && statSync(JOB_STATE).mtimeMs > prologsFrom && readFileSync(JOB_STATE).includes(name), (v) => v, 30_000, 100);
    tt.ok(saved.ok, `the allocated job is in StateSaveLocation/job_state (${saved.ms} ms after the Prologs started)`);
    const killedAt = Date.now();
    process.kill(pidOf(c, 'ctl'), 'SIGKILL');
    release(id);
    // The gates end while slurmctld is down: on the pass path they never ask it anything. slurmd retries its
    // REQUEST_COMPLETE_PROLOG until slurmctld answers (src/slurmd/slurmd/req.c, _rpc_prolog), so none is lost.
    const ran = await waitFor(() => gateRuns(c, id).length, (v) => v === 4, 30_000, 100);
    tt.ok(ran.ok, `the four gates ended while slurmctld was down (${ran.value} runs, the last ${Date.now() - killedAt} ms after the kill)`);
    await sleep(Math.max(0, killedAt + 2_000 - Date.now()));
    tt.equal(restart(c, 'ctl').status, 0, 'slurmctld started again');
    const restartedAt = Date.now();
    const done = await waitFor(() => c.job(id).JobState ?? '', (v) => DONE.test(v), 120_000, 500);
    const ends = gateRuns(c, id).map((l) => Date.parse(String(l.time)) - killedAt);
    tt.comment(`6a: gate runs for job ${id} ended ${ends.join(', ')} ms after the kill (restart at +${restartedAt - killedAt} ms); job ${done.value} ${done.ms} ms after the restart`);
    tt.match(c.job(id), { JobState: /^COMPLETED$/, Restarts: /^1$/, ExitCode: /^0:0$/ }, 'the job was requeued once (its lost batch launch) and completed');
    const purge = new RegExp(`^\\[([^\\]]+)\\] Batch JobId=${id} missing from batch node node1 .*Requeuing job`, 'm').exec(readFileSync(join(c.DIR, 'ctl/log/slurmctld.log'), 'utf8'));
    tt.ok(purge, "slurmctld's log: the batch script found missing, the job requeued");
    if (purge) tt.comment(`6a: requeued ${Date.parse(purge[1]!) - restartedAt} ms after the restart (${purge[0]})`);
    await recovered(tt, c, id);
  });

  await clusterCase("6b: node2's slurmd SIGKILLed while the job's step runs there, restarted 1 s later", {}, async (tt, c) => {
    // Each task says when it runs (JOBS/task.<node>.<job>): the kill comes only once the step is running on node2.
    const id = c.submit(['-N2', '-w', 'node1,node2', '--wrap', `srun -N2 /bin/sh -c ': > ${JOBS}/task.$SLURMD_NODENAME.$SLURM_JOB_ID; exec /bin/sleep 6'`]);
    const task = await waitFor(() => existsSync(join(JOBS, `task.node2.${id}`)), (v) => v, 30_000, 100);
    tt.ok(task.ok, `the step's task runs on node2 (job ${c.job(id).JobState})`);
    const killedAt = Date.now();
    process.kill(pidOf(c, 'node2'), 'SIGKILL');
    await sleep(1_000);
    tt.equal(restart(c, 'node2').status, 0, "node2's slurmd started again");
    const back = await waitFor(() => c.state('node2'), (v) => !v.endsWith('*'), 30_000, 250);
    tt.ok(back.ok, `node2 responds again (${back.value}, ${Date.now() - killedAt} ms after the kill); job ${c.job(id).JobState}`);
    const done = await waitFor(() => c.job(id).JobState ?? '', (v) => DONE.test(v), 60_000, 250);
    tt.comment(`job ${id}: ${done.value} ${Date.now() - killedAt} ms after the kill (its tasks sleep 6 s)`);
    tt.match(c.job(id), { JobState: /^COMPLETED$/, ExitCode: /^0:0$/ }, 'the job completed, its step undisturbed');
    await recovered(tt, c, id);
  });

  await clusterCase('6c: munged stopped while the prologs of a 4-node job run, one node broken; munged restarted', HOLD, async (tt, c) => {
    trainGpuTo(tree('node1'), 8);
    const id = c.submit(['-N4', '--wrap', 'srun -N4 /bin/true']);
    await holdPrologs(tt, c, id, NODES);
    const munged = Number(readFileSync(join(c.DIR, 'ctl/run/munged.pid'), 'utf8').trim());
    const stoppedAt = Date.now();
    process.kill(munged, 'SIGTERM');
    const gone = await waitFor(() => existsSync(`/proc/${munged}`), (v) => !v, 30_000, 50);
    tt.ok(gone.ok, `munged stopped (${gone.ms} ms)`);
    const probe = c.slurm('sinfo', ['-h']);
    tt.not(probe.status, 0, `a Slurm client cannot authenticate now (${probe.stderr.trim().split('\n')[0]})`);
    release(id);
    const ran = await waitFor(() => gateRuns(c, id).length, (v) => v === 4, 30_000, 100);
    tt.ok(ran.ok, `the four gates ended while munged was down (${ran.value} runs)`);
    for (const n of ['node2', 'node3', 'node4'] as const) tt.match(runOf(c, n, id), { result: /^healthy$/, exitCode: 0, action: /^none$/ }, `${n}: healthy, passed without scontrol`);
    const broken = runOf(c, 'node1', id);
    // DESIGN §5: the state could not be read, so nothing is written; exit 1 all the same: Slurm drains the node.
    tt.match(broken, { result: /^unhealthy$/, exitCode: 1, action: /^(kept|drain failed): / }, `node1: unhealthy, its drain attempt failed, exit 1 (${String(broken?.action)})`);
    tt.ok(c.gateLog('node1').some((l) => l.msg === 'cannot read node state; not writing a drain reason' || l.msg === 'drain failed'), "node1's log says why no reason was written");
    tt.comment(`6c: gate runs ${gateRuns(c, id).map((l) => `${String(l.node)} ${String(l.durationMs)} ms`).join(', ')}`);
    tt.equal(restart(c, 'munge').status, 0, `munged started again (${Date.now() - stoppedAt} ms after it stopped)`);
    // slurmd retries REQUEST_COMPLETE_PROLOG every 15 s (RETRY_DELAY) until it authenticates: node1's failure reaches
    // slurmctld at the first retry after munged is back.
    const drained = await waitFor(() => c.state('node1'), (v) => /^drain/.test(v), 60_000, 250);
    tt.ok(drained.ok, `node1 drained by Slurm once munged is back (${drained.value}: ${c.reason('node1')})`);
    tt.notMatch(c.reason('node1'), /^gdrgate:/, "the reason is Slurm's own: ours could not be written");
    const held = await waitFor(() => c.slurm('squeue', ['-h', '-j', id, '-o', '%T|%r']).stdout.trim(), (v) => v === `PENDING|${HELD}`, 30_000);
    tt.ok(held.ok, `job requeued held: ${held.value}`);
    // The admin's part: the node mended, the job cancelled, node1 resumed.
    trainGpuTo(tree('node1'), 16);
    c.slurm('scancel', [id]);
    tt.equal(c.slurm('scontrol', ['update', 'nodename=node1', 'state=resume']).status, 0, 'node1 resumed by hand');
    const idle = await waitFor(() => NODES.map(c.state).join(' '), (v) => v === 'idle idle idle idle', 60_000, 500);
    tt.ok(idle.ok, `the cluster returned to idle in ${idle.ms} ms (${idle.value})`);
    const runs = gateRuns(c, id);
    tt.ok(runs.every((l) => Number(l.durationMs) < DEADLINE_MS), `every gate run ended within its deadline of ${DEADLINE_MS} ms (max ${Math.max(...runs.map((l) => Number(l.durationMs)))} ms)`);
  });
  // ------------------------------------------------------------------ 7. a drill on one node while another runs jobs
  await clusterCase('7: gdrgate drill run on node1 while node3 keeps running jobs: the probe is requeued to a healthy node', { CLUSTER_EXTRA_CONF: 'SchedulerParameters=nohold_on_prolog_fail' }, async (tt, c) => {
    // The drill's config: node1's own (its stateDir is where node1's Prolog looks for the drill), with the cluster's
    // client wrappers (scontrol, and sbatch, squeue, sinfo, scancel beside it) run from the controller's namespace.
    const DRILL_CONF = join(c.DIR, 'drill-node1.json');
    writeFileSync(DRILL_CONF, JSON.stringify({ ...(JSON.parse(readFileSync(join(c.DIR, 'nodes/node1/gdrgate.json'), 'utf8')) as object), scontrol: join(c.DIR, 'bin/scontrol') }, null, 2) + '\n');
    const drillArgs = (args: readonly string[]): string[] => [CLI, 'drill', ...args, '--config', DRILL_CONF, '--node', 'node1'];
    const s = run(process.execPath, drillArgs(['start', '--fault', 'pcie-link:0000:00:06.0=x8', '--drain', '--minutes', '5']), { env: cleanEnv({}), timeoutMs: 30_000 });
    tt.equal(s.status, 0, `drill start --drain: ${s.stdout.trim()}`, { stderr: s.stderr });
    const marker = /drill ([0-9a-f]{8}) armed/.exec(s.stdout)?.[1] ?? '?';
    // node3 keeps running jobs, one after another, for as long as the drill runs.
    let feeding = true;
    const fed: string[] = [];
    const feeder = (async (): Promise<void> => {
      while (feeding) {
        const id = c.submit(['-w', 'node3', '-J', 'busy-node3', '--wrap', '/bin/sleep 1']);
        fed.push(id);
        await waitFor(() => c.job(id).JobState ?? '', (v) => DONE.test(v), 30_000, 200);
      }
    })();
    const d0 = performance.now();
    const r = await runAsync(process.execPath, drillArgs(['run', '--json', '--step-seconds', '60']), cleanEnv({}), 240_000);
    feeding = false;
    await feeder;
    tt.equal(r.status, 0, `drill run exits 0 (${secs(d0)})`, { stdout: r.stdout.slice(-3000), stderr: r.stderr.slice(-2000) });
    let rep: DrillReport;
    try {
      rep = JSON.parse(r.stdout) as DrillReport;
    } catch {
      tt.fail('drill run --json printed JSON', { stdout: r.stdout.slice(-2000) });
      return;
    }
    tt.same(validate('drill', rep), [], 'the report validates against schemas/drill.schema.json');
    tt.equal(rep.ok, true, 'report: ok', { problems: rep.problems });
    tt.match(rep.drain.reason ?? '', new RegExp(`^gdrgate: pcie-link 0000:00:06\\.0 .* drill=${marker}$`), `node1 drained by the probe's Prolog: ${rep.drain.reason}`);
    const probe = rep.probe.job ?? '?';
    tt.match(rep.requeue, { outcome: /^ran-elsewhere$/, released: true, restarts: 1, state: /^COMPLETED$/ }, `the requeued probe ${probe}: ${rep.requeue.why}`);
    tt.match(rep.requeue.nodeList ?? '', /^node[234]$/, `it ran on a healthy node (${rep.requeue.nodeList}), not on node1`);
    tt.equal(rep.requeue.batchHost, rep.requeue.nodeList, 'its batch host is that node');
    const j = c.job(probe);
    tt.match(j, { JobState: /^COMPLETED$/, Restarts: /^1$/, NodeList: rep.requeue.nodeList ?? '?' }, 'scontrol show job says the same');
    tt.match(runOf(c, 'node1', probe), { result: /^unhealthy$/, action: /^drained$/ }, "node1's log: drained for the probe");
    tt.match(runOf(c, (rep.requeue.nodeList ?? 'node2') as NodeName, probe), { result: /^healthy$/, exitCode: 0 }, `${rep.requeue.nodeList}'s log: the probe's Prolog passed there`);
    const text = renderDrill(rep);
    tt.match(text, new RegExp(`drill ${marker} on node1: `), 'the text report names the drilled node');
    tt.match(text, new RegExp(`ran on ${rep.requeue.nodeList} \\(BatchHost ${rep.requeue.batchHost}, Restarts=1\\) COMPLETED`), 'and the node the probe ran on');
    tt.equal(rep.recovery.followUp.state, 'COMPLETED', `follow-up job ${rep.recovery.followUp.job} on node1 COMPLETED`);
    const states = fed.map((id) => c.job(id).JobState);
    tt.ok(fed.length >= 2 && states.every((v) => v === 'COMPLETED'), `node3 ran ${fed.length} jobs meanwhile, all COMPLETED (${[...new Set(states)].join(',')})`);
    tt.same(NODES.map(c.state), ['idle', 'idle', 'idle', 'idle'], 'all nodes idle');
    tt.notOk(existsSync(join(c.DIR, 'nodes/node1/gate-run/drill.json')), 'drill file gone');
    tt.comment(text);
  });

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
}
