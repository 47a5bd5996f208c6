// The single-node Slurm sandbox that test/e2e/slurm.test.ts drives (not a test): the real gate (a snapshot of
// dist/cli.js through slurm/prolog.sh) as slurmd's Prolog, a healthy and an x8 copy of the H200 capture, stand-ins
// for a hung and a pausing scontrol, the baseline captured from the healthy tree, and the clients the cases use.
import type { Test } from 'tap';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { H200_GPU_DIR, linkStatusWidth, trainGpuTo } from '../helpers/h200-link.js';
import { freePortPair, gateConf, HELD, installWrapper, REPO, run, sandbox, secs, slurmClients, snapshotBuild, waitFor, type Ran } from './_sandbox.js';

/** A run's duration as the gate measured and printed it on its summary line (`... exit=N 1234ms ...`). */
export const ownMs = (stdout: string): number => Number(/ exit=\d+ (\d+)ms/.exec(stdout)?.[1] ?? NaN);

const BUILT_CLI = join(REPO, 'dist/cli.js');
const EXAMPLE = join(REPO, 'examples/h200-vm');
export const GPU_BDF = '0000:00:06.0';

// ---------------------------------------------------------------------------------------------- processes

/** PIDs of live processes whose argv is exactly `argv` (a killed, unreaped child has an empty cmdline). */
export function processesWithArgv(argv: readonly string[]): number[] {
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

/** The sandbox up, the baseline written, the node idle; undefined (after a t.fail) when it could not start. */
export async function startGateSandbox(t: Test) {
  t.setTimeout(360_000);
  if (!existsSync(BUILT_CLI)) {
    t.fail(`${BUILT_CLI} is missing: build first (npm run build)`);
    return undefined;
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
    return undefined;
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
    const cfg = { baseline: BASELINE, root: HEALTHY, scontrol: '/usr/bin/scontrol', scontrolTimeoutMs: 5000, deadlineMs: 10000, logFile: LOG, stateDir: join(WORK, 'run'), spool: join(WORK, 'spool'), ...over };
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
  /** `sbatch -W --wrap true`: it exits 0, the job COMPLETED, the node neither drained nor given a reason. Its id. */
  const completes = async (tt: Test): Promise<string> => {
    const r = slurm('sbatch', ['-W', '--parsable', '-o', '/dev/null', '-J', 'e2e', '--wrap', 'true'], 60_000);
    tt.equal(r.status, 0, 'sbatch -W exits 0', { stderr: r.stderr });
    const id = r.stdout.trim().split(';')[0]!;
    tt.equal((await waitDone(id)).value, 'COMPLETED', `job ${id} COMPLETED`);
    // idle, or still completing the job (Slurm's timing): never drained, down or allocated.
    tt.match(state(), /^(idle|completing)$/, 'node not drained');
    tt.equal(reason(), 'none', 'no reason');
    return id;
  };

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

  return { t, node, port, WORK, DIR, CONF, CONFIG, BASELINE, LOG, BAD_BASELINE, WRAPPER, SHIM, SHIM_CALLED, SHIM_GO, HANG, HANG_RAN, SLEEP_ARGV, CLI, HEALTHY, X8, slurm, state, reason, nodeFlags, waitIdle, sinfoR, showNode, jobField, submit, gdrgate, resumeCli, writeConfig, logLines, runLine, waitHeld, waitDone, completes, timed };
}

export type GateSandbox = NonNullable<Awaited<ReturnType<typeof startGateSandbox>>>;
