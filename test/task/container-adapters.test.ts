// A container that shows a job only the adapters next to its GPUs (built CLI, as root and the job's user), on
// test/gen/topologies/two-socket-2gpu-2nic.ts (GPU 0000:18:00.0 and mlx5_0 on node 0, PIX; GPU 0000:9a:00.0 and mlx5_1
// on node 1): the view enroot's 99-mellanox.sh leaves (MELLANOX_VISIBLE_DEVICES: a tmpfs over /sys/class/infiniband and
// /sys/class/infiniband_verbs with only the shown adapters, only their /dev/infiniband nodes) is not failed for the
// adapter next to none of the job's GPUs; the Prolog's record says which adapter each uverbs node is. On a node whose
// adapters are named the other way round from the reference node (names follow probe order), the matrix's adapters
// are found by their PCI functions: a container holding only the far adapter fails.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { allDevices, type GenNode } from '../gen/sysfs-tree.js';
import { node as TWO } from '../gen/topologies/two-socket-2gpu-2nic.js';
import { reachableBuild, reachableNode, runBuilt, type Ran } from '../helpers/reachable.js';
import { scratchDir } from '../helpers/scratch.js';
import { jobRoot } from './_roots.js';

const isRoot = process.getuid?.() === 0;
const USER = 4244;
const ENV = { SLURM_JOB_GPUS: '0', SLURM_STEP_GPUS: '0', SLURM_GPUS_ON_NODE: '1', CUDA_VISIBLE_DEVICES: '0', SLURM_LOCALID: '0', SLURM_STEP_ID: '0' };

if (!isRoot) t.skip('container adapters: needs root (the prolog chowns to the job uid; the task runs as that uid)', () => {});
else await main();

