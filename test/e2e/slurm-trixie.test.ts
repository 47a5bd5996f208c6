// A newer Slurm run for real: Debian trixie's 24.11 (munged, slurmctld, slurmd) in a chroot, in namespaces of its own, the gate installed as `gdrgate slurm-config` says there.
// The root: a minbase trixie made once by mmdebstrap with slurmctld, slurmd, slurm-client and munge, cached as
// /var/cache/gdrgate-test/slurm-trixie.tar (trixie/make-root.sh). The project's Node and dist are carried in; the
// wrappers' settings lie in /etc/gdrgate/<name>.conf (nothing beside the scripts). Cases: slurm-config against the
// site's slurm.conf (a Prolog of its own, PrologFlags=Contain) and the real slurmd -V, its lines applied and taken by
// `scontrol reconfigure`; a job through both Prolog= lines; an x8 tree drains the node with gdrgate's reason; a
// HealthCheckProgram run drains an idle node; under PrologFlags=RunInJob the agent answers the Prolog; and slurmd -G
// numbers generated nodes' GPUs as the Prolog's record says (_gres-order.ts).
// GDRGATE_SLURM_SUITE=sid runs sid's Slurm instead, from a root cached by hand. Runs when CI or GDRGATE_E2E=1, as root;
// see test/e2e/README.md.
import t from 'tap';
import { spawn } from 'node:child_process';
import { chmodSync, copyFileSync, cpSync, existsSync, linkSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { trainGpuTo } from '../helpers/h200-link.js';
import { gresOrderOracle } from './_gres-order.js';
import { REPO, cleanEnv, freePortPair, run, runOrSkip, secs, waitFor } from './_sandbox.js';

/** The Debian suite whose Slurm runs (CI: trixie); another one's root must be cached already (docs/slurm-versions.md). */
const SUITE = process.env.GDRGATE_SLURM_SUITE ?? 'trixie';
const CACHE = `/var/cache/gdrgate-test/slurm-${SUITE}.tar`;
/** What slurm-config finds in each suite: the release it plans for, and the version `slurmd -V` prints. */
const EXPECT: Record<string, { release: string; version: RegExp }> = {
  trixie: { release: '24.11', version: /^24\.11\.\d+$/ },
  sid: { release: '26.05', version: /^26\.05\.\d+$/ },
};
const HERE = join(REPO, 'test/e2e/trixie');
const LIBEXEC = '/opt/gdrgate/libexec';
const TOOLS = ['/usr/bin/unshare', '/usr/bin/nsenter', '/usr/sbin/chroot', '/bin/tar'];

interface Change {
  readonly key: string;
  readonly action: 'keep' | 'set' | 'add' | 'remove' | 'optional';
  readonly file: string;
  readonly line: number | null;
  readonly set: string | null;
}
interface Plan {
  readonly slurm: { release: string; from: string };
  readonly changes: readonly Change[];
  readonly wrappers: readonly { path: string; text: string }[];
}

/** What an admin does with the listing (the optional HealthCheckProgram taken too), in the root at `root`. */
function apply(root: string, p: Plan): void {
  const byFile = new Map<string, Change[]>();
  for (const c of p.changes) if (c.action !== 'keep') byFile.set(c.file, [...(byFile.get(c.file) ?? []), c]);
  for (const [file, cs] of byFile) {
    const lines = readFileSync(join(root, file), 'utf8').replace(/\n$/, '').split('\n');
    const appended: string[] = [];
    for (const c of [...cs].sort((a, b) => (b.line ?? 0) - (a.line ?? 0))) {
      if (c.line === null) appended.push(c.set!);
      else if (c.action === 'set') lines[c.line - 1] = c.set!;
      else if (c.action === 'remove') lines.splice(c.line - 1, 1);
      else lines.splice(c.line, 0, c.set!);
    }
    writeFileSync(join(root, file), [...lines, ...appended].join('\n') + '\n');
  }
}

/** The cached root, made when missing; null when it cannot be (no mmdebstrap, no network), with why. */
function cachedRoot(): { ok: true } | { ok: false; why: string } {
  if (existsSync(CACHE)) return { ok: true };
  if (SUITE !== 'trixie') return { ok: false, why: `no ${CACHE}: make it by hand (docs/slurm-versions.md)` };
  if (!existsSync('/usr/bin/mmdebstrap')) return { ok: false, why: `no ${CACHE} and no mmdebstrap to make it (apt-get install mmdebstrap)` };
  const r = run('/bin/sh', [join(HERE, 'make-root.sh'), 'trixie', CACHE], { timeoutMs: 960_000 });
  if (r.status === 0 && existsSync(CACHE)) return { ok: true };
  return { ok: false, why: `mmdebstrap could not make the trixie root (network?): ${r.stderr.trim().split('\n').slice(-3).join(' / ')}` };
}

await runOrSkip(t, 'slurm-trixie', async () => {
  const tool = TOOLS.find((f) => !existsSync(f));
  if (tool) return void t.skip(`slurm-trixie e2e skipped: ${tool} is missing`, () => {});
  if (!existsSync(join(REPO, 'dist/cli.js'))) return void t.fail('dist/cli.js is missing: build first (npm run build)');
  t.setTimeout(1_200_000);
  const made = cachedRoot();
  if (!made.ok) return void t.skip(`slurm-trixie e2e skipped: ${made.why}`, () => {});
  await e2e();
});

async function e2e(): Promise<void> {
  const t0 = performance.now();
  const WORK = mkdtempSync('/tmp/gdrgate-e2e-trixie-');
  chmodSync(WORK, 0o755);
  const R = join(WORK, 'root');
  mkdirSync(R);
  const untar = run('/bin/tar', ['-C', R, '-xf', CACHE], { timeoutMs: 300_000 });
  if (untar.status !== 0) return void t.fail('the cached root unpacks', { stderr: untar.stderr });
  // The root's slurmd -G numbers generated nodes' GPUs as the Prolog derives it (a mount namespace of each case's own).
  await t.test("slurmd's GPU numbering, generated nodes and gres.conf files", (tt) => gresOrderOracle(tt, R, 45));
  const port = await freePortPair();

  // The site's Slurm: its own Prolog (it notes its job, context and parent), PrologFlags=Contain, a health check
  // interval for idle nodes only (a drained node is left to the Prolog's reason). No cgroup plugin: the host's
  // cgroups are not this root's to touch.
  const conf = [
    'ClusterName=trixie',
    'SlurmctldHost=trixie(127.0.0.1)',
    `SlurmctldPort=${port}`,
    `SlurmdPort=${port + 1}`,
    'SlurmUser=root',
    'SlurmdUser=root',
    'AuthType=auth/munge',
    'CredType=cred/munge',
    'StateSaveLocation=/var/spool/e2e/state',
    'SlurmdSpoolDir=/var/spool/e2e/slurmd',
    'SlurmctldPidFile=/run/slurmctld.pid',
    'SlurmdPidFile=/run/slurmd.pid',
    'SlurmctldLogFile=/var/log/e2e/slurmctld.log',
    'SlurmdLogFile=/var/log/e2e/slurmd.log',
    'MailProg=/bin/true',
    'ProctrackType=proctrack/linuxproc',
    'TaskPlugin=task/none',
    'JobAcctGatherType=jobacct_gather/none',
    'AccountingStorageType=accounting_storage/none',
    'SelectType=select/cons_tres',
    'SchedulerType=sched/backfill',
    'ReturnToService=0',
    'KillWait=5',
    'MinJobAge=600',
    'HealthCheckInterval=5',
    'HealthCheckNodeState=NONDRAINED_IDLE',
    'Prolog=/etc/slurm/site-prolog.sh',
    'PrologFlags=Contain',
    'NodeName=trixie NodeAddr=127.0.0.1 CPUs=1 RealMemory=500 State=UNKNOWN',
    'PartitionName=debug Nodes=trixie Default=YES MaxTime=INFINITE State=UP',
  ];
  writeFileSync(join(R, 'etc/slurm/slurm.conf'), conf.join('\n') + '\n');
  writeFileSync(join(R, 'etc/slurm/cgroup.conf'), 'CgroupPlugin=disabled\n');
  writeFileSync(join(R, 'etc/slurm/site-prolog.sh'), '#!/bin/sh\necho "$SLURM_JOB_ID $SLURM_SCRIPT_CONTEXT $(cat /proc/$PPID/comm)" >> /var/log/e2e/site-prolog.ran\n', { mode: 0o755 });
  mkdirSync(join(R, 'opt/e2e'));
  copyFileSync(join(HERE, 'boot.sh'), join(R, 'opt/e2e/boot.sh'));

  // The gate as a package lays it out, with the project's own Node (linked when it can be, else copied).
  const G = join(R, 'opt/gdrgate');
  mkdirSync(join(G, 'bin'), { recursive: true });
  mkdirSync(join(G, 'libexec'));
  for (const d of ['dist', 'schemas']) cpSync(join(REPO, d), join(G, d), { recursive: true });
  copyFileSync(join(REPO, 'package.json'), join(G, 'package.json'));
  try {
    linkSync(process.execPath, join(G, 'bin/node'));
  } catch {
    copyFileSync(process.execPath, join(G, 'bin/node'));
  }
  for (const w of ['prolog', 'epilog', 'taskprolog']) copyFileSync(join(REPO, `slurm/${w}.sh`), join(G, `libexec/${w}.sh`));
  for (const w of ['prolog', 'epilog', 'taskprolog']) chmodSync(join(G, `libexec/${w}.sh`), 0o755);
  symlinkSync('prolog.sh', join(G, 'libexec/health.sh'));
  // Settings only in /etc/gdrgate/<name>.conf, as a configless node has them; the health check its own gate config.
  mkdirSync(join(R, 'etc/gdrgate'), { recursive: true });
  const settings = (config: string) => `NODE=/opt/gdrgate/bin/node\nCLI=/opt/gdrgate/dist/cli.js\nCONFIG=${config}\nAGENT=\n`;
  for (const w of ['prolog', 'epilog', 'taskprolog']) writeFileSync(join(R, `etc/gdrgate/${w}.conf`), settings('/etc/gdrgate/config.json'), { mode: 0o644 });
  writeFileSync(join(R, 'etc/gdrgate/health.conf'), settings('/etc/gdrgate/health.json'), { mode: 0o644 });
  // The node's trees (the bundled H200 capture) and the baseline from the healthy one.
  for (const tree of ['healthy', 'x8']) cpSync(join(REPO, 'examples/h200-vm'), join(R, 'opt/trees', tree), { recursive: true, verbatimSymlinks: true });
  trainGpuTo(join(R, 'opt/trees/x8'), 8);
  const cap = run(process.execPath, [join(REPO, 'dist/cli.js'), 'baseline', 'capture', '--root', join(R, 'opt/trees/healthy'), '--class', 'trixie', '--match', 'trixie', '--platform', 'virtualized'], { env: cleanEnv({}), timeoutMs: 60_000 });
  if (cap.status !== 0) return void t.fail('baseline capture', { stderr: cap.stderr });
  writeFileSync(join(R, 'etc/gdrgate/baseline.json'), cap.stdout);
  mkdirSync(join(R, 'var/lib/gdrgate-e2e'), { recursive: true });
  const gateConfig = (file: string, tree: string, more: Record<string, unknown> = {}): void =>
    writeFileSync(join(R, 'etc/gdrgate', file), JSON.stringify({ baseline: '/etc/gdrgate/baseline.json', root: `/opt/trees/${tree}`, scontrol: '/usr/bin/scontrol', scontrolTimeoutMs: 5000, deadlineMs: 10000, logFile: '/var/log/gdrgate.log', stateDir: '/var/lib/gdrgate-e2e', spool: '/var/lib/gdrgate-e2e/spool', ...more }) + '\n');
  gateConfig('config.json', 'healthy');
  gateConfig('health.json', 'healthy');

  // Up: the namespaces' PID 1 becomes boot.sh; killing unshare (SIGKILL, --kill-child) ends every process in them.
  // Nothing of tap's (NODE_OPTIONS) reaches the daemons, and through sbatch the jobs' TaskProlog.
  const ns = spawn('/usr/bin/env', ['-i', 'PATH=/usr/sbin:/usr/bin:/sbin:/bin', 'LANG=C.UTF-8', '/usr/bin/unshare', '--mount', '--uts', '--pid', '--fork', '--kill-child', '/bin/sh', join(HERE, 'up.sh'), WORK], {
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true,
  });
  let upErr = '';
  ns.stderr!.on('data', (d: Buffer) => (upErr += d.toString()));
  const down = (): void => void (ns.exitCode === null && ns.signalCode === null && ns.kill('SIGKILL'));
  process.once('exit', down);
  t.teardown(async () => {
    down();
    await new Promise((res) => (ns.exitCode !== null || ns.signalCode !== null ? res(null) : ns.once('exit', res)));
    if (t.passing()) rmSync(WORK, { recursive: true, force: true });
    else t.comment(`kept for inspection: ${WORK} (Slurm logs in root/var/log/e2e, the gate's in root/var/log/gdrgate.log; up.sh said: ${upErr.trim() || 'nothing'})`);
    t.comment(`total wall time ${secs(t0)}`);
  });
  const booted = await waitFor(() => existsSync(join(R, 'opt/e2e/booted')) || ns.exitCode !== null, (v) => v, 60_000);
  const pid1 = booted.ok && ns.exitCode === null ? readFileSync(`/proc/${ns.pid}/task/${ns.pid}/children`, 'utf8').trim() : '';
  if (!/^\d+$/.test(pid1)) return void t.fail('the root boots', { upErr, exit: ns.exitCode });
  const inside = (file: string, args: readonly string[], timeoutMs = 20_000) =>
    run('/usr/bin/nsenter', ['-t', pid1, '-m', '-u', '-p', '-r', '-w', file, ...args], { env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', LANG: 'C.UTF-8' }, timeoutMs, withoutNodeOptions: true });
  const state = (): string => inside('/usr/bin/sinfo', ['-h', '-N', '-n', 'trixie', '-o', '%T']).stdout.trim();
  const reason = (): string => inside('/usr/bin/sinfo', ['-h', '-N', '-n', 'trixie', '-o', '%E']).stdout.trim();
  const jobState = (id: string): string => inside('/usr/bin/squeue', ['-h', '-t', 'all', '-j', id, '-o', '%T|%r']).stdout.trim();
  const gateRuns = (): Record<string, unknown>[] =>
    (existsSync(join(R, 'var/log/gdrgate.log')) ? readFileSync(join(R, 'var/log/gdrgate.log'), 'utf8') : '').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === 'gdrgate run');
  const idle = await waitFor(state, (s) => s === 'idle', 60_000);
  if (!idle.ok) return void t.fail(`the node comes up idle (${idle.value})`);
  t.comment(`Slurm ${inside('/usr/sbin/slurmd', ['-V']).stdout.trim()} up in ${secs(t0)}, port ${port}`);
  // The wrappers' fast path made on the node, as the package's postinst does (a blob made elsewhere is refused).
  const blob = inside('/opt/gdrgate/bin/node', ['/opt/gdrgate/dist/cli.js', 'startup-snapshot', '--out', '/opt/gdrgate/dist/gate.blob'], 180_000);
  if (blob.status !== 0) return void t.fail('gdrgate startup-snapshot in the root', { stderr: blob.stderr });

  const want = EXPECT[SUITE];
  if (!want) return void t.fail(`no expectations for the suite ${SUITE}`);
  await t.test(`slurm-config plans for ${want.release}: a second Prolog= line, no wrapper; slurmctld takes it`, async (t) => {
    const printed = inside('/opt/gdrgate/bin/node', ['/opt/gdrgate/dist/cli.js', 'slurm-config', '--scripts', LIBEXEC, '--wrapper-dir', '/etc/slurm', '--json'], 60_000);
    t.equal(printed.status, 0, 'slurm-config', { stderr: printed.stderr });
    const plan = JSON.parse(printed.stdout) as Plan;
    t.equal(plan.slurm.release, want.release);
    t.match(/^\/usr\/sbin\/slurmd -V: slurm-wlm (\S+)$/.exec(plan.slurm.from)?.[1], want.version, `found by the real slurmd -V (${plan.slurm.from})`);
    t.same(
      plan.changes.map((c) => `${c.key} ${c.action}${c.line === null ? '' : `@${c.line}`}${c.set ? ` ${c.set}` : ''}`),
      [
        'PrologFlags set@28 PrologFlags=Contain,DeferBatch',
        `Prolog add@27 Prolog=${LIBEXEC}/prolog.sh`,
        `Epilog add Epilog=${LIBEXEC}/epilog.sh`,
        `TaskProlog add TaskProlog=${LIBEXEC}/taskprolog.sh`,
        `HealthCheckProgram optional HealthCheckProgram=${LIBEXEC}/health.sh`,
        'HealthCheckInterval keep@25',
        'PrologEpilogTimeout add PrologEpilogTimeout=60',
        'PropagateResourceLimitsExcept add PropagateResourceLimitsExcept=MEMLOCK',
      ],
    );
    t.same(plan.wrappers, [], 'no chain wrapper: from 24.05 Slurm runs several Prolog= lines itself');
    apply(R, plan);
    t.equal(inside('/usr/bin/scontrol', ['reconfigure']).status, 0, 'scontrol reconfigure');
    t.ok((await waitFor(state, (s) => s === 'idle', 60_000)).ok, 'idle again');
    const shown = inside('/usr/bin/scontrol', ['show', 'config']).stdout.split('\n').filter((l) => /^(Prolog(\[\d\]|Flags|EpilogTimeout)?|Epilog(\[\d\])?|TaskProlog|HealthCheckProgram)\s/.test(l));
    t.same(
      shown.map((l) => l.replace(/\s+=\s+/, '=').trim()),
      [`Epilog[0]=${LIBEXEC}/epilog.sh`, `HealthCheckProgram=${LIBEXEC}/health.sh`, 'Prolog[0]=/etc/slurm/site-prolog.sh', `Prolog[1]=${LIBEXEC}/prolog.sh`, 'PrologEpilogTimeout=60', 'PrologFlags=Alloc,Contain,DeferBatch', `TaskProlog=${LIBEXEC}/taskprolog.sh`],
    );
  });

  await t.test('a job passes through both Prologs: the site’s (under slurmd, prolog_slurmd), then gdrgate’s', async (t) => {
    const job = inside('/usr/bin/sbatch', ['-W', '--parsable', '-o', '/dev/null', '--wrap', 'true'], 120_000);
    t.equal(job.status, 0, 'sbatch -W: completed', { stderr: job.stderr });
    const id = job.stdout.trim();
    t.same(readFileSync(join(R, 'var/log/e2e/site-prolog.ran'), 'utf8').trim().split('\n').at(-1), `${id} prolog_slurmd slurmd`, 'the site’s Prolog ran, its parent slurmd (from 24.11 slurmd’s launcher execs it in place)');
    const gate = gateRuns().find((l) => l.job === id);
    t.same(gate && { mode: gate.mode, result: gate.result, exitCode: gate.exitCode, startup: gate.startup }, { mode: 'prolog', result: 'healthy', exitCode: 0, startup: 'snapshot' });
    // (The node shows COMPLETING while the job's Epilog runs: its state once that is over.)
    t.equal((await waitFor(state, (s) => s !== 'completing', 60_000)).value, 'idle', 'the node is idle again, not drained');
  });

  await t.test('an x8 GPU link: the Prolog drains the node with gdrgate’s reason, the job is held', async (t) => {
    gateConfig('config.json', 'x8');
    // The periodic health check (HealthCheckInterval=5) judges its own tree, still the healthy one: left to resume,
    // one that began before this Prolog's drain and ended after it resumed the node (seen once in CI). Here it may not.
    gateConfig('health.json', 'healthy', { resumeWhenHealthy: false });
    const job = inside('/usr/bin/sbatch', ['--parsable', '-o', '/dev/null', '--wrap', 'true']);
    const id = job.stdout.trim();
    const drained = await waitFor(state, (s) => s === 'drained', 60_000);
    t.equal(drained.value, 'drained');
    t.match(reason(), new RegExp(`^gdrgate: pcie-link 0000:00:06\\.0 .* job=${id}$`));
    const held = await waitFor(() => jobState(id), (v) => v === 'PENDING|launch failed requeued held', 60_000);
    t.equal(held.value, 'PENDING|launch failed requeued held');
    inside('/usr/bin/scancel', [id]);
  });

  await t.test('HealthCheckProgram: slurmd runs health.sh on the idle node; it drains with gdrgate’s reason', async (t) => {
    gateConfig('health.json', 'x8');
    t.equal(inside('/usr/bin/scontrol', ['update', 'nodename=trixie', 'state=resume']).status, 0, 'resumed by hand');
    const drained = await waitFor(state, (s) => s === 'drained', 60_000);
    t.equal(drained.value, 'drained');
    t.match(reason(), /^gdrgate: pcie-link 0000:00:06\.0 \S/);
    t.notMatch(reason(), / job=/, 'no job: the health check’s reason');
    const health = gateRuns().filter((l) => l.mode === 'health');
    t.same(health.at(-1) && { result: health.at(-1)!.result, exitCode: health.at(-1)!.exitCode }, { result: 'unhealthy', exitCode: 1 });
  });

  await t.test('PrologFlags=RunInJob: the extern slurmstepd runs both Prologs; the agent answers gdrgate’s', async (t) => {
    gateConfig('config.json', 'healthy');
    gateConfig('health.json', 'healthy');
    // The health check runs on undrained idle nodes only (NONDRAINED_IDLE): the admin resumes the mended node.
    t.equal(inside('/usr/bin/scontrol', ['update', 'nodename=trixie', 'state=resume']).status, 0, 'mended, resumed by hand');
    t.ok((await waitFor(state, (s) => s === 'idle', 60_000)).ok, 'idle');
    // The agent, resident in the root's namespaces (it ends with them), named in the Prolog's settings.
    spawn('/usr/bin/env', ['-i', 'PATH=/usr/bin:/bin', '/usr/bin/nsenter', '-t', pid1, '-m', '-u', '-p', '-r', '-w', '/opt/gdrgate/bin/node', '/opt/gdrgate/dist/cli.js', 'agent', '--config', '/etc/gdrgate/config.json', '--dir', '/run/gdrgate-agent'], { stdio: 'ignore', detached: true }).unref();
    writeFileSync(join(R, 'etc/gdrgate/prolog.conf'), settings('/etc/gdrgate/config.json').replace('AGENT=\n', 'AGENT=/run/gdrgate-agent\nAGENT_TIMEOUT=20\n'));
    const file = join(R, 'etc/slurm/slurm.conf');
    writeFileSync(file, readFileSync(file, 'utf8').replace(/^PrologFlags=Contain,DeferBatch$/m, 'PrologFlags=Contain,DeferBatch,RunInJob'));
    t.equal(inside('/usr/bin/scontrol', ['reconfigure']).status, 0, 'scontrol reconfigure');
    t.ok((await waitFor(state, (s) => s === 'idle', 60_000)).ok, 'idle');
    // (/run is the namespace's own tmpfs: asked from inside.)
    t.ok((await waitFor(() => inside('/usr/bin/test', ['-p', '/run/gdrgate-agent/requests']).status, (v) => v === 0, 60_000)).ok, 'the agent runs');
    const flags = inside('/usr/bin/scontrol', ['show', 'config']);
    t.equal(/^PrologFlags\s+=\s+(.*)$/m.exec(flags.stdout)?.[1], 'Alloc,Contain,RunInJob,DeferBatch', 'scontrol show config', { stderr: flags.stderr });
    const job = inside('/usr/bin/sbatch', ['-W', '--parsable', '-o', '/dev/null', '--wrap', 'true'], 120_000);
    t.equal(job.status, 0, 'sbatch -W: completed', { stderr: job.stderr });
    const id = job.stdout.trim();
    t.same(readFileSync(join(R, 'var/log/e2e/site-prolog.ran'), 'utf8').trim().split('\n').at(-1), `${id} prolog_slurmd slurmstepd`, 'the site’s Prolog ran under the extern slurmstepd');
    const gate = gateRuns().find((l) => l.job === id);
    t.same(gate && { mode: gate.mode, result: gate.result, exitCode: gate.exitCode, startup: gate.startup }, { mode: 'prolog', result: 'healthy', exitCode: 0, startup: 'agent' }, 'judged by the agent: no Node started in the job’s cgroup');
  });
}
