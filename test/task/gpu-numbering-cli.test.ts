// Slurm's GPU numbers end to end (built CLI, as root and the job's user): the Prolog maps SLURM_JOB_GPUS to bus ids the
// way slurmd numbers GPUs (AutoDetect=nvml: PCI order; File= lines: their order), never as device minors, and the
// TaskProlog judges the task's own SLURM_STEP_GPUS (none for a step Slurm gave none; no GPU order where Slurm numbers
// MIG instances). Node: test/gen/topologies/two-socket-2gpu-2nic.ts with the minors
// swapped (minor 0 = 0000:9a:00.0 on node 1, CPUs 48-95,144-191; minor 1 = 0000:18:00.0 on node 0, CPUs 0-47,96-143).
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { node as TWO } from '../gen/topologies/two-socket-2gpu-2nic.js';
import { reachableBuild, reachableNode, runBuilt, type Ran } from '../helpers/reachable.js';
import { scratchDir } from '../helpers/scratch.js';
import { jobRoot } from './_roots.js';

const isRoot = process.getuid?.() === 0;
const USER = 4243;
let CLI = '';
let NODE = process.execPath;
const run = (args: string[], env: Record<string, string>, uid?: number): Ran => runBuilt(NODE, CLI, args, env, uid);

if (!isRoot) t.skip("Slurm's GPU numbering CLI: needs root (the prolog chowns to the job uid; the task runs as that uid)", () => {});
else await main();

