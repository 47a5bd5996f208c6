// The single-node sandbox's cases where a tool breaks (not a test file: test/e2e/slurm.test.ts runs them, in order,
// after its own): a malformed baseline (fail-open, then closed), a hung scontrol, the agent handing a failing node
// back, the program missing (Node's own exit 1), and slurmctld killed (the last case: nothing runs after it).
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { gateConf, HELD, installWrapper, reEsc, run, secs, waitFor } from './_sandbox.js';
import { GPU_BDF, ownMs, processesWithArgv, type GateSandbox } from './_slurm-gate.js';

/** The last two lines of the Prolog's stdout for job `job` on the x8 tree when the node state cannot be read (its own duration masked). */
const stateUnknown = (node: string, job: string): [string, RegExp] => [
  'result: unhealthy (exit 1) — 1 fail, 0 error, 0 warn, 10 pass, 5 skip',
  new RegExp(`^gdrgate prolog node=${node} job=${job} result=unhealthy exit=1 \\d+ms reason="gdrgate: pcie-link ${reEsc(GPU_BDF)} Gen5 x8 \\(want Gen5 x16\\) job=${job}" action=kept: node state unknown: not writing a reason$`),
];
const lastTwo = (stdout: string): string[] => stdout.trimEnd().split('\n').slice(-2);

