// Which GPUs a task is judged for when no trusted Prolog record says (built CLI, as the job's user): an ordinary step's
// SLURM_STEP_GPUS is this node's (slurmstepd sets it per node), never swapped for the SLURM_JOB_GPUS the step inherited
// from the batch step's node; and the minors this job's /proc/driver/nvidia/gpus shows (a container's subset: nvidia-
// container-cli binds only its GPUs' directories) number Slurm's GPUs only where every number Slurm names is among them.
// Node: test/gen/topologies/dgx1v-8xv100-4nic.ts (GPUs 06,07,0a,0b:00.0 on NUMA node 0, CPUs 0-19,40-59; 85,86,89,8a on node 1).
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { node as DGX1 } from '../gen/topologies/dgx1v-8xv100-4nic.js';
import { reachableBuild, reachableNode, runBuilt, type Ran } from '../helpers/reachable.js';
import { scratchDir } from '../helpers/scratch.js';
import { jobRoot } from './_roots.js';

const isRoot = process.getuid?.() === 0;
const USER = 4244;
let CLI = '';
let NODE = process.execPath;
const run = (args: string[], env: Record<string, string>, uid?: number): Ran => runBuilt(NODE, CLI, args, env, uid);

if (!isRoot) t.skip('GPUs of a task without a record: needs root (the task runs as the job uid)', () => {});
else await main();

async function main(): Promise<void> {
  const work = scratchDir('gdrgate-norec-', '/tmp');
  fs.chmodSync(work, 0o755);
  CLI = reachableBuild(work);
  NODE = reachableNode(CLI);
  t.teardown(() => fs.rmSync(work, { recursive: true, force: true }));
  const tree = await jobRoot({ node: DGX1, minors: [] }, path.join(work, 'tree'));
  const cap = run(['baseline', 'capture', '--root', tree, '--class', 't', '--match', '*'], {});
  t.equal(cap.code, 0, 'baseline captured from the tree', { stderr: cap.stderr });
  fs.writeFileSync(path.join(work, 'baseline.json'), cap.stdout);
  const config = path.join(work, 'config.json');
  // No Prolog ran: the state directory holds no record of the job.
  fs.writeFileSync(config, JSON.stringify({ baseline: path.join(work, 'baseline.json'), stateDir: path.join(work, 'run'), spool: path.join(work, 'spool') }), { mode: 0o644 });
  const task = (view: string, env: Record<string, string>): Ran => run(['task', '--config', config, '--root', view, '--standalone'], { SLURM_JOB_ID: '91', SLURMD_NODENAME: 'gpu001', SLURM_LOCALID: '0', ...env }, USER);
  const placement = (r: Ran): string[] => r.stdout.split('\n').filter((l) => / job-(placement|cpus|mems)/.test(l)).map((l) => l.trim().replace(/ {2,}/g, ' | '));

  await t.test("node 2 of a job: SLURM_STEP_GPUS=0,1,2,3 is this node's; SLURM_JOB_GPUS=4,5,6,7 is the batch node's", async (t) => {
    // Every GPU's minor is its place in PCI order (the order all numberings agree on); bound next to GPUs 0-3.
    const view = await jobRoot({ node: DGX1, minors: [], status: { cpus: '0-19,40-59', mems: '0' } }, path.join(work, 'node2'));
    const r = task(view, { SLURM_JOB_GPUS: '4,5,6,7', SLURM_STEP_GPUS: '0,1,2,3', SLURM_GPUS_ON_NODE: '4', SLURM_STEP_ID: '0', CUDA_VISIBLE_DEVICES: '0,1,2,3' });
    t.same(placement(r), [
      "PASS | job-placement | job | this job's CPUs 0-19,40-59 and memory nodes 0 are near its GPUs 0=0000:06:00.0, 1=0000:07:00.0, 2=0000:0a:00.0, 3=0000:0b:00.0",
    ], "judged for this node's GPUs 0-3 (before: GPUs 4-7 of the batch node's list, and their CPUs called far)");
  });

  await t.test('a container showing two of the eight GPUs (minors 0 and 1, Slurm\'s 1 and 4): no order of those two is Slurm\'s', async (t) => {
    // Minors in PCI order 2,0,3,4,1,5,6,7: Slurm's GPU 1 (the second in PCI order, 07:00.0) is minor 0, GPU 4 (85:00.0) minor 1.
    const view = await jobRoot({ node: DGX1, minors: [2, 0, 3, 4, 1, 5, 6, 7], status: { cpus: '0-19,40-59', mems: '0' }, nvidia: ['nvidia-uvm', 'nvidiactl', 'nvidia0', 'nvidia1'] }, path.join(work, 'subset'));
    const gpus = path.join(view, 'proc/driver/nvidia/gpus');
    for (const d of fs.readdirSync(gpus)) if (d !== '0000:07:00.0' && d !== '0000:85:00.0') fs.rmSync(path.join(gpus, d), { recursive: true });
    const r = task(view, { SLURM_JOB_GPUS: '1,4', SLURM_STEP_GPUS: '1', SLURM_GPUS_ON_NODE: '1', SLURM_STEP_ID: '0', CUDA_VISIBLE_DEVICES: '0' });
    t.same(placement(r), [
      "SKIP | job-placement | job | not checked: which GPUs Slurm's SLURM_STEP_GPUS=1 are cannot be told: no trusted Prolog record says how Slurm numbers this node's GPUs, and Slurm's GPU 4 is not among the 2 GPUs /proc/driver/nvidia/gpus shows this job (a container's share of the node's, or not GPUs): their minors do not number Slurm's GPUs",
    ], 'not judged (before: GPU 1 taken for 0000:85:00.0, minor 1, and the CPUs next to its real 0000:07:00.0 called far)');
    t.equal(r.code, 0, 'exit 0: nothing wrong found');
  });
}