async function main(): Promise<void> {
  const work = scratchDir('gdrgate-gpunum-', '/tmp');
  fs.chmodSync(work, 0o755);
  CLI = reachableBuild(work);
  NODE = reachableNode(CLI);
  t.teardown(() => fs.rmSync(work, { recursive: true, force: true }));
  const tree = await jobRoot({ node: TWO, minors: [1, 0] }, path.join(work, 'tree'));
  // The job's view: bound to node 0 (next to 0000:18:00.0) or node 1 (next to 0000:9a:00.0).
  const near18 = await jobRoot({ node: TWO, minors: [1, 0], status: { cpus: '0-7', mems: '0' } }, path.join(work, 'near18'));
  // gres.conf, and the slurm.conf beside it giving the node its two GPUs (under AutoDetect, Gres=gpu:C decides which
  // GPUs slurmd keeps: without it the order is not derived, and the task's placement only skipped).
  const gres = (text: string): void => {
    fs.mkdirSync(path.join(tree, 'etc/slurm'), { recursive: true });
    fs.writeFileSync(path.join(tree, 'etc/slurm/gres.conf'), text);
    fs.writeFileSync(path.join(tree, 'etc/slurm/slurm.conf'), 'NodeName=gpu001 CPUs=192 Gres=gpu:2\n');
  };
  /** What the task record says of placement: [status, code, subject] of its job-placement findings. */
  const placed = (job: string): [string, string, string][] =>
    (JSON.parse(fs.readFileSync(path.join(stateDir, `job-${job}`, 'task.json'), 'utf8')) as { findings: { status: string; code: string; message: string }[] }).findings
      .filter((f) => f.code.startsWith('job-placement')).map((f) => [f.status, f.code, f.message]);
  const stateDir = path.join(work, 'run');
  const scontrol = path.join(work, 'scontrol');
  fs.writeFileSync(scontrol, '#!/bin/sh\nexit 1\n', { mode: 0o755 });
  const cap = run(['baseline', 'capture', '--root', tree, '--class', 't', '--match', '*'], {});
  t.equal(cap.code, 0, 'baseline captured from the tree', { stderr: cap.stderr });
  fs.writeFileSync(path.join(work, 'baseline.json'), cap.stdout);
  const config = path.join(work, 'config.json');
  fs.writeFileSync(config, JSON.stringify({ baseline: path.join(work, 'baseline.json'), root: tree, scontrol, logFile: path.join(work, 'gate.log'), stateDir, spool: path.join(work, 'spool') }), { mode: 0o644 });
  const slurm = (job: string, extra: Record<string, string>): Record<string, string> => ({ SLURM_JOB_ID: job, SLURMD_NODENAME: 'gpu001', ...extra });
  const prolog = (job: string, gpus: string): Ran =>
    run(['prolog', '--config', config], slurm(job, { SLURM_JOB_UID: String(USER), SLURM_JOB_GID: String(USER), SLURM_JOB_USER: 'u', SLURM_SCRIPT_CONTEXT: 'prolog_slurmd', SLURM_JOB_GPUS: gpus }));
  const task = (job: string, view: string, extra: Record<string, string>): Ran => run(['task', '--config', config, '--root', view, '--fail'], slurm(job, extra), USER);

  await t.test("AutoDetect=nvml: SLURM_JOB_GPUS=0 is the PCI-first GPU 0000:18:00.0 (minor 1): bound next to it, nothing to say", async (t) => {
    gres('AutoDetect=nvml\n');
    t.equal(prolog('81', '0').code, 0, 'prolog exit 0');
    const r = task('81', near18, { SLURM_JOB_GPUS: '0', SLURM_STEP_GPUS: '0', CUDA_VISIBLE_DEVICES: '0', SLURM_LOCALID: '0' });
    t.same([r.code, r.stdout], [0, ''], 'exit 0, no print line (before: CPUs and memory "away from GPU 0 (0000:9a:00.0)")');
    t.same(placed('81'), [['pass', 'job-placement-ok', "this job's CPUs 0-7 and memory nodes 0 are near its GPUs 0=0000:18:00.0"]], 'judged, not skipped (before: skip, the order not derived without slurm.conf)');
  });

  await t.test('File= lines (AutoDetect off): the lines beginning with Name= come first, so 0 is /dev/nvidia1 = 0000:18:00.0', async (t) => {
    gres('NodeName=gpu001 Name=gpu File=/dev/nvidia0\nName=gpu File=/dev/nvidia1\n');
    t.equal(prolog('82', '0').code, 0, 'prolog exit 0');
    const r = task('82', near18, { SLURM_JOB_GPUS: '0', SLURM_LOCALID: '0' });
    t.same([r.code, r.stdout], [0, ''], 'exit 0, no print line');
    t.same(placed('82'), [['pass', 'job-placement-ok', "this job's CPUs 0-7 and memory nodes 0 are near its GPUs 0=0000:18:00.0"]], 'judged, not skipped (before: skip, the order not derived without slurm.conf)');
  });

  await t.test("SLURM_STEP_GPUS=1 of the job's 0,1: the task's GPU is judged; the other GPU's node absent from its container is fine", async (t) => {
    gres('AutoDetect=nvml\n');
    t.equal(prolog('83', '0,1').code, 0, 'prolog exit 0');
    // Slurm's GPU 1 (AutoDetect=nvml) = 0000:9a:00.0 = /dev/nvidia0, node 1: the container holds only its node.
    const step = await jobRoot({ node: TWO, minors: [1, 0], status: { cpus: '48-55', mems: '1' }, nvidia: ['nvidia-uvm', 'nvidiactl', 'nvidia0'] }, path.join(work, 'step'));
    const r = task('83', step, { SLURM_JOB_GPUS: '0,1', SLURM_STEP_GPUS: '1', CUDA_VISIBLE_DEVICES: '0', SLURM_LOCALID: '0' });
    t.same([r.code, r.stdout], [0, ''], 'exit 0 under --fail, no job-cpus-far, no job-gpu-missing');
  });

  await t.test('a step Slurm gave no GPU (srun --gres=none: SLURM_STEP_GPUS and SLURM_GPUS_ON_NODE unset; NoDevFiles or empty before) uses none of the job\'s', async (t) => {
    gres('AutoDetect=nvml\n');
    t.equal(prolog('84', '0,1').code, 0, 'prolog exit 0');
    // A CPU-only helper step in a container without /dev/nvidia*, bound to node 0.
    const cpuOnly = await jobRoot({ node: TWO, minors: [1, 0], status: { cpus: '0-3', mems: '0' }, nvidia: [] }, path.join(work, 'cpu-only'));
    for (const v of ['NoDevFiles', '']) {
      const r = task('84', cpuOnly, { SLURM_JOB_GPUS: '0,1', SLURM_STEP_GPUS: v, CUDA_VISIBLE_DEVICES: v, SLURM_LOCALID: '0', SLURM_STEP_ID: '1' });
      t.same([r.code, r.stdout], [0, ''], `${JSON.stringify(v)}: not failed for GPUs it was never given, nor told its CPUs are away from them`);
    }
    // Slurm 22.05 on (gres_common_gpu_set_env): both step variables unset in an ordinary step; SLURM_JOB_GPUS inherited.
    const none = task('84', cpuOnly, { SLURM_JOB_GPUS: '0,1', SLURM_LOCALID: '0', SLURM_STEP_ID: '2' });
    t.same([none.code, none.stdout], [0, ''], 'SLURM_STEP_GPUS and SLURM_GPUS_ON_NODE unset in step 2: no GPU of the job is asked of it');
    const batch = task('84', cpuOnly, { SLURM_JOB_GPUS: '0,1', SLURM_GPUS_ON_NODE: '2', SLURM_LOCALID: '0' });
    t.equal(batch.code, 1, "SLURM_STEP_GPUS unset, SLURM_GPUS_ON_NODE=2 (the batch step): the job's GPUs, whose device nodes that container lacks");
    const interactive = task('84', cpuOnly, { SLURM_JOB_GPUS: '0,1', SLURM_LOCALID: '0', SLURM_STEP_ID: '4294967290' });
    t.equal(interactive.code, 1, "the interactive step (SLURM_STEP_ID 0xfffffffa) without SLURM_GPUS_ON_NODE: still the job's GPUs");
  });

  await t.test("a container holding only the adapter next to the job's GPU (enroot MELLANOX_VISIBLE_DEVICES): not failed for the other", async (t) => {
    gres('AutoDetect=nvml\n');
    t.equal(prolog('86', '0').code, 0, 'prolog exit 0');
    const ibdev = (u: string): string => fs.readFileSync(path.join(tree, 'sys/class/infiniband_verbs', u, 'ibdev'), 'utf8');
    t.same([ibdev('uverbs0'), ibdev('uverbs1')], ['mlx5_0\n', 'mlx5_1\n'], 'uverbs0 is mlx5_0 (PIX to 0000:18:00.0), uverbs1 mlx5_1 (SYS)');
    const view = (name: string, uverbs: string[]): Promise<string> => jobRoot({ node: TWO, minors: [1, 0], status: { cpus: '0-7', mems: '0' }, uverbs, nvidia: ['nvidia-uvm', 'nvidiactl', 'nvidia1'] }, path.join(work, name));
    const env = { SLURM_JOB_GPUS: '0', SLURM_STEP_GPUS: '0', SLURM_GPUS_ON_NODE: '1', CUDA_VISIBLE_DEVICES: '0', SLURM_LOCALID: '0', SLURM_STEP_ID: '0' };
    const own = task('86', await view('own-nic', ['uverbs0']), env);
    t.same([own.code, own.stdout], [0, ''], 'only uverbs0 (mlx5_0, next to GPU 0): exit 0 under --fail, nothing said');
    const seen = (JSON.parse(fs.readFileSync(path.join(stateDir, 'job-86', 'task.json'), 'utf8')) as { findings: { code: string; message: string }[] }).findings.filter((f) => f.code === 'job-visibility-ok').map((f) => f.message);
    t.same(seen, ['this job sees 2 RDMA adapters, 1 verbs devices, 3 NVIDIA device nodes; not mlx5_1, next to none of its GPUs (next to them: mlx5_0)'], 'the pass names the adapter not required');
    const far = task('86', await view('far-nic', ['uverbs1']), { ...env, SLURM_STEP_ID: '1' });
    t.same(far.code, 1, 'only uverbs1 (mlx5_1, away from GPU 0): failed');
    const codes = (JSON.parse(fs.readFileSync(path.join(stateDir, 'job-86', 'task.json'), 'utf8')) as { findings: { code: string; status: string; message: string }[] }).findings.filter((f) => f.status === 'fail').map((f) => [f.code, f.message]);
    t.same(codes, [
      ['job-uverbs-missing', 'this job sees 1 of the 2 verbs devices of the host (missing /dev/infiniband/uverbs0, of the adapters next to its GPUs or of one the record does not place)'],
      ['job-nic-hidden', 'this job cannot use mlx5_0 (no usable /dev/infiniband/uverbs0), the PIX adapter next to GPU 0 (0000:18:00.0)'],
    ], 'the adapter next to its GPU missing: both findings');
  });

  await t.test("MIG (AutoDetect=nvml, Gres=gpu:14 over 2 GPUs; CUDA_VISIBLE_DEVICES=MIG-…): Slurm's 1 is an instance, not GPU 1", async (t) => {
    gres('AutoDetect=nvml\n');
    fs.writeFileSync(path.join(tree, 'etc/slurm/slurm.conf'), 'NodeName=gpu001 Gres=gpu:14 CPUs=192\n');
    t.equal(prolog('85', '1').code, 0, 'prolog exit 0');
    // Instance 1 of the PCI-first GPU 0000:18:00.0 (/dev/nvidia1, node 0): its container holds that node, bound next to it.
    const mig = await jobRoot({ node: TWO, minors: [1, 0], status: { cpus: '0-3', mems: '0' }, nvidia: ['nvidia-uvm', 'nvidiactl', 'nvidia1'] }, path.join(work, 'mig'));
    const r = task('85', mig, { SLURM_JOB_GPUS: '1', SLURM_STEP_GPUS: '1', CUDA_VISIBLE_DEVICES: 'MIG-5c7ee1a8-1b6c-5e0d-9f4e-4a4a1d2b7c31', SLURM_LOCALID: '0', SLURM_STEP_ID: '0' });
    t.same([r.code, r.stdout], [0, ''], 'exit 0 under --fail: no job-gpu-missing for /dev/nvidia0, no job-cpus-far');
    const rec = JSON.parse(fs.readFileSync(path.join(stateDir, 'job-85/task.json'), 'utf8')) as { findings: { status: string; code: string; message: string }[] };
    t.equal(rec.findings.find((f) => f.code === 'job-view-unknown')?.message, "which /dev/nvidiaN nodes are this job's GPUs cannot be told (not checked): CUDA_VISIBLE_DEVICES names MIG instances: Slurm numbers the MIG instances here, not the GPUs");
    // One GPU whole and the other in 7 instances (Gres=gpu:8): Slurm names the whole GPU by its index, the instance by
    // its MIG UUID, so the list need not begin with MIG-.
    fs.writeFileSync(path.join(tree, 'etc/slurm/slurm.conf'), 'NodeName=gpu001 Gres=gpu:8 CPUs=192\n');
    t.equal(prolog('87', '0,1').code, 0, 'prolog exit 0');
    const mixed = task('87', mig, { SLURM_JOB_GPUS: '0,1', SLURM_STEP_GPUS: '0,1', CUDA_VISIBLE_DEVICES: '0,MIG-5c7ee1a8-1b6c-5e0d-9f4e-4a4a1d2b7c31', SLURM_LOCALID: '0', SLURM_STEP_ID: '0' });
    t.same([mixed.code, mixed.stdout], [0, ''], 'a MIG instance second in CUDA_VISIBLE_DEVICES: exit 0 under --fail');
    const rec87 = JSON.parse(fs.readFileSync(path.join(stateDir, 'job-87/task.json'), 'utf8')) as { findings: { status: string; code: string; message: string }[] };
    t.same(rec87.findings.filter((f) => f.status !== 'pass').map((f) => [f.status, f.code, f.message]), [
      ['skip', 'job-view-unknown', "which /dev/nvidiaN nodes are this job's GPUs cannot be told (not checked): CUDA_VISIBLE_DEVICES names MIG instances: Slurm numbers the MIG instances here, not the GPUs"],
      ['skip', 'job-placement-unknown', "not checked: which GPUs Slurm's SLURM_STEP_GPUS=0,1 are cannot be told: CUDA_VISIBLE_DEVICES names MIG instances: Slurm numbers the MIG instances here, not the GPUs"],
    ], 'Slurm\'s numbers not taken for GPUs');
  });
}
