// End to end: the real gate (dist/cli.js through slurm/prolog.sh) as the Prolog of a real single-node Slurm
// (test/e2e/sandbox), driven by real sbatch/srun jobs, judged only by what Slurm itself reports.
// Runs when CI is set or GDRGATE_E2E=1, as root; see test/e2e/README.md.
import t, { type Test } from 'tap';
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { H200_GPU_DIR, linkStatusWidth, trainGpuTo } from '../helpers/h200-link.js';
import { freePortPair, gateConf, HELD, installWrapper, REPO, run, runOrSkip, sandbox, secs, slurmClients, snapshotBuild, waitFor, type Ran } from './_sandbox.js';

/** A run's duration as the gate measured and printed it on its summary line (`... exit=N 1234ms ...`). */
const ownMs = (stdout: string): number => Number(/ exit=\d+ (\d+)ms/.exec(stdout)?.[1] ?? NaN);

const BUILT_CLI = join(REPO, 'dist/cli.js');
const EXAMPLE = join(REPO, 'examples/h200-vm');
const GPU_BDF = '0000:00:06.0';

// ---------------------------------------------------------------------------------------------- processes

/** PIDs of live processes whose argv is exactly `argv` (a killed, unreaped child has an empty cmdline). */
function processesWithArgv(argv: readonly string[]): number[] {
  const want = argv.join('\0') + '\0';
  const found: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (readFileSync(`/proc/${d}/cmdline`, 'latin1') === want) found.push(Number(d));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

// ---------------------------------------------------------------------------------------------- fixture trees

function copyTree(dst: string): string {
  cpSync(EXAMPLE, dst, { recursive: true, verbatimSymlinks: true });
  return dst;
}

/** RLIMIT_MEMLOCK of a process as the baseline writes it: the lower of soft and hard, bytes or "unlimited". */
function memlockOf(pid: number): number | 'unlimited' {
  const line = readFileSync(`/proc/${pid}/limits`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('Max locked memory'));
  const m = line ? /^Max locked memory\s+(\S+)\s+(\S+)/.exec(line) : null;
  if (!m) throw new Error(`no "Max locked memory" in /proc/${pid}/limits`);
  const vals = [m[1]!, m[2]!].filter((v) => v !== 'unlimited').map(Number);
  return vals.length ? Math.min(...vals) : 'unlimited';
}

// ---------------------------------------------------------------------------------------------- the run

await runOrSkip(t, 'slurm', e2e, 'it must run as root (it starts munged, slurmctld and slurmd)', ' — starts a real Slurm from test/e2e/sandbox; see test/e2e/README.md');

async function e2e(): Promise<void> {
  t.setTimeout(360_000);
  if (!existsSync(BUILT_CLI)) {
    t.fail(`${BUILT_CLI} is missing: build first (npm run build)`);
    return;
  }

  const port = await freePortPair();
  const sb = sandbox(t, { prefix: '/tmp/gdrgate-e2e-', port });
  const { WORK, DIR, CONF, CONFIG, BASELINE, LOG } = sb; // DIR: the sandbox: etc/, log/, state/, run/ ...
  const BAD_BASELINE = join(WORK, 'baseline-malformed.json');
  const WRAPPER = join(WORK, 'gate-prolog.sh');
  const SHIM = join(WORK, 'scontrol-handshake.sh');
  const SHIM_CALLED = join(WORK, 'shim.called');
  const SHIM_GO = join(WORK, 'shim.go');
  const HANG = join(WORK, 'scontrol-hangs.sh');
  const HANG_RAN = join(WORK, 'hang.ran'); // the hung scontrol writes its shell's PID here: proof that it ran
  const SLEEP_ARGV = ['/bin/sleep', `600.${process.pid}`]; // unique per run, to find leftovers
  // The gate under test: a snapshot of the build, so a rebuild in the checkout cannot hand slurmd a half-written dist.
  const CLI = snapshotBuild(WORK);
  const HEALTHY = copyTree(join(WORK, 'tree-healthy'));
  const X8 = copyTree(join(WORK, 'tree-x8'));
  trainGpuTo(X8, 8);
  mkdirSync(join(WORK, 'jobs'));

  // The wrapper Slurm runs: slurm/prolog.sh unchanged, with its .conf beside it.
  installWrapper('prolog', WRAPPER, gateConf(CLI, CONFIG));
  // A hung scontrol: a shell whose child sleeps (the grandchild of the gate holds its pipes too).
  writeFileSync(HANG, `#!/bin/sh\n# e2e stand-in for a hung scontrol\necho $$ > ${HANG_RAN}\n${SLEEP_ARGV.join(' ')}\n`, { mode: 0o755 });
  // Case 3: the real scontrol, but "show" first tells the test and waits (at most 20 s, however slowly the loop runs)
  // for its go, so that the admin's drain lands while the gate is running, without a race. A go that came later than
  // that (the test's scontrol update slow on a loaded machine) would let the gate read the node before the drain.
  writeFileSync(
    SHIM,
    [
      '#!/bin/sh',
      '# e2e shim: pause "scontrol show" until the test has drained the node by hand, then the real scontrol',
      'if [ "$1" = show ]; then',
      `  : > ${SHIM_CALLED}`,
      `  end=$(( $(/bin/date +%s) + 20 ))`,
      `  while [ ! -e ${SHIM_GO} ] && [ $(/bin/date +%s) -lt $end ]; do /bin/sleep 0.1; done`,
      'fi',
      'exec /usr/bin/scontrol "$@"',
      '',
    ].join('\n'),
    { mode: 0o755 },
  );
  writeFileSync(BAD_BASELINE, '{ "version": 1, "classes": [ { "name": "sandbox", \n');

  // ------------------------------------------------------------------ start Slurm
  const t1 = performance.now();
  const started = sb.start({ SANDBOX_CRED_EXPIRE: '5', SANDBOX_PROLOG_FLAGS: 'Alloc', GATE_PROLOG: WRAPPER });
  if (started.status !== 0) {
    t.fail('start.sh brought the sandbox up', { status: started.status, timedOut: started.timedOut, stderr: started.stderr.slice(-4000) });
    return;
  }
  const node = started.node;
  t.comment(`sandbox up in ${secs(t1)}: node ${node}, port ${port}, dir ${DIR}`);

  const { env: clientEnv, slurm, state, reason, nodeFlags, waitIdle } = slurmClients(CONF, node, join(WORK, 'jobs'));
  const sinfoR = (): string => slurm('sinfo', ['-R', '-h', '-n', node]).stdout.trimEnd();
  const showNode = (): string => slurm('scontrol', ['show', 'node', '-o', node]).stdout.trim();
  const jobField = (id: string, f: string): string => slurm('squeue', ['-h', '-t', 'all', '-j', id, '-o', f]).stdout.trim();
  const submit = (): string => {
    const r = slurm('sbatch', ['--parsable', '-o', '/dev/null', '-J', 'e2e', '--wrap', 'true']);
    if (r.status !== 0) throw new Error(`sbatch failed (${r.status}): ${r.stderr}`);
    return r.stdout.trim().split(';')[0]!;
  };
  const gdrgate = (args: readonly string[]): Ran => run(process.execPath, [CLI, ...args], { env: clientEnv, timeoutMs: 30_000 });
  const resumeCli = (): Ran => gdrgate(['resume', '--config', CONFIG, '--node', node]);

  /** The gate reads its config on every run: rewrite it whole (rename) so a running prolog never sees half a file. */
  const writeConfig = (over: Record<string, unknown> = {}): void => {
    const cfg = { baseline: BASELINE, root: HEALTHY, scontrol: '/usr/bin/scontrol', scontrolTimeoutMs: 5000, deadlineMs: 10000, logFile: LOG, stateDir: join(WORK, 'run'), ...over };
    writeFileSync(`${CONFIG}.tmp`, JSON.stringify(cfg, null, 2) + '\n');
    renameSync(`${CONFIG}.tmp`, CONFIG);
  };
  const logLines = (): Record<string, unknown>[] =>
    (existsSync(LOG) ? readFileSync(LOG, 'utf8') : '')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => {
        try {
          return JSON.parse(l) as Record<string, unknown>;
        } catch {
          return { unparsable: l };
        }
      });
  const runLine = (job: string): Record<string, unknown> | undefined => logLines().find((l) => l.msg === 'gdrgate run' && l.job === job);
  /** Held and done with its launch: squeue shows the reason while the job is still COMPLETING, so wait for PENDING too. */
  const waitHeld = (id: string, timeoutMs = 30_000) => waitFor(() => jobField(id, '%T|%r'), (v) => v === `PENDING|${HELD}`, timeoutMs);
  const waitDone = (id: string, timeoutMs = 30_000) => waitFor(() => jobField(id, '%T'), (v) => /^(COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY)$/.test(v), timeoutMs);

  /** Back to a clean start between cases: no jobs, healthy tree, node undrained and plain idle. */
  const reset = async (): Promise<void> => {
    writeConfig();
    const ids = slurm('squeue', ['-h', '-o', '%i']).stdout.split(/\s+/).filter(Boolean);
    if (ids.length) slurm('scancel', ids);
    // Resuming while a killed job is still completing leaves sinfo saying "mixed" for ~30 s: let it finish first.
    const busy = (): string => {
      const jobs = slurm('squeue', ['-h', '-o', '%i %T']).stdout.trim().replace(/\n/g, ', ');
      const flags = nodeFlags();
      return jobs !== '' || flags.includes('COMPLETING') ? `jobs: ${jobs || 'none'}; node ${flags}` : '';
    };
    const quiet = await waitFor(busy, (v) => v === '', 30_000);
    if (!quiet.ok) throw new Error(`jobs or node still busy after scancel: ${quiet.value}`);
    if (/^(drain|down|fail)/.test(state())) slurm('scontrol', ['update', `nodename=${node}`, 'state=resume']);
    const idle = await waitIdle();
    if (!idle.ok) {
      const jobs = slurm('squeue', ['-h', '-t', 'all', '-o', '%i %T %r']).stdout.trim().replace(/\n/g, '; ');
      const cpus = slurm('sinfo', ['-h', '-N', '-n', node, '-o', '%T %C']).stdout.trim();
      throw new Error(`node not idle after reset: ${idle.value} (A/I/O/T cpus: ${cpus}); jobs: ${jobs}; ${showNode()}`);
    }
  };

  // ------------------------------------------------------------------ baseline from the healthy tree
  // memlockMin: what slurmd really has here (root cannot raise it past 8 MiB on some CI machines). With `root` set to
  // a tree, the gate reads the limits captured in the tree (unlimited), so this only has to be a value a real
  // node in this sandbox would meet.
  const slurmdPid = Number(readFileSync(join(DIR, 'run/slurmd.pid'), 'utf8').trim());
  const memlock = memlockOf(slurmdPid);
  t.comment(`slurmd (pid ${slurmdPid}) RLIMIT_MEMLOCK: ${memlock}; baseline memlockMin set to it`);
  const cap = gdrgate(['baseline', 'capture', '--root', HEALTHY, '--class', 'sandbox', '--match', '*', '--platform', 'virtualized']);
  t.equal(cap.status, 0, 'baseline capture from the healthy tree', { stderr: cap.stderr });
  const baseline = JSON.parse(cap.stdout) as { classes: { memlockMin: unknown; devices: { bdf: string; link: { width: number } }[] }[] };
  baseline.classes[0]!.memlockMin = memlock;
  writeFileSync(BASELINE, JSON.stringify(baseline, null, 2) + '\n');
  t.equal(baseline.classes[0]!.devices.find((d) => d.bdf === GPU_BDF)?.link.width, 16, 'baseline wants the GPU at x16');
  t.equal(linkStatusWidth(HEALTHY), 16, 'healthy tree: Link Status says x16');
  t.equal(linkStatusWidth(X8), 8, 'x8 tree: Link Status says x8');
  t.equal(readFileSync(join(X8, H200_GPU_DIR, 'current_link_width'), 'utf8'), '8\n', 'x8 tree: sysfs says x8');
  writeConfig();
  t.equal(state(), 'idle', 'sandbox node starts idle');

  // ------------------------------------------------------------------ cases
  const timed = async (name: string, fn: (t: Test) => Promise<void>): Promise<void> => {
    await t.test(name, async (tt) => {
      const c0 = performance.now();
      try {
        await reset();
        await fn(tt);
      } finally {
        tt.comment(`${name}: ${secs(c0)}`);
      }
    });
  };

  await timed('1. healthy tree: sbatch -W completes, srun runs, node stays idle', async (tt) => {
    const r = slurm('sbatch', ['-W', '--parsable', '-o', '/dev/null', '-J', 'e2e', '--wrap', 'true'], 60_000);
    tt.equal(r.status, 0, 'sbatch -W exits 0', { stderr: r.stderr });
    const id = r.stdout.trim().split(';')[0]!;
    tt.equal((await waitDone(id)).value, 'COMPLETED', `job ${id} COMPLETED`);
    tt.notMatch(state(), /drain|down/, 'node not drained');
    tt.equal(reason(), 'none', 'no reason');
    const s = slurm('srun', ['-N1', '/bin/true'], 60_000);
    tt.equal(s.status, 0, 'srun -N1 /bin/true exits 0', { stderr: s.stderr });
    tt.ok((await waitIdle()).ok, 'node idle');
    tt.match(showNode(), / State=IDLE /, 'scontrol show node: State=IDLE');
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
    tt.match(line, / State=IDLE\+DRAIN /, 'scontrol show node: State=IDLE+DRAIN');
    const why = reason();
    tt.comment(`sinfo %E: ${why}`);
    tt.ok(why.startsWith('gdrgate: pcie-link'), 'reason starts with "gdrgate: pcie-link"', { got: why });
    tt.ok(why.includes(GPU_BDF), `reason names ${GPU_BDF}`, { got: why });
    tt.ok(why.includes(`job=${id}`), `reason names job=${id}`, { got: why });
    tt.ok(why.slice(0, 20).startsWith('gdrgate: pcie-link'), 'its first 20 characters already say gdrgate: pcie-link');
    tt.ok(line.includes(`Reason=${why} [root@`), 'scontrol show node carries the same reason');
    const r = sinfoR();
    tt.comment(`sinfo -R: ${r}`);
    tt.match(r, /^gdrgate: pcie-link\s/, 'sinfo -R (20 characters) shows gdrgate: pcie-link');
    tt.match(runLine(id), { result: /^unhealthy$/, exitCode: 1, action: /^drained$/, node, reason: why, summary: {}, startup: /^snapshot$/ }, 'gate log: JSON summary line for the job (drained from the blob)');
    // ours, but still broken: resume re-checks and refuses
    const res = resumeCli();
    tt.equal(res.status, 1, 'gdrgate resume refuses while the link is still x8', { stdout: res.stdout, stderr: res.stderr });
    tt.match(res.stdout, /still unhealthy/, 'and says why');
    tt.equal(reason(), why, 'reason unchanged');
  });

  await timed('2b. GPU trained to x8: srun fails with a Prolog failure', async (tt) => {
    writeConfig({ root: X8 });
    const s = slurm('srun', ['-N1', '/bin/true'], 60_000);
    tt.not(s.status, 0, 'srun exits non-zero');
    tt.match(s.stderr, /Prolog failure/i, 'srun: Prolog failure', { stderr: s.stderr });
    tt.match(reason(), /^gdrgate: pcie-link .*job=\d+$/, 'node drained with our reason', { got: reason() });
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
    tt.match(state(), /^drain/, 'node still drained');
    const gate = runLine(id);
    tt.match(gate, { result: /^unhealthy$/, exitCode: 1, action: /^kept: node is \S*DRAIN\S* for a reason that is not ours/ }, 'gate log: saw the admin drain and wrote nothing');
    tt.comment(`gate: ${String(gate?.action)}`);
    for (const tree of [X8, HEALTHY]) {
      writeConfig({ root: tree });
      const res = resumeCli();
      tt.not(res.status, 0, `gdrgate resume (${tree === X8 ? 'broken' : 'healthy'} tree) exits non-zero`, { stdout: res.stdout, stderr: res.stderr });
      tt.match(res.stdout, /not ours/, 'and says the reason is not ours');
      tt.equal(reason(), 'rack maintenance', 'reason still "rack maintenance"');
      tt.match(state(), /^drain/, 'node still drained');
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
    tt.match(res.stdout, /resumed \(was: gdrgate: pcie-link/, 'it says it resumed our drain');
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
    tt.equal(state(), 'idle', 'node idle');
  });

  await timed('5. malformed baseline: fail-open by default, drain with onConfigError closed', async (tt) => {
    writeConfig({ baseline: BAD_BASELINE });
    const r = slurm('sbatch', ['-W', '--parsable', '-o', '/dev/null', '-J', 'e2e', '--wrap', 'true'], 60_000);
    tt.equal(r.status, 0, 'default policy: sbatch -W completes', { stderr: r.stderr });
    const id = r.stdout.trim().split(';')[0]!;
    tt.equal((await waitDone(id)).value, 'COMPLETED', `job ${id} COMPLETED`);
    tt.notMatch(state(), /drain|down/, 'node not drained');
    tt.equal(reason(), 'none', 'no reason');
    const errs = logLines().filter((l) => l.job === id && typeof l.level === 'number' && l.level >= 50);
    tt.ok(errs.length > 0, 'gate log: an error line for the job', { lines: logLines().filter((l) => l.job === id) });
    tt.match(runLine(id), { result: /^config-error$/, failedOpen: true, exitCode: 0 }, 'gate log: config-error, failed open');

    writeConfig({ baseline: BAD_BASELINE, onConfigError: 'closed' });
    const id2 = submit();
    const held = await waitHeld(id2);
    tt.ok(held.ok, `onConfigError closed: job ${id2} "${HELD}"`, { got: held.value });
    const why = reason();
    tt.comment(`sinfo %E: ${why}`);
    tt.ok(why.startsWith('gdrgate: config'), 'reason starts with "gdrgate: config"', { got: why });
    tt.ok(why.endsWith(`job=${id2}`), `reason ends with job=${id2}`);
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
    tt.ok(ownMs(direct.stdout) < deadlineMs + 2000, `exits within deadline + 2 s by its own clock (${ownMs(direct.stdout)} ms), as the log line below`);
    tt.equal(direct.status, 1, 'exit 1 (unhealthy)', { stderr: direct.stderr });
    tt.match(direct.stdout, /action=kept: node state unknown/, 'wrote nothing: node state unknown');
    tt.ok(existsSync(HANG_RAN), 'the hung scontrol did run');
    tt.same(processesWithArgv(SLEEP_ARGV), [], 'no sleep left running');
    tt.equal(reason(), 'none', 'node not drained by the direct run');
    rmSync(HANG_RAN, { force: true });

    const t6 = performance.now();
    const id = submit();
    const held = await waitHeld(id, 30_000);
    tt.ok(held.ok, `through Slurm: job ${id} attempt returned, "${HELD}" after ${held.ms} ms`, { got: held.value });
    const gate = runLine(id);
    tt.match(gate, { exitCode: 1, action: /^kept: node state unknown/ }, 'gate log: no state, nothing written');
    tt.ok(typeof gate?.durationMs === 'number' && gate.durationMs < deadlineMs + 2000, `gate run took ${String(gate?.durationMs)} ms`);
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
    const agent = spawn(process.execPath, ['--max-semi-space-size=2', CLI, 'agent', '--config', CONFIG, '--dir', dir], { stdio: 'ignore' });
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
      tt.match(reason(), /^gdrgate: pcie-link .* job=\d+$/, 'drained with our reason');
      tt.match(runLine(bad), { result: /^unhealthy$/, action: /^drained$/, startup: /^snapshot$/, agent: /^fallback: unhealthy: 1 failing finding\(s\)$/ }, 'the agent handed it back; the gate in the Prolog judged and drained');
      tt.equal(logLines().filter((l) => l.job === bad && l.startup === 'agent').length, 0, 'the agent logged no run for it');
    } finally {
      installWrapper('prolog', WRAPPER, gateConf(CLI, CONFIG));
      agent.kill('SIGTERM');
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
    tt.ok(ownMs(direct.stdout) < deadlineMs + 2000, `exits within deadline + 2 s by its own clock (${ownMs(direct.stdout)} ms), as the log line below`);
    tt.equal(direct.status, 1, 'exit 1: the node is unhealthy, whatever slurmctld says');
    tt.match(direct.stdout, /action=kept: node state unknown/, 'no reason written without a state');
    const lines = unknown().slice(before);
    tt.equal(lines.length, 1, 'logged once: cannot read node state');
    tt.comment(`log: ${lines[0] ?? ''}`);
    tt.same(processesWithArgv(['/usr/bin/scontrol', 'show', 'node', '-o', node]), [], 'no scontrol left running');
  });
}
