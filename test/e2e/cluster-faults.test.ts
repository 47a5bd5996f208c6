// End to end on the real 4-node Slurm 22.05 of test/e2e/cluster, when things break: the agent on every node answering
// 200 jobs' Prologs, slurmctld, a slurmd and munged killed while Prologs run (the gate never drains a healthy node),
// and a drill on one node while another runs jobs. Runs when CI is set or GDRGATE_E2E=1, as root, with ip, unshare
// and nsenter; see test/e2e/README.md. Cases 0-4: cluster.test.ts.
import type { Test } from 'tap';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { trainGpuTo } from '../helpers/h200-link.js';
import { renderDrill, type DrillReport } from '../../src/drill/report.js';
import { validate } from '../helpers/schema.js';
import { cleanEnv, gateConf, HELD, run, secs, waitFor, type Ran } from './_sandbox.js';
import { CLUSTER, clusterSuite, DEADLINE_MS, NODES, runAsync, runCluster, type Cluster, type NodeName } from './_cluster.js';

await runCluster(e2e);

async function e2e(): Promise<void> {
  const { WORK, CLI, JOBS, PROLOG, tree, clusterCase, runOf, DONE, finish } = clusterSuite();

  // ------------------------------------------------------------------ 5. the agent on every node, 200 jobs
  await clusterCase('5: gdrgate agent on every node answers the Prologs of 200 jobs, all completed', {}, async (tt, c) => {
    const JOBS_N = 200;
    // The Prolog asks its node's agent (AGENT= in the wrapper's .conf), under DIR/node: each node's own directory.
    writeFileSync(PROLOG.replace(/\.sh$/, '.conf'), `${gateConf(CLI, join(c.DIR, 'node/gdrgate.json'))}AGENT=${join(c.DIR, 'node/agent')}\n`, { mode: 0o644 });
    // Each agent in its node's namespaces (its slurmd's), as examples/systemd/gdrgate-agent.service starts it.
    const agents = NODES.map((n) => {
      mkdirSync(join(c.DIR, 'nodes', n, 'agent'), { mode: 0o700 });
      const pid = readFileSync(join(c.DIR, 'nodes', n, 'run/slurmd.pid'), 'utf8').trim();
      const args = ['-t', pid, '-n', '-m', '-u', '--', process.execPath, '--max-semi-space-size=16', '--expose-gc', CLI, 'agent', '--config', join(c.DIR, 'node/gdrgate.json'), '--dir', join(c.DIR, 'node/agent')];
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
    // The scheduler may still show a node PLANNED (held for a job it planned) a moment after the queue empties.
    const settled = await waitFor(() => NODES.map(c.state).join(' '), (v) => v === 'idle idle idle idle', 30_000, 250);
    tt.same(settled.value.split(' '), ['idle', 'idle', 'idle', 'idle'], `all nodes idle, none drained (${settled.ms} ms after the queue emptied)`);
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


  finish();
}