export async function brokenToolCases(ctx: GateSandbox): Promise<void> {
  const { node, WORK, DIR, CONF, CONFIG, LOG, BAD_BASELINE, WRAPPER, HANG, HANG_RAN, SLEEP_ARGV, CLI, X8, slurm, state, reason, sinfoR, submit, writeConfig, logLines, runLine, waitHeld, waitDone, completes, timed } = ctx;

  await timed('5. malformed baseline: fail-open by default, drain with onConfigError closed', async (tt) => {
    writeConfig({ baseline: BAD_BASELINE });
    const id = await completes(tt); // the default policy
    const errs = logLines().filter((l) => l.job === id && typeof l.level === 'number' && l.level >= 50);
    tt.ok(errs.length > 0, 'gate log: an error line for the job', { lines: logLines().filter((l) => l.job === id) });
    tt.match(runLine(id), { result: /^config-error$/, failedOpen: true, exitCode: 0 }, 'gate log: config-error, failed open');

    writeConfig({ baseline: BAD_BASELINE, onConfigError: 'closed' });
    const id2 = submit();
    const held = await waitHeld(id2);
    tt.ok(held.ok, `onConfigError closed: job ${id2} "${HELD}"`, { got: held.value });
    const why = reason();
    tt.comment(`sinfo %E: ${why}`);
    tt.equal(why, `gdrgate: config ${BAD_BASELINE}: baseline is not valid JSON: Expected double-quoted property name in JSON at position 51 (line 2 column 1) job=${id2}`, `reason: gdrgate: config, the file, why, job=${id2}`);
    tt.ok(Buffer.byteLength(why) <= 255, 'reason at most 255 bytes');
    tt.comment(`sinfo -R: ${sinfoR()}`);
  });

  await timed('6. scontrol hangs: the prolog ends within its deadline, leaves no sleep, and the node is not wedged', async (tt) => {
    const deadlineMs = 3000;
    writeConfig({ root: X8, scontrol: HANG, deadlineMs, scontrolTimeoutMs: 1000 });
    // The prolog by itself, as slurmd runs it: no PATH, cwd in slurmd's log dir, stdin /dev/null.
    const env = { SLURMD_NODENAME: node, SLURM_JOB_ID: '424242', SLURM_JOB_USER: 'root', SLURM_SCRIPT_CONTEXT: 'prolog_slurmd', SLURM_CONF: CONF };
    rmSync(HANG_RAN, { force: true });
    const direct = run('/usr/bin/env', ['-i', ...Object.entries(env).map(([k, v]) => `${k}=${v}`), WRAPPER], { cwd: join(DIR, 'log'), timeoutMs: 30_000 });
    tt.comment(`prolog alone: exit ${direct.status} in ${direct.ms} ms: ${direct.stdout.trim().split('\n').pop()}`);
    // Compared with a bound: the gate's own clock (its summary line), not this wall clock, which holds node start-up
    // on a loaded machine. The hung scontrol sleeps 600 s; a run not cut would also hit the 30 s spawn timeout.
    tt.notOk(direct.timedOut, `ended by itself, the 600 s hang cut (${direct.ms} ms wall clock, start-up included)`);
    // Against the hang being cut (scontrol sleeps 600 s), not deadline + grace: on a loaded two-core machine the work
    // after scontrol (report, log) ran the gate's own figure to 5.7 s for this deadline (test/hardening/faults.test.ts).
    tt.ok(ownMs(direct.stdout) < 30_000, `ended by its own clock in ${ownMs(direct.stdout)} ms: the 600 s hang cut, as the log line below`);
    tt.equal(direct.status, 1, 'exit 1 (unhealthy)', { stderr: direct.stderr });
    const [result, summary] = stateUnknown(node, '424242');
    tt.equal(lastTwo(direct.stdout)[0], result, 'the result line: the one failing link');
    tt.match(lastTwo(direct.stdout)[1], summary, 'wrote nothing: node state unknown');
    tt.ok(existsSync(HANG_RAN), 'the hung scontrol did run');
    tt.same(processesWithArgv(SLEEP_ARGV), [], 'no sleep left running');
    tt.equal(reason(), 'none', 'node not drained by the direct run');
    rmSync(HANG_RAN, { force: true });

    const t6 = performance.now();
    const id = submit();
    const held = await waitHeld(id, 30_000);
    tt.ok(held.ok, `through Slurm: job ${id} attempt returned, "${HELD}" after ${held.ms} ms`, { got: held.value });
    const gate = runLine(id);
    tt.match(gate, { exitCode: 1, action: /^kept: node state unknown: not writing a reason$/ }, 'gate log: no state, nothing written');
    tt.ok(typeof gate?.durationMs === 'number' && gate.durationMs < 30_000, `gate run took ${String(gate?.durationMs)} ms: the hang cut`);
    tt.equal(reason(), 'Prolog error', 'Slurm drained with its own "Prolog error" (gdrgate could not read the state)');
    tt.ok(existsSync(HANG_RAN), 'the hung scontrol did run under slurmd');
    tt.same(processesWithArgv(SLEEP_ARGV), [], 'no sleep left running');
    const answered = slurm('sinfo', ['-h', '-N', '-n', node, '-o', '%T']); // the clients' 20 s bound: a wedged slurmctld never answers
    tt.ok(answered.status === 0 && !answered.timedOut, `slurmctld still answers: ${answered.stdout.trim()} (${secs(t6)} after submit)`);
  });

  await timed('6b. gdrgate agent: answers slurmd\'s Prolog on a healthy node; on x8 it hands back and the Prolog drains', async (tt) => {
    writeConfig();
    // As the service unit runs it: root, its own 0700 directory; the wrapper's .conf names that directory.
    const dir = join(WORK, 'agent');
    const agent = spawn(process.execPath, ['--max-semi-space-size=16', '--expose-gc', CLI, 'agent', '--config', CONFIG, '--dir', dir], { stdio: 'ignore' });
    tt.teardown(() => void agent.kill('SIGKILL'));
    const up = await waitFor(() => (existsSync(join(dir, 'agent.pid')) ? readFileSync(join(dir, 'agent.pid'), 'utf8').trim() : ''), (v) => v === String(agent.pid), 60_000);
    tt.ok(up.ok, 'the agent is up (pid file written)');
    installWrapper('prolog', WRAPPER, gateConf(CLI, CONFIG) + `AGENT=${dir}\nAGENT_TIMEOUT=30\n`);
    try {
      const r = slurm('sbatch', ['-W', '--parsable', '-o', '/dev/null', '-J', 'e2e', '--wrap', 'true'], 60_000);
      tt.equal(r.status, 0, 'sbatch -W exits 0', { stderr: r.stderr });
      const id = r.stdout.trim().split(';')[0]!;
      tt.equal((await waitDone(id)).value, 'COMPLETED', `job ${id} COMPLETED`);
      tt.match(runLine(id), { result: /^healthy$/, exitCode: 0, startup: /^agent$/, pid: agent.pid }, "the agent answered: the job id came from the Prolog's own environment");
      tt.type(runLine(id)?.client, 'number', "the Prolog's pid is on the line");

      writeConfig({ root: X8 });
      const bad = submit();
      tt.ok((await waitHeld(bad)).ok, `job ${bad} requeued held`);
      tt.equal(reason(), `gdrgate: pcie-link ${GPU_BDF} Gen5 x8 (want Gen5 x16) job=${bad}`, 'drained with our reason');
      tt.match(runLine(bad), { result: /^unhealthy$/, action: /^drained$/, startup: /^snapshot$/, agent: /^fallback: unhealthy: 1 failing finding\(s\)$/ }, 'the agent handed it back; the gate in the Prolog judged and drained');
      tt.equal(logLines().filter((l) => l.job === bad && l.startup === 'agent').length, 0, 'the agent logged no run for it');
    } finally {
      installWrapper('prolog', WRAPPER, gateConf(CLI, CONFIG));
      agent.kill('SIGTERM');
    }
  });

  await timed("6c. the program missing (Node's own exit 1, before any gdrgate code): the Prolog fails open, no drain", async (tt) => {
    writeConfig();
    // A wrong CLI= (a failed upgrade, a typo in the .conf): Node exits 1 with MODULE_NOT_FOUND, which gdrgate never
    // wrote into the wrapper's verdict pipe. Before the pipe, that 1 went to slurmd, which drained with "Prolog error".
    installWrapper('prolog', WRAPPER, gateConf(join(WORK, 'missing/gdrgate.cjs'), CONFIG) + 'AGENT=\n');
    try {
      const id = await completes(tt);
      tt.equal(runLine(id), undefined, 'the gate never ran: no run line for the job');
    } finally {
      installWrapper('prolog', WRAPPER, gateConf(CLI, CONFIG));
    }
  });

  await timed('7. slurmctld down: the real scontrol cannot answer; the prolog ends within its deadline and writes nothing', async (tt) => {
    const deadlineMs = 3000;
    writeConfig({ root: X8, scontrol: '/usr/bin/scontrol', deadlineMs, scontrolTimeoutMs: 1500 });
    const unknown = () => readFileSync(LOG, 'utf8').split('\n').filter((l) => l.includes('cannot read node state'));
    const before = unknown().length;
    const ctld = Number(readFileSync(join(DIR, 'run/slurmctld.pid'), 'utf8').trim());
    process.kill(ctld, 'SIGKILL'); // the sandbox is stopped at teardown; nothing runs after this case
    const env = { SLURMD_NODENAME: node, SLURM_JOB_ID: '434343', SLURM_SCRIPT_CONTEXT: 'prolog_slurmd', SLURM_CONF: CONF };
    const direct = run('/usr/bin/env', ['-i', ...Object.entries(env).map(([k, v]) => `${k}=${v}`), WRAPPER], { cwd: join(DIR, 'log'), timeoutMs: 30_000 });
    tt.comment(`prolog with slurmctld down: exit ${direct.status} in ${direct.ms} ms: ${direct.stdout.trim().split('\n').pop()}`);
    // The gate's own clock (its summary line), not this wall clock (node start-up on a loaded machine included).
    tt.notOk(direct.timedOut, `ended by itself inside the 30 s spawn timeout (${direct.ms} ms wall clock)`);
    // Against the hang being cut (scontrol sleeps 600 s), not deadline + grace: on a loaded two-core machine the work
    // after scontrol (report, log) ran the gate's own figure to 5.7 s for this deadline (test/hardening/faults.test.ts).
    tt.ok(ownMs(direct.stdout) < 30_000, `ended by its own clock in ${ownMs(direct.stdout)} ms: the 600 s hang cut, as the log line below`);
    tt.equal(direct.status, 1, 'exit 1: the node is unhealthy, whatever slurmctld says');
    const [result, summary] = stateUnknown(node, '434343');
    tt.equal(lastTwo(direct.stdout)[0], result, 'the result line: the one failing link');
    tt.match(lastTwo(direct.stdout)[1], summary, 'no reason written without a state');
    const lines = unknown().slice(before);
    tt.equal(lines.length, 1, 'logged once: cannot read node state');
    tt.comment(`log: ${lines[0] ?? ''}`);
    tt.same(processesWithArgv(['/usr/bin/scontrol', 'show', 'node', '-o', node]), [], 'no scontrol left running');
  });
}