async function main(): Promise<void> {
  const work = scratchDir('gdrgate-cadapters-', '/tmp');
  fs.chmodSync(work, 0o755);
  t.teardown(() => fs.rmSync(work, { recursive: true, force: true }));
  const CLI = reachableBuild(work);
  const NODE = reachableNode(CLI);
  const run = (args: string[], env: Record<string, string>, uid?: number): Ran => runBuilt(NODE, CLI, args, env, uid);
  const ref = await jobRoot({ node: TWO, minors: [1, 0] }, path.join(work, 'ref'));
  const cap = run(['baseline', 'capture', '--root', ref, '--class', 't', '--match', '*'], {});
  t.equal(cap.code, 0, 'baseline captured from the reference node', { stderr: cap.stderr });
  fs.writeFileSync(path.join(work, 'baseline.json'), cap.stdout);

  /** A node tree (Slurm's files beside it), its config, and a Prolog of job `job` with SLURM_JOB_GPUS=0 as root. */
  const node = async (name: string, gen: GenNode, job: string): Promise<{ tree: string; task: (view: string) => { code: number | null; fails: [string, string][] } }> => {
    const tree = await jobRoot({ node: gen, minors: [1, 0] }, path.join(work, name));
    fs.mkdirSync(path.join(tree, 'etc/slurm'), { recursive: true });
    fs.writeFileSync(path.join(tree, 'etc/slurm/gres.conf'), 'AutoDetect=nvml\n');
    fs.writeFileSync(path.join(tree, 'etc/slurm/slurm.conf'), 'NodeName=gpu001 CPUs=192 Gres=gpu:2\n');
    const scontrol = path.join(work, `${name}-scontrol`);
    fs.writeFileSync(scontrol, '#!/bin/sh\nexit 1\n', { mode: 0o755 });
    const stateDir = path.join(work, `${name}-run`);
    const config = path.join(work, `${name}.json`);
    fs.writeFileSync(config, JSON.stringify({ baseline: path.join(work, 'baseline.json'), root: tree, scontrol, logFile: path.join(work, `${name}.log`), stateDir, spool: path.join(work, `${name}-spool`) }), { mode: 0o644 });
    const slurm = (extra: Record<string, string>): Record<string, string> => ({ SLURM_JOB_ID: job, SLURMD_NODENAME: 'gpu001', ...extra });
    const pro = run(['prolog', '--config', config], slurm({ SLURM_JOB_UID: String(USER), SLURM_JOB_GID: String(USER), SLURM_JOB_USER: 'u', SLURM_SCRIPT_CONTEXT: 'prolog_slurmd', SLURM_JOB_GPUS: '0' }));
    t.equal(pro.code, 0, `${name}: prolog exit 0`, { stdout: pro.stdout });
    return {
      tree,
      task: (view) => {
        const r = run(['task', '--config', config, '--root', view, '--fail'], slurm(ENV), USER);
        const rec = JSON.parse(fs.readFileSync(path.join(stateDir, `job-${job}`, 'task.json'), 'utf8')) as { findings: { status: string; code: string; message: string }[] };
        return { code: r.code, fails: rec.findings.filter((f) => f.status === 'fail').map((f) => [f.code, f.message]) };
      },
    };
  };
  /** The job's view as enroot leaves it: only `shown` of the adapters (name, uverbs node), bound next to GPU 0. */
  const enrootView = async (name: string, gen: GenNode, shown: [string, string]): Promise<string> => {
    const view = await jobRoot({ node: gen, minors: [1, 0], status: { cpus: '0-7', mems: '0' }, uverbs: [shown[1]], nvidia: ['nvidia-uvm', 'nvidiactl', 'nvidia1'] }, path.join(work, name));
    for (const cls of ['infiniband', 'infiniband_verbs'])
      for (const e of fs.readdirSync(path.join(view, 'sys/class', cls))) if (e !== shown[0] && e !== shown[1]) fs.rmSync(path.join(view, 'sys/class', cls, e), { recursive: true });
    return view;
  };

  await t.test("enroot's view with only mlx5_0 (next to the job's GPU): passes; with only mlx5_1: fails", async (t) => {
    const n = await node('same', TWO, '71');
    const near = await enrootView('enroot-near', TWO, ['mlx5_0', 'uverbs0']);
    t.same([fs.readdirSync(path.join(near, 'sys/class/infiniband')), fs.readdirSync(path.join(near, 'sys/class/infiniband_verbs'))], [['mlx5_0'], ['uverbs0']], "the view: one adapter in each class, as 99-mellanox.sh's tmpfs holds");
    t.same(n.task(near), { code: 0, fails: [] }, 'exit 0 under --fail: mlx5_1 and uverbs1 are next to no GPU of the job');
    const far = await enrootView('enroot-far', TWO, ['mlx5_1', 'uverbs1']);
    t.same(n.task(far), {
      code: 1,
      fails: [
        ['job-hca-missing', 'this job sees 1 of the 2 RDMA adapters of the host (missing mlx5_0, next to its GPUs)'],
        ['job-uverbs-missing', 'this job sees 1 of the 2 verbs devices of the host (missing /dev/infiniband/uverbs0, of the adapters next to its GPUs or of one the record does not place)'],
        ['job-nic-hidden', 'this job cannot use mlx5_0 (no /sys/class/infiniband/mlx5_0), the PIX adapter next to GPU 0 (0000:18:00.0)'],
      ],
    }, 'the adapter next to its GPU hidden: failed');
  });

  await t.test('adapters named the other way round from the reference: found by PCI function', async (t) => {
    const swapped = structuredClone(TWO);
    const ib = allDevices(swapped).flatMap((d) => (d.ib ? [d.ib] : []));
    t.same(ib.map((x) => x.name), ['mlx5_0', 'mlx5_1'], 'the generated adapters, in PCI order');
    [ib[0]!.name, ib[1]!.name] = [ib[1]!.name, ib[0]!.name];
    const n = await node('swapped', swapped, '72');
    t.equal(fs.readFileSync(path.join(n.tree, 'sys/class/infiniband_verbs/uverbs0/ibdev'), 'utf8'), 'mlx5_1\n', 'here mlx5_1 (uverbs0) is the adapter beside 0000:18:00.0');
    const near = await enrootView('swapped-near', swapped, ['mlx5_1', 'uverbs0']);
    t.same(n.task(near), { code: 0, fails: [] }, 'only mlx5_1 (here the near adapter): passes (first: a task record keeps what an earlier step of the job met)');
    const far = await enrootView('swapped-far', swapped, ['mlx5_0', 'uverbs1']);
    t.same(n.task(far), {
      code: 1,
      fails: [
        ['job-hca-missing', 'this job sees 1 of the 2 RDMA adapters of the host (missing mlx5_1, next to its GPUs)'],
        ['job-uverbs-missing', 'this job sees 1 of the 2 verbs devices of the host (missing /dev/infiniband/uverbs0, of the adapters next to its GPUs or of one the record does not place)'],
        ['job-nic-hidden', 'this job cannot use mlx5_1 (no /sys/class/infiniband/mlx5_1), the PIX adapter next to GPU 0 (0000:18:00.0)'],
      ],
    }, "only mlx5_0 (here the far adapter): failed for mlx5_1, the GPU's own");
  });
}
