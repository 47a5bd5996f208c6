// A step of a GPU job that Slurm gave no GPU (srun --gres=none / --gpus=0: SLURM_STEP_GPUS and CUDA_VISIBLE_DEVICES
// "NoDevFiles", gres_common.c; or set empty) uses no GPU: never failed for the job's GPUs it was not given (a CPU-only
// helper step in a container without /dev/nvidia*). And a GPU list a job can write (its facts reach the agent) is bounded.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { node as TWO } from '../gen/topologies/two-socket-2gpu-2nic.js';
import { reachableBuild, reachableNode, runBuilt, type Ran } from '../helpers/reachable.js';
import { scratchDir } from '../helpers/scratch.js';
import { jobRoot } from './_roots.js';
import { MAX_GPU_IDS, parseJobGpus } from '../../src/state/prolog.js';
import { parseStepGpus, selectGpus } from '../../src/task/placement.js';

const USER = 4243;
const work = scratchDir('gdrgate-stepgpus-', '/var/tmp');
fs.chmodSync(work, 0o755);
const CLI = reachableBuild(work);
const NODE = reachableNode(CLI);
t.teardown(() => fs.rmSync(work, { recursive: true, force: true }));
const run = (args: string[], env: Record<string, string>, uid?: number): Ran => runBuilt(NODE, CLI, args, env, uid);
// A CPU-only helper step of that job, in a container without GPUs (no /dev/nvidia*), bound to socket 0.
const step = await jobRoot({ node: TWO, minors: [], status: { cpus: '0-3', mems: '0' }, nvidia: [] }, path.join(work, 'step'));
const tree = await jobRoot({ node: TWO, minors: [] }, path.join(work, 'tree'));
fs.mkdirSync(path.join(tree, 'etc/slurm'), { recursive: true });
fs.writeFileSync(path.join(tree, 'etc/slurm/gres.conf'), 'Name=gpu File=/dev/nvidia[0-1]\n');
const cap = run(['baseline', 'capture', '--root', tree, '--class', 't', '--match', '*'], {});
fs.writeFileSync(path.join(work, 'baseline.json'), cap.stdout);
const scontrol = path.join(work, 'scontrol');
fs.writeFileSync(scontrol, '#!/bin/sh\nexit 1\n', { mode: 0o755 });
const config = path.join(work, 'config.json');
fs.writeFileSync(config, JSON.stringify({ baseline: path.join(work, 'baseline.json'), root: tree, scontrol, logFile: path.join(work, 'gate.log'), stateDir: path.join(work, 'run') }), { mode: 0o644 });
const slurm = (extra: Record<string, string>): Record<string, string> => ({ SLURM_JOB_ID: '95', SLURMD_NODENAME: 'gpu001', ...extra });
t.equal(run(['prolog', '--config', config], slurm({ SLURM_JOB_UID: String(USER), SLURM_JOB_GID: String(USER), SLURM_JOB_USER: 'u', SLURM_SCRIPT_CONTEXT: 'prolog_slurmd', SLURM_JOB_GPUS: '0,1' })).code, 0, 'prolog: job 95 holds GPUs 0,1');
for (const v of ['NoDevFiles', '']) {
  t.test(`SLURM_STEP_GPUS=${JSON.stringify(v)}`, async (t) => {
    const r = run(['task', '--config', config, '--root', step, '--fail'], slurm({ SLURM_JOB_GPUS: '0,1', SLURM_STEP_GPUS: v, CUDA_VISIBLE_DEVICES: v, SLURM_LOCALID: '0', SLURM_STEP_ID: '1' }), USER);

    t.equal(r.code, 0, 'a step without GPUs is not failed for GPUs it was never given');
    t.equal(r.stdout, '', 'nor told its CPUs are away from them');
  });
}

t.test('SLURM_STEP_GPUS unset: the job\'s GPUs, as before (the batch step)', async (t) => {
  const r = run(['task', '--config', config, '--root', step, '--fail'], slurm({ SLURM_JOB_GPUS: '0,1', SLURM_LOCALID: '0', SLURM_STEP_ID: '1' }), USER);
  t.equal(r.code, 1, 'the container shows no /dev/nvidia* for the GPUs the job holds: failed under --fail');
});

t.test('a GPU list is parsed once per id and bounded; the step set against the job by membership', async (t) => {
  t.strictSame(parseJobGpus('3,1,3,0'), [3, 1, 0]);
  t.strictSame(parseStepGpus('NoDevFiles'), []);
  t.strictSame(parseStepGpus(''), []);
  t.equal(parseStepGpus(undefined), null);
  const long = Array.from({ length: MAX_GPU_IDS + 1 }, (_, i) => i % 10000).join(',');
  t.equal(parseJobGpus(long), null, `${MAX_GPU_IDS + 1} ids: no list of Slurm's`);
  t.equal(parseJobGpus(Array.from({ length: 60_000 }, (_, i) => i % 10000).join(',')), null, 'the 240 KB list of a job user\'s facts: refused before it is split');
  t.strictSame(parseJobGpus(Array.from({ length: MAX_GPU_IDS }, (_, i) => i).join(','))?.length, MAX_GPU_IDS);
  t.equal(selectGpus([0, 1], [], true), null, 'a step given no GPU uses none');
  t.strictSame(selectGpus([0, 1], [1], true), { ids: [1], from: 'SLURM_STEP_GPUS' });
  t.strictSame(selectGpus([0, 1], [2], true), { ids: [0, 1], from: 'SLURM_JOB_GPUS' }, 'never a GPU not the job\'s');
});
