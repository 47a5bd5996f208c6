// A MIG node under AutoDetect=nvml: slurmd numbers one GPU per MIG instance (Gres=gpu:C, C the instances: 2 GPUs x 7
// here) and CUDA_VISIBLE_DEVICES names MIG-<uuid>: the TaskProlog maps no Slurm number to a GPU there (which GPU an
// instance is, is not derived), so a healthy task is never failed for /dev/nvidia1 nor told it sits away from GPU 1.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { node as TWO } from '../gen/topologies/two-socket-2gpu-2nic.js';
import { reachableBuild, reachableNode, runBuilt, type Ran } from '../helpers/reachable.js';
import { scratchDir } from '../helpers/scratch.js';
import { jobRoot } from './_roots.js';

const USER = 4243;
const work = scratchDir('gdrgate-mig-', '/var/tmp');
fs.chmodSync(work, 0o755);
const CLI = reachableBuild(work);
const NODE = reachableNode(CLI);
t.teardown(() => fs.rmSync(work, { recursive: true, force: true }));
const run = (args: string[], env: Record<string, string>, uid?: number): Ran => runBuilt(NODE, CLI, args, env, uid);
// The step: MIG instance 1 of GPU 0000:18:00.0 (Slurm's index 1 when GPU 0's seven instances come first), bound next to it,
// its container holding /dev/nvidia0 only (and the caps, not judged).
const step = await jobRoot({ node: TWO, minors: [], status: { cpus: '0-3', mems: '0' }, nvidia: ['nvidia-uvm', 'nvidiactl', 'nvidia0'] }, path.join(work, 'step'));
const tree = await jobRoot({ node: TWO, minors: [] }, path.join(work, 'tree'));
fs.mkdirSync(path.join(tree, 'etc/slurm'), { recursive: true });
fs.writeFileSync(path.join(tree, 'etc/slurm/gres.conf'), 'AutoDetect=nvml\n');
fs.writeFileSync(path.join(tree, 'etc/slurm/slurm.conf'), 'NodeName=gpu001 Gres=gpu:14 CPUs=192\n');
const cap = run(['baseline', 'capture', '--root', tree, '--class', 't', '--match', '*'], {});
fs.writeFileSync(path.join(work, 'baseline.json'), cap.stdout);
const scontrol = path.join(work, 'scontrol');
fs.writeFileSync(scontrol, '#!/bin/sh\nexit 1\n', { mode: 0o755 });
const config = path.join(work, 'config.json');
const stateDir = path.join(work, 'run');
fs.writeFileSync(config, JSON.stringify({ baseline: path.join(work, 'baseline.json'), root: tree, scontrol, logFile: path.join(work, 'gate.log'), stateDir }), { mode: 0o644 });
const slurm = (extra: Record<string, string>): Record<string, string> => ({ SLURM_JOB_ID: '96', SLURMD_NODENAME: 'gpu001', ...extra });
t.equal(run(['prolog', '--config', config], slurm({ SLURM_JOB_UID: String(USER), SLURM_JOB_GID: String(USER), SLURM_JOB_USER: 'u', SLURM_SCRIPT_CONTEXT: 'prolog_slurmd', SLURM_JOB_GPUS: '1' })).code, 0, 'prolog');
const r = run(['task', '--config', config, '--root', step, '--fail'], slurm({ SLURM_JOB_GPUS: '1', SLURM_STEP_GPUS: '1', CUDA_VISIBLE_DEVICES: 'MIG-5c7ee1a8-1b6c-5e0d-9f4e-4a4a1d2b7c31', SLURM_LOCALID: '0', SLURM_STEP_ID: '0' }), USER);
t.equal(r.stdout, "", "nor told anything: its placement is not judged (skip)");
t.equal(r.code, 0, 'a healthy MIG task is not failed');
const rec = JSON.parse(fs.readFileSync(path.join(stateDir, 'job-96/task.json'), 'utf8')) as { findings: { status: string; code: string; message: string }[] };
t.strictSame(rec.findings.filter((f) => f.code === 'job-placement-unknown' || f.code === 'job-view-unknown').map((f) => `${f.status} ${f.code}: ${f.message}`).slice(0, 1), ['skip job-view-unknown: which /dev/nvidiaN nodes are this job\'s GPUs cannot be told (not checked): CUDA_VISIBLE_DEVICES names MIG instances: Slurm numbers the MIG instances here, not the GPUs']);
