// End to end: the real gate (dist/cli.js through slurm/prolog.sh) as the Prolog of a real single-node Slurm
// (test/e2e/sandbox), driven by real sbatch/srun jobs, judged only by what Slurm itself reports.
// Runs when CI is set or GDRGATE_E2E=1, as root; see test/e2e/README.md.
import t from 'tap';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { HELD, reEsc, runOrSkip, waitFor } from './_sandbox.js';
import { brokenToolCases } from './_slurm-broken.js';
import { GPU_BDF, startGateSandbox } from './_slurm-gate.js';

// One sandbox for every case, in order: the drain life cycle here, then the broken-tool cases (_slurm-broken.ts),
// whose last one stops slurmctld.
await runOrSkip(t, 'slurm', e2e, 'it must run as root (it starts munged, slurmctld and slurmd)', ' — starts a real Slurm from test/e2e/sandbox; see test/e2e/README.md');

async function e2e(): Promise<void> {
  const ctx = await startGateSandbox(t);
  if (!ctx) return;
  const { node, SHIM, SHIM_CALLED, SHIM_GO, HEALTHY, X8, slurm, state, reason, sinfoR, showNode, jobField, submit, resumeCli, writeConfig, runLine, waitHeld, waitDone, waitIdle, completes, timed } = ctx;

  await timed('1. healthy tree: sbatch -W completes, srun runs, node stays idle', async (tt) => {
    const id = await completes(tt);
    const s = slurm('srun', ['-N1', '/bin/true'], 60_000);
    tt.equal(s.status, 0, 'srun -N1 /bin/true exits 0', { stderr: s.stderr });
    tt.ok((await waitIdle()).ok, 'node idle');
    tt.equal(/ State=(\S+) /.exec(showNode())?.[1], 'IDLE', 'scontrol show node: State=IDLE');
    tt.match(runLine(id), { result: /^healthy$/, exitCode: 0, action: /^none$/ }, 'gate log: healthy run for the job');
    tt.equal(runLine(id)?.startup, 'snapshot', "slurmd's Prolog ran the gate from dist/gate.blob (the wrapper's fast path)");
  });

  await timed('2. GPU trained to x8: node drained with our reason, job requeued held', async (tt) => {
    writeConfig({ root: X8 });
    const id = submit();
    const held = await waitHeld(id);
    tt.ok(held.ok, `job ${id}: squeue %r "${HELD}" (after ${held.ms} ms)`, { got: held.value });
    tt.equal(jobField(id, '%T'), 'PENDING', 'job is PENDING (held)');
    const line = showNode();
    tt.comment(`scontrol show node: ${line}`);
    tt.equal(/ State=(\S+) /.exec(line)?.[1], 'IDLE+DRAIN', 'scontrol show node: State=IDLE+DRAIN');
    const why = reason();
    tt.comment(`sinfo %E: ${why}`);
    tt.equal(why, `gdrgate: pcie-link ${GPU_BDF} Gen5 x8 (want Gen5 x16) job=${id}`, `reason: gdrgate: pcie-link, the link, job=${id}`);
    tt.ok(why.slice(0, 20).startsWith('gdrgate: pcie-link'), 'its first 20 characters already say gdrgate: pcie-link');
    tt.match(/ Reason=(.*)$/.exec(line)?.[1], new RegExp(`^${reEsc(why)} \\[root@\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\]$`), 'scontrol show node carries the same reason');
    const r = sinfoR();
    tt.comment(`sinfo -R: ${r}`);
    tt.match(r, new RegExp(`^gdrgate: pcie-link 0 root {6}\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d ${node}$`), 'sinfo -R (20 characters) shows gdrgate: pcie-link');
    tt.match(runLine(id), { result: /^unhealthy$/, exitCode: 1, action: /^drained$/, node, reason: why, startup: /^snapshot$/ }, 'gate log: JSON summary line for the job (drained from the blob)');
    tt.same(runLine(id)?.summary, { pass: 10, warn: 0, fail: 1, skip: 5, error: 0 }, 'its summary: the one failing link');
    // ours, but still broken: resume re-checks and refuses
    const res = resumeCli();
    tt.equal(res.status, 1, 'gdrgate resume refuses while the link is still x8', { stdout: res.stdout, stderr: res.stderr });
    tt.equal(res.stdout, `${node}: still unhealthy, left drained: pcie-link ${GPU_BDF}: GPU H200 trained x8 of x16\n`, 'and says why');
    tt.equal(reason(), why, 'reason unchanged');
  });

  await timed('2b. GPU trained to x8: srun fails with a Prolog failure', async (tt) => {
    writeConfig({ root: X8 });
    const s = slurm('srun', ['-N1', '/bin/true'], 60_000);
    tt.not(s.status, 0, 'srun exits non-zero');
    // Its first line only: what srun adds after it ("Nodes vm are still not ready", ...) depends on Slurm's timing.
    tt.equal(s.stderr.split('\n')[0], `srun: Prolog failure on node ${node}`, 'srun: Prolog failure', { stderr: s.stderr });
    tt.match(reason(), new RegExp(`^gdrgate: pcie-link ${reEsc(GPU_BDF)} Gen5 x8 \\(want Gen5 x16\\) job=\\d+$`), 'node drained with our reason', { got: reason() });
  });

  await timed('3. drained by hand (rack maintenance) while the tree is broken: reason kept, resume refuses', async (tt) => {
    writeConfig({ root: X8, scontrol: SHIM, scontrolTimeoutMs: 30000, deadlineMs: 40000 });
    rmSync(SHIM_CALLED, { force: true });
    rmSync(SHIM_GO, { force: true });
    const id = submit();
    const called = await waitFor(() => existsSync(SHIM_CALLED), (v) => v, 30_000, 50);
    tt.ok(called.ok, `the gate is running for job ${id} and reading the node state`);
    const d = slurm('scontrol', ['update', `nodename=${node}`, 'state=drain', 'reason=rack maintenance']);
    tt.equal(d.status, 0, 'admin: scontrol update state=drain reason="rack maintenance"', { stderr: d.stderr });
    writeFileSync(SHIM_GO, '');
    const held = await waitHeld(id);
    tt.ok(held.ok, `job ${id}: "${HELD}"`, { got: held.value });
    tt.equal(reason(), 'rack maintenance', 'reason still exactly "rack maintenance"');
    tt.equal(state(), 'drained', 'node still drained');
    const gate = runLine(id);
    tt.match(gate, { result: /^unhealthy$/, exitCode: 1, action: /^kept: node is MIXED\+DRAIN for a reason that is not ours \(rack maintenance\): left as it is$/ }, 'gate log: saw the admin drain and wrote nothing');
    tt.comment(`gate: ${String(gate?.action)}`);
    for (const tree of [X8, HEALTHY]) {
      writeConfig({ root: tree });
      const res = resumeCli();
      tt.not(res.status, 0, `gdrgate resume (${tree === X8 ? 'broken' : 'healthy'} tree) exits non-zero`, { stdout: res.stdout, stderr: res.stderr });
      tt.equal(res.stdout, `${node}: drained for a reason that is not ours (rack maintenance): left drained\n`, 'and says the reason is not ours');
      tt.equal(reason(), 'rack maintenance', 'reason still "rack maintenance"');
      tt.equal(state(), 'drained', 'node still drained');
    }
    tt.comment(`scontrol show node: ${showNode()}`);
  });

  await timed('4. tree fixed, reason ours: gdrgate resume, node idle, released job COMPLETES', async (tt) => {
    writeConfig({ root: X8 });
    const id = submit();
    const held = await waitHeld(id);
    tt.ok(held.ok && reason().startsWith('gdrgate: pcie-link'), `arranged: job ${id} held, node drained by gdrgate`, { reason: reason() });
    writeConfig({ root: HEALTHY });
    const res = resumeCli();
    tt.equal(res.status, 0, 'gdrgate resume exits 0', { stdout: res.stdout, stderr: res.stderr });
    tt.equal(res.stdout, `${node}: resumed (was: gdrgate: pcie-link ${GPU_BDF} Gen5 x8 (want Gen5 x16) job=${id})\n`, 'it says it resumed our drain');
    // A requeued job is not eligible before its EligibleTime (requeue + cred_expire); released earlier, it pends
    // (Reason=BeginTime) until the next periodic scheduler pass, ~30 s later, instead of starting at once.
    const eligible = /(?:^| )EligibleTime=(\S+)/.exec(slurm('scontrol', ['show', 'job', '-o', id]).stdout)?.[1];
    const eligibleMs = eligible ? Date.parse(eligible) : NaN; // slurmctld's local time, like Date.parse without a zone
    tt.ok(Number.isFinite(eligibleMs), `requeued job ${id} has an EligibleTime (${eligible})`);
    if (Number.isFinite(eligibleMs) && eligibleMs + 1000 > Date.now()) await sleep(eligibleMs + 1000 - Date.now());
    const idle = await waitIdle(60_000);
    tt.ok(idle.ok, `node back to plain idle (after ${idle.ms} ms)`, { got: idle.value });
    tt.equal(reason(), 'none', 'reason cleared');
    const rel = slurm('scontrol', ['release', id]);
    tt.equal(rel.status, 0, `scontrol release ${id}`, { stderr: rel.stderr });
    const done = await waitDone(id, 60_000);
    tt.equal(done.value, 'COMPLETED', `job ${id} COMPLETED (after ${done.ms} ms)`);
    tt.equal((await waitFor(state, (s) => s !== 'completing', 60_000)).value, 'idle', 'node idle (once the job stops COMPLETING)');
  });

  await brokenToolCases(ctx);
}
