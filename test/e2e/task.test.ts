// End to end: gdrgate as Prolog (slurm/prolog.sh), TaskProlog (slurm/taskprolog.sh) and Epilog of a real
// single-node Slurm (test/e2e/sandbox), jobs submitted by a non-root user, judged by the job's own output file.
// (1) ulimit -l 64 propagated → the job is told; (2) PropagateResourceLimitsExcept=MEMLOCK → slurmd's limit, no
// warning; (3) a job view without /dev/infiniband → visibility finding; (4) another user can neither list nor
// read the job's state, and a prolog.json the owner re-signed with another key is reported as untrusted; (5) a job
// with a real GRES GPU, bound by task/affinity away from it (`--cpu-bind=map_cpu:`, the tree's local_cpulist
// chosen from this machine's CPU numbers) is told, bound near is not, and a container view without the GPU's PIX
// adapter (a user+mount namespace from unshare) names it.
// Runs when CI is set or GDRGATE_E2E=1, as root.
import t from 'tap';
import { spawn } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, lstatSync, mkdirSync, readFileSync, readlinkSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { reachableBuild, reachableNode } from '../helpers/reachable.js';
import { jobRoot } from '../task/_roots.js';
import { twoSocket } from '../gen/topologies/two-socket-2gpu-2nic.js';
import { containerView } from './_task-views.js';
import { parseCpuList } from '../../src/parsers/sysfs.js';
import { cleanEnv as sandboxEnv, freePortPair, gateConf, installWrapper, REPO, run as runProgram, runOrSkip, sandbox, secs, viewIs, waitFor as poll, type Ran, type RunOpts } from './_sandbox.js';

const BUILT = join(REPO, 'dist/cli.js');
const USER = 'gdrtest';
const MiB8 = 8 * 1024 * 1024; // root cannot raise RLIMIT_MEMLOCK above this here: slurmd runs with it

/**
 * Every program through env(1) -u NODE_OPTIONS: tap's processinfo puts its NODE_OPTIONS back into every child's
 * environment, and the daemons would hand it on to the jobs.
 */
const run = (file: string, args: readonly string[], opts: RunOpts = {}): Ran => runProgram(file, args, { ...opts, withoutNodeOptions: true });
// Nothing that could point the sandbox elsewhere, and nothing of tap's: sbatch copies this environment
// into the job, where node (the TaskProlog, the job's own scripts) runs as the job's user.
const cleanEnv = (extra: Record<string, string>): NodeJS.ProcessEnv => sandboxEnv(extra, true);
const waitFor = <T>(probe: () => T, ok: (v: T) => boolean, timeoutMs: number) => poll(probe, ok, timeoutMs, 200);

await runOrSkip(t, 'task', e2e, 'it must run as root (it starts munged, slurmctld and slurmd)', '');

