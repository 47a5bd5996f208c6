// The built CLI end to end without Slurm: `gdrgate prolog` records the job's state, `gdrgate task` (as the
// job's user, with Slurm's TaskProlog environment) prints TaskProlog lines and leaves task.json, `gdrgate
// epilog` logs it and removes the directory. Fixture roots from test/gen + hand-written /dev.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { reachableBuild, reachableNode, runBuilt, type Ran } from '../helpers/reachable.js';
import { jobRoot } from './_roots.js';
import { scratchDir } from '../helpers/scratch.js';

const isRoot = process.getuid?.() === 0;
const USER = 4242; // need not exist: root can setuid to any number
const MiB8 = 8 * 1024 * 1024;
const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const NO_GPUS = "not checked: no SLURM_JOB_GPUS (the job asked for no GPU, or Slurm did not say which it has), so this job's CPUs, memory and adapters are not compared with its GPUs";
const MEMLOCK_PRINT = 'print gdrgate: memlock is 64 KiB in this job (need >= 8 MiB): RDMA registration will fail (Slurm copied the limit of the shell you submitted from); ask your admin to set PropagateResourceLimitsExcept=MEMLOCK, or submit from a shell with ulimit -l unlimited';
/** The build as copied under the test's directory: the job user cannot traverse a checkout under a 0700 home. */
let CLI = '';
/** A Node the job user can start (the project's own lies in the clone, which may be under a 0700 home). */
let NODE = process.execPath;

/** The reachable build as Slurm starts it (test/helpers/reachable.ts runBuilt). */
const run = (args: string[], env: Record<string, string>, uid?: number): Ran => runBuilt(NODE, CLI, args, env, uid);

if (!isRoot) t.skip('task CLI: needs root (the prolog chowns to the job uid; the task runs as that uid)', () => {});
else await main();

