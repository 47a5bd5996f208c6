// End to end on a real multi-node Slurm 22.05 (test/e2e/cluster: one slurmctld and four slurmd, each in its own
// network, UTS and mount namespace): the gate as every node's Prolog and HealthCheckProgram, judged by what Slurm
// reports. What a single node cannot show: the job the gate stops runs on another node; a two-node batch job and
// PrologFlags; an idle broken node drained by the health check. Runs when CI is set or GDRGATE_E2E=1, as root,
// with ip, unshare and nsenter; see test/e2e/README.md.
import type { Test } from 'tap';
import { existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { trainGpuTo } from '../helpers/h200-link.js';
import { HELD, run, secs, waitFor } from './_sandbox.js';
import { clusterSuite, NODES, PCIE_REASON, pcieReason, runCluster, type Cluster, type NodeName, type NodeOver } from './_cluster.js';

// Cases 0-4 here: the cluster, multi-node jobs, the requeue, PrologFlags, the health check. Cases 5-7 (agent, daemon
// faults, drill): cluster-faults.test.ts.
await runCluster(e2e);

async function e2e(): Promise<void> {
  const { JOBS, HEALTH, SLOW_SCONTROL, tree, clusterCase, runOf, DONE, finish } = clusterSuite();

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
    tt.equal(c.reason('node1'), pcieReason(id), 'node1 drained with our reason, which names the job');
    tt.match(runOf(c, 'node1', id), { result: /^unhealthy$/, action: /^drained$/ }, "node1's log: drained for the job");
    tt.comment(`case 2 submit to completion: ${ms} ms`);
    tt.comment(`scontrol show job ${id}:\n${c.slurm('scontrol', ['show', 'job', id]).stdout.trimEnd()}`);
  });

  await clusterCase('2b: without nohold_on_prolog_fail the job is requeued held', {}, async (tt, c) => {
    trainGpuTo(tree('node1'), 8);
    const id = c.submit(['-w', 'node1', '--wrap', '/bin/true']);
    const held = await waitFor(() => c.slurm('squeue', ['-h', '-j', id, '-o', '%T|%r']).stdout.trim(), (v) => v === `PENDING|${HELD}`, 30_000);
    tt.ok(held.ok, `held: ${held.value} (${held.ms} ms)`);
    tt.equal(c.reason('node1'), pcieReason(id), 'node1 drained with our reason');
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
    tt.equal(drained.value, pcieReason(id), 'node2 drained with our reason');
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
    tt.same(readFileSync(join(c.DIR, 'etc/slurm.conf'), 'utf8').split('\n').filter((l) => l.startsWith('PrologFlags')), ['PrologFlags=Alloc,DeferBatch'], "slurm/slurm.conf.snippet's PrologFlags, once");
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
  await clusterCase('4: HealthCheckProgram drains an idle broken node, resumes it when fixed, leaves a human drain and our reason with a note added', { GATE_HEALTH: HEALTH, CLUSTER_HEALTH_INTERVAL: '2' }, async (tt, c) => {
    const HUMAN = 'rack maintenance by ops';
    tt.equal(c.slurm('scontrol', ['update', 'nodename=node4', 'state=drain', `reason=${HUMAN}`]).status, 0, 'a human drains node4');
    const h0 = performance.now();
    trainGpuTo(tree('node3'), 8);
    const drained = await waitFor(() => c.reason('node3'), (v) => PCIE_REASON.test(v), 60_000);
    tt.ok(drained.ok, `idle node3 drained by the health check in ${secs(h0)}: ${drained.value}`);
    tt.equal(drained.value, pcieReason(), 'our reason, no job: none was involved');
    tt.equal(c.slurm('squeue', ['-h', '-t', 'all', '-o', '%i']).stdout.trim(), '', 'no job ever ran');
    tt.equal(c.state('node3'), 'drained', 'node3 drained');
    const f0 = performance.now();
    trainGpuTo(tree('node3'), 16);
    const back = await waitFor(() => c.state('node3'), (v) => v === 'idle', 60_000);
    tt.ok(back.ok, `node3 resumed itself after the fix in ${secs(f0)} (${back.value})`);
    tt.equal(c.reason('node4'), HUMAN, "node4 keeps the human's reason, word for word");
    tt.equal(c.state('node4'), 'drained', 'node4 still drained');
    tt.same(['node1', 'node2'].map((n) => c.state(n as NodeName)), ['idle', 'idle'], 'healthy nodes untouched');
    // Our reason with an admin's note added is the admin's: mended, node3 is left drained, said in the health run's action.
    trainGpuTo(tree('node3'), 8);
    const again = await waitFor(() => c.reason('node3'), (v) => PCIE_REASON.test(v), 60_000);
    tt.ok(again.ok, `node3 drained again by the health check: ${again.value}`);
    const noted = `${again.value} RMA 5512 keep out`;
    tt.equal(c.slurm('scontrol', ['update', 'nodename=node3', `reason=${noted}`]).status, 0, 'an admin adds a note to the reason');
    const m0 = Date.now();
    trainGpuTo(tree('node3'), 16);
    const left = `left drained: the reason is not the one gdrgate wrote (${again.value}): edited or written by a person; resume it by hand once mended (gdrgate resume)`;
    const judged = await waitFor(() => c.gateLog('node3').filter((l) => l.mode === 'health' && Date.parse(String(l.time)) > m0 && l.result === 'healthy').map((l) => l.action), (v) => v.length > 0, 60_000);
    tt.same(judged.value.slice(0, 1), [left], 'the first healthy health check after the mend leaves the noted drain');
    tt.equal(c.reason('node3'), noted, "node3 keeps the admin's reason, word for word");
    tt.equal(c.state('node3'), 'drained', 'node3 still drained');
  });

  finish();
}