async function e2e(): Promise<void> {
  t.setTimeout(240_000);
  if (!existsSync(BUILT)) return void t.fail(`${BUILT} is missing: build first (npm run build)`);
  if (run('/usr/bin/id', ['-u', USER]).status !== 0) {
    const u = run('/usr/sbin/useradd', ['-m', USER]);
    if (u.status !== 0) return void t.fail(`cannot create the job user ${USER}: ${u.stderr}`);
  }
  const uid = Number(run('/usr/bin/id', ['-u', USER]).stdout.trim());

  // Each tree's /proc/self must be the reader's own, inside the root (the Host refuses a link to /proc/self, which
  // leaves it): /proc bound at <tree>/procfs, and proc/self → ../procfs/self, whose target ("<pid>") is relative.
  // Unmounted before the sandbox's teardown removes the work directory.
  const mounted: string[] = [];
  const umountAll = (): void => {
    for (let m = mounted.pop(); m !== undefined; m = mounted.pop()) run('/usr/bin/umount', ['-l', m]);
  };
  t.teardown(umountAll); // after a failure (the work directory is kept then); a passing run unmounts at its end
  const liveProcSelf = (tree: string): void => {
    mkdirSync(join(tree, 'procfs'));
    const m = run('/usr/bin/mount', ['--bind', '/proc', join(tree, 'procfs')]);
    if (m.status !== 0) throw new Error(`mount --bind /proc: ${m.stderr}`);
    mounted.push(join(tree, 'procfs'));
    rmSync(join(tree, 'proc/self'), { recursive: true });
    symlinkSync('../procfs/self', join(tree, 'proc/self'));
  };

  // A free slurmctld/slurmd port pair near 7900 (another e2e file may run a sandbox on 6817 or elsewhere).
  const sb = sandbox(t, { prefix: '/tmp/gdrgate-task-e2e-', port: await freePortPair({ from: 7900, to: 8000 }), forJobs: true, inspect: () => `job outputs in ${JOBS}` });
  const { WORK, DIR, CONF, CONFIG, BASELINE, LOG, port } = sb; // WORK 0755: munged (munge user) and the job user must reach into it
  // The TaskProlog runs the CLI as the job user, who cannot traverse a checkout under a 0700 home: a copy in WORK.
  const CLI = reachableBuild(WORK);
  // A Node the job user can start (the project's own lies in the clone, which may be under a 0700 home).
  const NODE = reachableNode(CLI);
  const STATE = join(WORK, 'run');
  const JOBS = join(WORK, 'jobs');
  mkdirSync(JOBS, { mode: 0o1777 });
  chmodSync(JOBS, 0o1777);

  // Host view (Prolog) and job views (TaskProlog): 4 ConnectX-5 with uverbs0-3 under /dev/infiniband. proc/self
  // is the reader's own (above), so each reader sees its own limits (the job's memlock is the point of case 1).
  const HOST = await jobRoot({}, join(WORK, 'tree'));
  const HIDDEN = await jobRoot({ uverbs: null }, join(WORK, 'tree-no-infiniband'));
  for (const tree of [HOST, HIDDEN]) liveProcSelf(tree);

  // Baseline of the host tree, memlockMin = slurmd's 8 MiB (root cannot raise it here).
  const gdr = (args: string[]): Ran => run(NODE, [CLI, ...args], { timeoutMs: 30_000 });
  const cap = gdr(['baseline', 'capture', '--root', HOST, '--class', 'sandbox', '--match', '*']);
  if (cap.status !== 0) return void t.fail('baseline capture', { stderr: cap.stderr });
  const baseline = JSON.parse(cap.stdout) as { classes: { memlockMin: unknown }[] };
  baseline.classes[0]!.memlockMin = MiB8;
  writeFileSync(BASELINE, JSON.stringify(baseline, null, 2) + '\n', { mode: 0o644 });
  writeFileSync(CONFIG, JSON.stringify({ baseline: BASELINE, root: HOST, scontrol: '/usr/bin/scontrol', logFile: LOG, stateDir: STATE, spool: join(STATE, '..', 'spool') }, null, 2) + '\n', { mode: 0o644 });

  // The wrappers Slurm runs: slurm/prolog.sh and slurm/taskprolog.sh unchanged, each with its .conf beside it.
  const PROLOG = join(WORK, 'gdrgate-prolog.sh');
  const TASKPROLOG = join(WORK, 'gdrgate-taskprolog.sh');
  const EPILOG = join(WORK, 'gdrgate-epilog.sh');
  const conf = gateConf(CLI, CONFIG, NODE);
  // The Prolog asks the agent below, which hands each job its TaskProlog's FIFO as it answers.
  installWrapper('prolog', PROLOG, `${conf}AGENT=${join(WORK, 'agent')}\n`);
  installWrapper('taskprolog', TASKPROLOG);
  // STATE as the config's (the kept answers, and each job's FIFO, are there); ROOT as the config's root, where the
  // agent judges the view the wrapper read (a view read under another root is left to gdrgate).
  const taskConf = (extra = ''): void => {
    writeFileSync(join(WORK, 'gdrgate-taskprolog.conf.tmp'), `${conf}STATE=${STATE}\nROOT=${HOST}\n${extra}`, { mode: 0o644 });
    renameSync(join(WORK, 'gdrgate-taskprolog.conf.tmp'), join(WORK, 'gdrgate-taskprolog.conf'));
  };
  taskConf();
  writeFileSync(EPILOG, `#!/bin/sh\n# e2e Epilog: gdrgate's per-job state cleanup\nexec ${NODE} ${CLI} epilog --config ${CONFIG}\n`, { mode: 0o755 });

  // Case 4's job forges its own record (test/e2e/forge.mjs: the payload changed and re-signed with a key of its own).
  const FORGE = join(WORK, 'forge.mjs');
  copyFileSync(join(REPO, 'test/e2e/forge.mjs'), FORGE);
  chmodSync(FORGE, 0o644);

  const start = (extra: string[], vars: Record<string, string> = {}): Ran =>
    sb.start({
      ...vars,
      SANDBOX_CRED_EXPIRE: '5',
      SANDBOX_PROLOG_FLAGS: 'Alloc',
      GATE_PROLOG: PROLOG,
      GATE_EPILOG: EPILOG,
      SANDBOX_EXTRA_CONF: [`TaskProlog=${TASKPROLOG}`, ...extra].join('\n'),
    });
  const t1 = performance.now();
  const up = start([]);
  if (up.status !== 0) return void t.fail('start.sh brought the sandbox up', { status: up.status, stderr: up.stderr.slice(-3000) });
  t.comment(`sandbox up in ${secs(t1)} on port ${port}: ${DIR}`);
  // gdrgate agent, as its service runs it: it judges each step's first TaskProlog from the view the wrapper read.
  const agent = spawn('/usr/bin/env', ['-u', 'NODE_OPTIONS', NODE, CLI, 'agent', '--config', CONFIG, '--dir', join(WORK, 'agent')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let agentSaid = '';
  agent.stderr!.on('data', (d: Buffer) => (agentSaid += d.toString()));
  t.teardown(() => void agent.kill('SIGTERM'));
  if (!(await waitFor(() => existsSync(join(WORK, 'agent', 'agent.pid')), (v) => v, 60_000)).ok) return void t.fail('gdrgate agent did not start', { stderr: agentSaid });
  /** The agent's lines for job `id` since `from` (job ids restart with the sandbox): per TaskProlog judged, or left to gdrgate. */
  const byAgent = (id: string, from: number, what: 'answered' | 'left to gdrgate'): number => agentSaid.slice(from).split('\n').filter((l) => l.includes(`"job":"${id}"`) && l.includes(`TaskProlog ${what}`)).length;

  const clientEnv = cleanEnv({ SLURM_CONF: CONF });
  /** sbatch as the job user, from a shell with `ulimit -l KiB` when given. */
  const submit = (name: string, wrap: string, ulimitKiB?: number, args = ''): string => {
    const sh = `${ulimitKiB !== undefined ? `ulimit -l ${ulimitKiB} && ` : ''}exec /usr/bin/sbatch --parsable -J ${name} -o ${JOBS}/${name}.out ${args} --wrap "$1"`;
    const r = run('/usr/sbin/runuser', ['-u', USER, '--', '/bin/bash', '-c', sh, 'sbatch', wrap], { env: clientEnv, cwd: JOBS });
    if (r.status !== 0) throw new Error(`sbatch as ${USER} failed (${r.status}): ${r.stderr}`);
    return r.stdout.trim().split(';')[0]!;
  };
  const jobState = (id: string): string => /JobState=(\S+)/.exec(run('/usr/bin/scontrol', ['show', 'job', id], { env: clientEnv }).stdout)?.[1] ?? '?';
  const finished = async (id: string, timeoutMs = 60_000): Promise<string> => (await waitFor(() => jobState(id), (s) => /^(COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL)$/.test(s), timeoutMs)).value;
  const output = (name: string): string => (existsSync(join(JOBS, `${name}.out`)) ? readFileSync(join(JOBS, `${name}.out`), 'utf8') : '');
  const gdrLines = (text: string): string[] => text.split('\n').filter((l) => l.startsWith('gdrgate:'));
  const logLines = (): Record<string, unknown>[] =>
    (existsSync(LOG) ? readFileSync(LOG, 'utf8') : '')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  /** The Epilog's line for job `id` written after log line `since` (job ids restart with the sandbox). */
  const viewLine = async (id: string, since: number): Promise<Record<string, unknown> | undefined> =>
    (await waitFor(() => logLines().slice(since).find((l) => l.job === id && String(l.msg).startsWith('gdrgate job view')), (v) => v !== undefined, 30_000)).value;
  const stateGone = async (id: string): Promise<boolean> => (await waitFor(() => existsSync(join(STATE, `job-${id}`)), (v) => !v, 30_000)).ok;
  const memlockLine = (text: string): string => text.split('\n').find((l) => l.startsWith('Max locked memory')) ?? '';

  await t.test('1. ulimit -l 64 in the submitting shell, default PropagateResourceLimits: the job is told', async (tt) => {
    const [since, from] = [logLines().length, agentSaid.length];
    const id = submit('case1', 'grep "Max locked memory" /proc/self/limits', 64);
    tt.equal(await finished(id), 'COMPLETED', `job ${id} COMPLETED (warn only: the job still runs)`);
    const out = output('case1');
    tt.comment(`job output:\n${out.trimEnd()}`);
    tt.equal(memlockLine(out), `Max locked memory         ${'65536'.padEnd(21)}${'8388608'.padEnd(21)}bytes     `, 'the job itself really has 64 KiB (soft)');
    const lines = gdrLines(out);
    tt.equal(lines.length, 1, 'one gdrgate line in the job output');
    tt.equal(lines[0], 'gdrgate: memlock is 64 KiB in this job (need >= 8 MiB): RDMA registration will fail (Slurm copied the limit of the shell you submitted from); ask your admin to set PropagateResourceLimitsExcept=MEMLOCK, or submit from a shell with ulimit -l unlimited', 'says 64 KiB and what to ask for');
    tt.same([byAgent(id, from, 'answered'), byAgent(id, from, 'left to gdrgate')], [1, 0], 'the agent judged the batch step\'s view: no Node started in the job');
    viewIs(tt, await viewLine(id, since), { level: 40, uid, state: /^trusted$/, memlock: { soft: 65536, source: /^propagated$/ } }, ['fail job-memlock-propagated', 'skip job-placement-unknown'], 'the admin log (Epilog) has the finding; placement not checked (no GPU asked for)');
    tt.ok(await stateGone(id), 'Epilog removed the job state');
  });

  await t.test('3. a job view without /dev/infiniband: visibility finding', async (tt) => {
    taskConf(`ROOT=${HIDDEN}\n`);
    try {
      const [since, from] = [logLines().length, agentSaid.length];
      const id = submit('case3', 'true');
      tt.equal(await finished(id), 'COMPLETED', `job ${id} COMPLETED`);
      const out = output('case3');
      tt.comment(`job output:\n${out.trimEnd()}`);
      const lines = gdrLines(out);
      tt.equal(lines.length, 1, 'one gdrgate line');
      tt.equal(lines[0], `gdrgate: this job sees 0 of the 4 verbs devices of the host (missing ${[0, 1, 2, 3].map((i) => `/dev/infiniband/uverbs${i}`).join(', ')}): user-space verbs cannot open those adapters: NCCL falls back to TCP sockets; pass the devices into the container (--device /dev/infiniband, or the runtime hook of your site)`, 'names the missing uverbs nodes');
      viewIs(tt, await viewLine(id, since), { level: 40, state: /^trusted$/ }, ['fail job-uverbs-missing', 'skip job-placement-unknown'], 'admin log');
      tt.equal(byAgent(id, from, 'answered'), 1, 'judged by the agent');
    } finally {
      taskConf();
    }
  });

  await t.test("4. another user cannot list or read the job's state; a re-signed record is untrusted", async (tt) => {
    const running = join(JOBS, 'case4.running');
    const go = join(JOBS, 'case4.go');
    const script = [
      `touch ${running}`,
      `i=0; while [ ! -e ${go} ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i+1)); done`, // a bound for a test cut short
      `${NODE} ${FORGE} ${STATE}/job-$SLURM_JOB_ID/prolog.json`,
      'srun -n1 true',
    ].join('; ');
    const since = logLines().length;
    const id = submit('case4', script);
    const started = await waitFor(() => existsSync(running), (v) => v, 30_000);
    tt.ok(started.ok, `job ${id} is running`);
    const dir = join(STATE, `job-${id}`);
    const st = lstatSync(dir);
    tt.equal(st.uid, uid, `job-${id} belongs to ${USER} (uid ${uid}): the Prolog had SLURM_JOB_UID`);
    tt.equal(st.mode & 0o777, 0o700, 'mode 0700');
    tt.equal(lstatSync(STATE).mode & 0o777, 0o711, 'stateDir 0711');
    const nobody = (args: string[]): Ran => run('/usr/sbin/runuser', ['-u', 'nobody', '--', ...args]);
    const ls = nobody(['/bin/ls', dir]);
    tt.not(ls.status, 0, `nobody: ls job-${id} fails`);
    tt.equal(ls.stderr, `/bin/ls: cannot open directory '${dir}': Permission denied\n`, ls.stderr.trim());
    const cat = nobody(['/bin/cat', join(dir, 'prolog.json')]);
    tt.not(cat.status, 0, 'nobody: cat prolog.json fails');
    tt.equal(cat.stderr, `/bin/cat: ${join(dir, 'prolog.json')}: Permission denied\n`, cat.stderr.trim());
    const lsState = nobody(['/bin/ls', STATE]);
    tt.not(lsState.status, 0, 'nobody: cannot list the state directory (no job ids leak)');
    const plant = nobody(['/usr/bin/touch', join(STATE, 'job-999999')]);
    tt.not(plant.status, 0, 'nobody: cannot create a job directory');
    const own = run('/usr/sbin/runuser', ['-u', USER, '--', '/bin/cat', join(dir, 'prolog.json')]);
    tt.equal(own.status, 0, `${USER} (the owner) can read its own record`);
    writeFileSync(go, '');
    tt.equal(await finished(id), 'COMPLETED', `job ${id} COMPLETED`);
    const out = output('case4');
    tt.comment(`job output:\n${out.trimEnd()}`);
    const untrusted = 'gdrgate: the host record for this job is untrusted: prolog.json signature does not verify (changed after the Prolog wrote it, or signed with another key): it is ignored and the job view is checked on its own; do not edit files under the gdrgate state directory; the admin has been told';
    tt.equal(out, `forged ${join(dir, 'prolog.json')}\n${untrusted}\n`, 'the owner replaced prolog.json with a forged, re-signed one');
    const lines = gdrLines(out);
    tt.equal(lines.length, 1, 'the batch step (intact record) was silent; the srun step after the forgery speaks');
    tt.equal(lines[0], untrusted, 'reported as untrusted');
    viewIs(tt, await viewLine(id, since), { level: 40, state: /^untrusted$/ }, ['error job-state-untrusted', 'skip job-placement-unknown'], 'the admin log has it');
    tt.ok(await stateGone(id), 'Epilog removed the job state');
  });

  await t.test('2. PropagateResourceLimitsExcept=MEMLOCK: the job gets slurmd\'s limit, no warning', async (tt) => {
    const t2 = performance.now();
    const re = start(['PropagateResourceLimitsExcept=MEMLOCK']);
    tt.equal(re.status, 0, `sandbox restarted with PropagateResourceLimitsExcept=MEMLOCK (${secs(t2)})`, { stderr: re.stderr.slice(-2000) });
    const since = logLines().length;
    const id = submit('case2', 'grep "Max locked memory" /proc/self/limits', 64);
    tt.equal(await finished(id), 'COMPLETED', `job ${id} COMPLETED`);
    const out = output('case2');
    tt.comment(`job output:\n${out.trimEnd()}`);
    tt.equal(memlockLine(out), `Max locked memory         ${'8388608'.padEnd(21)}${'8388608'.padEnd(21)}bytes     `, "the job has slurmd's 8 MiB although submitted under ulimit -l 64");
    tt.same(gdrLines(out), [], 'no gdrgate line');
    viewIs(tt, await viewLine(id, since), { level: 30, state: /^trusted$/, memlock: { soft: MiB8, hard: MiB8, source: /^self$/ } }, ['skip job-placement-unknown'], 'the TaskProlog ran and found nothing wrong (admin log); placement alone not checked (no GPU asked for)');
  });

  await t.test('5. placement: a GRES GPU, the job bound far from it, near it, and a container view without its PIX adapter', async (tt) => {
    // This machine's own CPU numbers: the tree's node 0 (GPU 0000:18:00.0, mlx5_0) gets the first, node 1 the rest.
    const online = parseCpuList(readFileSync('/sys/devices/system/cpu/online', 'utf8'));
    const cpus = online.ok ? online.value.flatMap(([a, b]) => Array.from({ length: b - a + 1 }, (_, i) => a + i)) : [];
    if (cpus.length < 2) return void tt.skip(`needs 2 CPUs to bind near and far, this machine has ${cpus.join(',')}`, () => {});
    const [near, far] = [cpus[0]!, cpus[1]!];
    const PLACE = await jobRoot({ node: twoSocket([String(near), cpus.slice(1).join(',')]), minors: [] }, join(WORK, 'tree-two-socket'));
    liveProcSelf(PLACE);
    // What the container shows instead: /sys/class/infiniband with mlx5_1 only, /dev/infiniband with uverbs1 only.
    mkdirSync(join(PLACE, 'sys/class/ib-view'));
    symlinkSync(readlinkSync(join(PLACE, 'sys/class/infiniband/mlx5_1')), join(PLACE, 'sys/class/ib-view/mlx5_1'));
    mkdirSync(join(PLACE, 'dev/ib-view'));
    for (const f of ['uverbs1', 'rdma_cm']) writeFileSync(join(PLACE, 'dev/ib-view', f), '', { mode: 0o666 });
    chmodSync(join(PLACE, 'dev/ib-view/uverbs1'), 0o666);
    const cap = gdr(['baseline', 'capture', '--root', PLACE, '--class', 'two-socket', '--match', '*']);
    tt.equal(cap.status, 0, 'baseline captured from the two-socket tree', { stderr: cap.stderr });
    const bl = JSON.parse(cap.stdout) as { classes: { memlockMin: unknown }[] };
    bl.classes[0]!.memlockMin = MiB8;
    writeFileSync(BASELINE, JSON.stringify(bl, null, 2) + '\n', { mode: 0o644 });
    writeFileSync(CONFIG, JSON.stringify({ baseline: BASELINE, root: PLACE, scontrol: '/usr/bin/scontrol', logFile: LOG, stateDir: STATE, spool: join(STATE, '..', 'spool') }, null, 2) + '\n', { mode: 0o644 });
    taskConf(`ROOT=${PLACE}\n`);
    const re = start(['PropagateResourceLimitsExcept=MEMLOCK', 'TaskPlugin=task/affinity'], { SANDBOX_GPUS: '2' });
    tt.equal(re.status, 0, 'sandbox restarted with 2 GRES GPUs and task/affinity', { stderr: re.stderr.slice(-2000) });
    const step = (cpu: number): string => `srun -n1 -c${cpus.length} --cpu-bind=map_cpu:${cpu} grep Cpus_allowed_list /proc/self/status`;
    const bind = (from: string, to: string): string => `mount --bind ${PLACE}/${from} ${PLACE}/${to}`;
    const container = `unshare -Urm sh -c '${bind('sys/class/ib-view', 'sys/class/infiniband')} && ${bind('dev/ib-view', 'dev/infiniband')} && exec ${NODE} ${CLI} task --standalone --config ${CONFIG}'`;
    // A helper step given no GPU, bound where the job's GPU is far: its variables as slurmstepd leaves them.
    const none = `srun -n1 -c${cpus.length} --gres=none --cpu-bind=map_cpu:${far} sh -c 'env | grep -E "^SLURM_(STEP_GPUS|GPUS_ON_NODE|JOB_GPUS|STEP_ID)=" | sort'`;
    const script = [`echo "== gpus $SLURM_JOB_GPUS"`, `echo "== far"`, step(far), `echo "== near"`, step(near), `echo "== none"`, none, `echo "== container"`, container, 'true'].join('; ');
    const [since, from] = [logLines().length, agentSaid.length];
    const id = submit('case5', script, undefined, `--gres=gpu:1 -c ${cpus.length}`);
    tt.equal(await finished(id), 'COMPLETED', `job ${id} COMPLETED`);
    const out = output('case5');
    tt.comment(`job output:\n${out.trimEnd()}`);
    const part = (name: string): string => out.split(/^== /m).find((p) => p.startsWith(name)) ?? '';
    tt.equal(part('gpus'), 'gpus 0\n', 'Slurm gave the job GPU 0 (SLURM_JOB_GPUS=0)');
    tt.same(part('far').split('\n').filter((l) => !l.startsWith('gdrgate: ')), ['far', `Cpus_allowed_list:\t${far}`, ''], `task/affinity really bound the far step to CPU ${far}`);
    tt.same(gdrLines(part('far')), [`gdrgate: this job's CPUs ${far} are all away from GPU 0 (0000:18:00.0), whose local CPUs are ${near}: NCCL keeps this far CPU mask for that GPU, so its proxy threads and host staging cross the socket link (public measurements: about half the bandwidth); ask for CPUs next to your GPUs: srun --gres-flags=enforce-binding, or --cpu-bind=map_cpu:/mask_cpu: with the GPU's local CPUs (the admin can set Cores= in gres.conf)`], 'the far step is told, in one line');
    tt.equal(part('near'), `near\nCpus_allowed_list:\t${near}\n`, `the near step bound to CPU ${near}`);
    tt.same(gdrLines(part('near')), [], 'the near step: nothing');
    const noneOut = part('none');
    tt.same(noneOut.split('\n').filter((l) => l.startsWith('SLURM_')), ['SLURM_JOB_GPUS=0', 'SLURM_STEP_ID=2'], "srun --gres=none: slurmstepd left the job's SLURM_JOB_GPUS and unset SLURM_STEP_GPUS and SLURM_GPUS_ON_NODE");
    tt.same(gdrLines(noneOut), [], 'the step given no GPU: nothing said of GPU 0 (it is bound far from it)');
    const c = part('container');
    tt.same(c.split('\n'), containerView(PLACE), 'the container view names the missing PIX adapter (and its missing uverbs0), not the far adapter it still sees');
    const lines = logLines().slice(since).filter((l) => l.job === id && String(l.msg).startsWith('gdrgate job view'));
    tt.ok(lines.some((l) => JSON.stringify(l.findings).includes('job-cpus-far')), "the Epilog logged the far step's finding for the counts (later steps' TaskProlog kept it in task.json)");
    tt.same([byAgent(id, from, 'answered'), byAgent(id, from, 'left to gdrgate')], [4, 0], 'the agent judged the batch step, both bound steps and the one given no GPU');
    tt.ok(await stateGone(id), 'Epilog removed the job state');
  });
  umountAll();
}