async function main(): Promise<void> {
  const work = scratchDir('gdrgate-taskcli-', '/tmp');
  fs.chmodSync(work, 0o755); // the job user must reach the config, the trees and the build
  CLI = reachableBuild(work);
  NODE = reachableNode(CLI);
  t.teardown(() => fs.rmSync(work, { recursive: true, force: true }));
  const tree = await jobRoot({}, path.join(work, 'tree'));
  const hidden = await jobRoot({ uverbs: null }, path.join(work, 'tree-hidden'));
  const stateDir = path.join(work, 'run');
  const log = path.join(work, 'gate.log');
  const scontrol = path.join(work, 'scontrol');
  fs.writeFileSync(scontrol, '#!/bin/sh\nexit 1\n', { mode: 0o755 });
  const cap = run(['baseline', 'capture', '--root', tree, '--class', 't', '--match', '*'], {});
  t.equal(cap.code, 0, 'baseline captured from the tree', { stderr: cap.stderr });
  const baseline = JSON.parse(cap.stdout) as { classes: { memlockMin: unknown }[] };
  baseline.classes[0]!.memlockMin = MiB8;
  const bfile = path.join(work, 'baseline.json');
  fs.writeFileSync(bfile, JSON.stringify(baseline));
  const config = path.join(work, 'config.json');
  fs.writeFileSync(config, JSON.stringify({ baseline: bfile, root: tree, scontrol, logFile: log, stateDir, spool: path.join(path.dirname(stateDir), 'spool') }), { mode: 0o644 });
  const slurm = (job: string, extra: Record<string, string> = {}): Record<string, string> => ({ SLURM_JOB_ID: job, SLURMD_NODENAME: 'gpu001', ...extra });
  const prolog = (job: string, extra: Record<string, string> = {}): Ran =>
    run(['prolog', '--config', config], { ...slurm(job, { SLURM_JOB_UID: String(USER), SLURM_JOB_GID: String(USER), SLURM_JOB_USER: 'u', SLURM_SCRIPT_CONTEXT: 'prolog_slurmd' }), ...extra });
  const task = (job: string, args: string[] = [], extra: Record<string, string> = {}): Ran => run(['task', '--config', config, ...args], slurm(job, extra), USER);
  const logLines = (): string => (fs.existsSync(log) ? fs.readFileSync(log, 'utf8') : '');

  await t.test('prolog records the state, the task finds nothing wrong', async (t) => {
    const p = prolog('77', { SLURM_JOB_GPUS: '1' });
    t.equal(p.code, 0, 'prolog exit 0', { stdout: p.stdout, stderr: p.stderr });
    const dir = path.join(stateDir, 'job-77');
    t.equal(fs.lstatSync(dir).uid, USER, 'job-77 handed to the job user');
    const r = task('77');
    t.equal(r.code, 0, 'task exit 0', { stderr: r.stderr });
    t.equal(r.stdout, '', 'no print line: nothing to tell the user');
    const { time, ...rec } = JSON.parse(fs.readFileSync(path.join(dir, 'task.json'), 'utf8')) as Record<string, unknown>;
    t.match(time, ISO_TIME);
    const noGpu = 'no /proc/driver/nvidia/gpus: no GPU to number';
    t.same(rec, {
      format: 'gdrgate-task-state/1', job: '77', step: 'batch', uid: USER, node: 'gpu001', state: 'trusted', memlock: { soft: 'unlimited', hard: 'unlimited', source: 'self' },
      findings: [
        { code: 'job-view-unknown', status: 'skip', subject: '/dev', message: `which /dev/nvidiaN nodes are this job's GPUs cannot be told (not checked): ${noGpu}` },
        { code: 'job-placement-unknown', status: 'skip', subject: 'job', message: `not checked: which GPUs Slurm's SLURM_JOB_GPUS=1 are cannot be told: ${noGpu}` },
        { code: 'job-memlock-ok', status: 'pass', subject: 'job', message: 'memlock is unlimited in this job' },
        { code: 'job-state-ok', status: 'pass', subject: 'prolog.json', message: 'host record of job 77 verifies' },
      ],
    }, 'task.json left for the epilog');
  });

  await t.test('ulimit -l 64 propagated: the print line, --fail fails the task', async (t) => {
    t.equal(prolog('78').code, 0, 'prolog');
    const r = task('78', [], { SLURM_RLIMIT_MEMLOCK: '65536' });
    t.equal(r.code, 0, 'warn only by default');
    t.equal(
      r.stdout,
      'print gdrgate: memlock is 64 KiB in this job (need >= 8 MiB): RDMA registration will fail (Slurm copied the limit of the shell you submitted from); ask your admin to set PropagateResourceLimitsExcept=MEMLOCK, or submit from a shell with ulimit -l unlimited\n',
      'exactly one TaskProlog print line',
    );
    t.equal(task('78', ['--fail'], { SLURM_RLIMIT_MEMLOCK: '65536' }).code, 1, '--fail: exit 1');
    t.equal(task('78', [], { SLURM_RLIMIT_MEMLOCK: '65536', SLURM_LOCALID: '3' }).stdout, '', 'other local tasks stay quiet');
    const e = run(['epilog', '--config', config], slurm('78', { SLURM_SCRIPT_CONTEXT: 'epilog_slurmd' }));
    t.equal(e.code, 0, 'epilog exit 0', { stderr: e.stderr });
    t.equal(e.stdout, 'gdrgate epilog node=gpu001 job=78 view=trusted findings=job-memlock-propagated removed=true aer=ok\n', e.stdout.trim());
    t.notOk(fs.existsSync(path.join(stateDir, 'job-78')), 'job-78 removed');
    const line = logLines().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === 'gdrgate job view' && l.job === '78');
    const { time, pid, ...logged } = line ?? {};
    t.match({ time, pid }, { time: ISO_TIME, pid: Number });
    t.same(logged, {
      level: 40, tool: 'gdrgate', job: '78', node: 'gpu001', uid: USER, step: 'batch', state: 'trusted', memlock: { soft: 65536, hard: 'unlimited', source: 'propagated' }, ncclTopo: false,
      findings: [
        { code: 'job-memlock-propagated', status: 'fail', subject: 'job', message: 'memlock is 64 KiB in this job' },
        { code: 'job-placement-unknown', status: 'skip', subject: 'job', message: NO_GPUS },
      ],
      msg: 'gdrgate job view',
    }, 'the admin log has it');
    t.same((line?.findings as { code: string; status: string }[]).map((f) => `${f.status} ${f.code}`), ['fail job-memlock-propagated', 'skip job-placement-unknown'], 'the finding, and placement not checked (no SLURM_JOB_GPUS)');
  });

  await t.test("a later step without the finding keeps an earlier step's in task.json (the Epilog counts the job's)", async (t) => {
    t.equal(prolog('82').code, 0, 'prolog');
    t.equal(task('82', [], { SLURM_RLIMIT_MEMLOCK: '65536', SLURM_STEP_ID: '0' }).stdout, `${MEMLOCK_PRINT}\n`, 'step 0 is told');
    t.equal(task('82', [], { SLURM_STEP_ID: '1' }).stdout, '', 'step 1 has nothing to say');
    const rec = JSON.parse(fs.readFileSync(path.join(stateDir, 'job-82', 'task.json'), 'utf8')) as { step: string; findings: { code: string }[] };
    t.equal(rec.step, '1', "task.json is step 1's");
    t.ok(rec.findings.some((f) => f.code === 'job-memlock-propagated'), "and still holds step 0's finding");
  });

  await t.test("an earlier step's passes are not kept beside a later step's findings: only what the later step did not meet again", async (t) => {
    t.equal(prolog('88').code, 0, 'prolog');
    t.equal(task('88', [], { SLURM_STEP_ID: '0' }).stdout, '', 'step 0: memlock unlimited, nothing to tell');
    t.equal(task('88', [], { SLURM_RLIMIT_MEMLOCK: '65536', SLURM_STEP_ID: '1' }).stdout, `${MEMLOCK_PRINT}\n`, 'step 1 is told');
    const rec = JSON.parse(fs.readFileSync(path.join(stateDir, 'job-88', 'task.json'), 'utf8')) as { step: string; findings: { status: string; code: string }[] };
    t.same([rec.step, rec.findings.map((f) => `${f.status} ${f.code}`)], ['1', ['fail job-memlock-propagated', 'skip job-placement-unknown', 'pass job-visibility-ok', 'pass job-state-ok']], "step 1's findings alone: step 0's job-memlock-ok is not kept beside job-memlock-propagated");
  });

  await t.test('a job view without /dev/infiniband', async (t) => {
    t.equal(prolog('79').code, 0, 'prolog (host tree has 4 uverbs nodes)');
    const r = task('79', ['--root', hidden]);
    t.equal(r.code, 0);
    t.equal(r.stdout, 'print gdrgate: this job sees 0 of the 4 verbs devices of the host (missing /dev/infiniband/uverbs0, /dev/infiniband/uverbs1, /dev/infiniband/uverbs2, /dev/infiniband/uverbs3): user-space verbs cannot open those adapters: NCCL falls back to TCP sockets; pass the devices into the container (--device /dev/infiniband, or the runtime hook of your site)\n', r.stdout.trim());
  });

  await t.test('a forged state is reported, never trusted', async (t) => {
    t.equal(prolog('80').code, 0, 'prolog');
    const file = path.join(stateDir, 'job-80', 'prolog.json');
    const env = JSON.parse(fs.readFileSync(file, 'utf8')) as { payload: string };
    fs.rmSync(file);
    fs.writeFileSync(file, JSON.stringify({ ...env, payload: env.payload.replace('"memlockMin":8388608', '"memlockMin":1') }));
    const r = task('80', [], { SLURM_RLIMIT_MEMLOCK: '65536' });
    const lines = r.stdout.trim().split('\n');
    t.same(lines, [
      'print gdrgate: memlock is 64 KiB in this job (need >= 8 MiB): RDMA registration will fail (Slurm copied the limit of the shell you submitted from); ask your admin to set PropagateResourceLimitsExcept=MEMLOCK, or submit from a shell with ulimit -l unlimited',
      'print gdrgate: the host record for this job is untrusted: prolog.json signature does not verify (changed after the Prolog wrote it, or signed with another key): it is ignored and the job view is checked on its own; do not edit files under the gdrgate state directory; the admin has been told',
    ]);
    t.comment('the minimum came from the baseline the user can read, not from the untrusted record');
    t.equal(task('80', ['--fail']).code, 0, '--fail: an untrusted record alone never fails the task');
    t.equal(task('80', ['--fail'], { SLURM_RLIMIT_MEMLOCK: '65536' }).code, 1, '--fail: the memlock finding does');
  });

  await t.test('prolog: state failures never change its exit code', async (t) => {
    const before = logLines().length;
    const p = prolog('81', { SLURM_JOB_UID: '' });
    t.equal(p.code, 0, 'no SLURM_JOB_UID: prolog still exit 0');
    const { time, pid, ...logged } = JSON.parse(logLines().slice(before).split('\n')[0]!) as Record<string, unknown>;
    t.match({ time, pid }, { time: ISO_TIME, pid: Number });
    t.same(logged, { level: 40, tool: 'gdrgate', node: 'gpu001', job: '81', why: 'SLURM_JOB_UID "" is not a uid', msg: 'per-job state not written; the TaskProlog will report it missing' }, 'logged');
    t.notOk(fs.existsSync(path.join(stateDir, 'job-81')), 'nothing written');
    t.equal(prolog('../../etc', {}).code, 0, 'malformed job id: exit 0');
    const r = task('81');
    t.same(r, { code: 0, stdout: '', stderr: '' }, 'the task without a record: quiet (skip), exit 0');
  });

  await t.test('usage', async (t) => {
    const r = run(['task', '--config', config], {}, USER);
    t.equal(r.code, 2, 'outside a job without --standalone: exit 2');
    t.equal(r.stderr, 'gdrgate: not inside a Slurm job (SLURM_JOB_ID unset or malformed); run it by hand with --standalone\n');
    const ok = run(['task', '--standalone', '--root', tree], {});
    t.equal(ok.code, 0, 'standalone on the full tree: exit 0', { stdout: ok.stdout });
    t.equal(ok.stdout, [
      `gdrgate task --standalone — root ${tree}, host vm, memlock minimum unlimited (default (no baseline))`,
      'STATUS  CHECK           SUBJECT  FINDING',
      `SKIP    job-placement   job      ${NO_GPUS}`,
      'PASS    memlock-limit   job      memlock is unlimited in this job',
      'PASS    job-visibility  job      this job sees 4 RDMA adapters, 4 verbs devices, 7 NVIDIA device nodes',
      'result: ok (exit 0) — 0 fail, 0 error, 0 warn, 2 pass, 1 skip',
      '',
    ].join('\n'));
    const bad = run(['task', '--standalone', '--root', hidden], {});
    t.equal(bad.code, 1, 'standalone without /dev/infiniband: exit 1');
    t.equal(bad.stdout, [
      `gdrgate task --standalone — root ${hidden}, host vm, memlock minimum unlimited (default (no baseline))`,
      'STATUS  CHECK           SUBJECT          FINDING',
      'FAIL    job-visibility  /dev/infiniband  the kernel has verbs devices uverbs0, uverbs1, uverbs2, uverbs3 (/sys/class/infiniband_verbs) but this job has no /dev/infiniband node for them (want uverbs0, uverbs1, uverbs2, uverbs3)',
      '                                         tells: user-space verbs cannot open those adapters: NCCL falls back to TCP sockets',
      '                                         do:    pass the devices into the container (--device /dev/infiniband, or the runtime hook of your site) [application]',
      `SKIP    job-placement   job              ${NO_GPUS}`,
      'PASS    memlock-limit   job              memlock is unlimited in this job',
      'result: problems found (exit 1) — 1 fail, 0 error, 0 warn, 1 pass, 1 skip',
      '',
    ].join('\n'));
    const noRdma = await jobRoot({ hideHcas: true }, path.join(work, 'tree-no-rdma'));
    const warned = run(['task', '--standalone', '--root', noRdma], {});
    t.same([warned.code, warned.stdout], [1, [
      `gdrgate task --standalone — root ${noRdma}, host vm, memlock minimum unlimited (default (no baseline))`,
      'STATUS  CHECK           SUBJECT                FINDING',
      'WARN    job-visibility  /sys/class/infiniband  no RDMA adapter is visible (/sys/class/infiniband is empty or absent)',
      '                                               tells: GPUDirect RDMA and NCCL over InfiniBand/RoCE are impossible from this environment',
      '                                               do:    run on a node with RDMA adapters and make /sys/class/infiniband and /dev/infiniband visible to the container [application]',
      `SKIP    job-placement   job                    ${NO_GPUS}`,
      'PASS    memlock-limit   job                    memlock is unlimited in this job',
      'result: problems found (exit 1) — 0 fail, 0 error, 1 warn, 1 pass, 1 skip',
      '',
    ].join('\n')], 'standalone with a warning alone (no /sys/class/infiniband): exit 1, as a person running it by hand is told');
  });
}
