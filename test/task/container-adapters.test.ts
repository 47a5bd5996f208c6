// A container that shows a job only the adapters next to its GPUs (built CLI, as root and the job's user), on
// test/gen/topologies/two-socket-2gpu-2nic.ts (GPU 0000:18:00.0 and mlx5_0 on node 0, PIX; GPU 0000:9a:00.0 and mlx5_1
// on node 1): the view enroot's 99-mellanox.sh leaves (MELLANOX_VISIBLE_DEVICES: a tmpfs over /sys/class/infiniband and
// /sys/class/infiniband_verbs with only the shown adapters, only their /dev/infiniband nodes) is not failed for the
// adapter next to none of the job's GPUs; the Prolog's record says which adapter each uverbs node is. On a node whose
// adapters are named the other way round from the reference node (names follow probe order), the matrix's adapters
// are found by their PCI functions: a container holding only the far adapter fails. With SR-IOV VFs bound to mlx5_core
// (test/gen/sriov.ts on the same tree), a container holding one function of the card next to its GPU (the PF, or a
// VF) has that card: the other functions are named in the pass line, never failed.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { allDevices, type GenNode } from '../gen/sysfs-tree.js';
import { node as TWO } from '../gen/topologies/two-socket-2gpu-2nic.js';
import { withVfs } from '../gen/sriov.js';
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
  type Told = { code: number | null; fails: [string, string][]; ok?: string | null };
  const node = async (name: string, gen: GenNode, job: string, baseline = 'baseline.json'): Promise<{ tree: string; task: (view: string, ok?: boolean) => Told }> => {
    const tree = await jobRoot({ node: gen, minors: [1, 0] }, path.join(work, name));
    fs.mkdirSync(path.join(tree, 'etc/slurm'), { recursive: true });
    fs.writeFileSync(path.join(tree, 'etc/slurm/gres.conf'), 'AutoDetect=nvml\n');
    fs.writeFileSync(path.join(tree, 'etc/slurm/slurm.conf'), 'NodeName=gpu001 CPUs=192 Gres=gpu:2\n');
    const scontrol = path.join(work, `${name}-scontrol`);
    fs.writeFileSync(scontrol, '#!/bin/sh\nexit 1\n', { mode: 0o755 });
    const stateDir = path.join(work, `${name}-run`);
    const config = path.join(work, `${name}.json`);
    fs.writeFileSync(config, JSON.stringify({ baseline: path.join(work, baseline), root: tree, scontrol, logFile: path.join(work, `${name}.log`), stateDir, spool: path.join(work, `${name}-spool`) }), { mode: 0o644 });
    const slurm = (extra: Record<string, string>): Record<string, string> => ({ SLURM_JOB_ID: job, SLURMD_NODENAME: 'gpu001', ...extra });
    const pro = run(['prolog', '--config', config], slurm({ SLURM_JOB_UID: String(USER), SLURM_JOB_GID: String(USER), SLURM_JOB_USER: 'u', SLURM_SCRIPT_CONTEXT: 'prolog_slurmd', SLURM_JOB_GPUS: '0' }));
    t.equal(pro.code, 0, `${name}: prolog exit 0`, { stdout: pro.stdout });
    return {
      tree,
      task: (view, ok = false) => {
        const r = run(['task', '--config', config, '--root', view, '--fail'], slurm(ENV), USER);
        const rec = JSON.parse(fs.readFileSync(path.join(stateDir, `job-${job}`, 'task.json'), 'utf8')) as { findings: { status: string; code: string; message: string }[] };
        const told: Told = { code: r.code, fails: rec.findings.filter((f) => f.status === 'fail').map((f) => [f.code, f.message]) };
        return ok ? { ...told, ok: rec.findings.find((f) => f.code === 'job-visibility-ok')?.message ?? null } : told;
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

  await t.test('SR-IOV: one function of the card next to the GPU (its PF, or one of its VFs) is that card', async (t) => {
    const VF = withVfs(TWO, 2);
    t.same(allDevices(VF).flatMap((d) => (d.ib ? [`${d.ib.name}@${d.bdf}${d.physfn ? `<${d.physfn}` : ''}`] : [])), ['mlx5_0@0000:19:00.0', 'mlx5_2@0000:19:00.1<0000:19:00.0', 'mlx5_3@0000:19:00.2<0000:19:00.0', 'mlx5_1@0000:9b:00.0', 'mlx5_4@0000:9b:00.1<0000:9b:00.0', 'mlx5_5@0000:9b:00.2<0000:9b:00.0'], 'the generated functions: each PF with two VFs on its bus');
    const vref = await jobRoot({ node: VF, minors: [1, 0] }, path.join(work, 'vf-ref'));
    const cap = run(['baseline', 'capture', '--root', vref, '--class', 't', '--match', '*'], {});
    t.equal(cap.code, 0, 'baseline captured from the reference node with VFs', { stderr: cap.stderr });
    fs.writeFileSync(path.join(work, 'baseline-vf.json'), cap.stdout);
    const n = await node('vf', VF, '73', 'baseline-vf.json');
    const rec = JSON.parse(JSON.parse(fs.readFileSync(path.join(work, 'vf-run', 'job-73', 'prolog.json'), 'utf8')).payload) as { adapters: { name: string; pf?: string }[] };
    t.same(rec.adapters.filter((a) => a.pf).map((a) => `${a.name}<${a.pf}`), ['mlx5_2<0000:19:00.0', 'mlx5_3<0000:19:00.0', 'mlx5_4<0000:9b:00.0', 'mlx5_5<0000:9b:00.0'], "the record: each VF's PF, as root read its physfn");
    const uv = (name: string): string => fs.readdirSync(path.join(n.tree, 'sys/class/infiniband_verbs')).find((u) => fs.readFileSync(path.join(n.tree, 'sys/class/infiniband_verbs', u, 'ibdev'), 'utf8') === `${name}\n`)!;
    const pf = await enrootView('vf-pf', VF, ['mlx5_0', uv('mlx5_0')]);
    t.same(n.task(pf, true), { code: 0, fails: [], ok: 'this job sees 1 RDMA adapters, 1 verbs devices, 3 NVIDIA device nodes; not mlx5_1, mlx5_4, mlx5_5, next to none of its GPUs (next to them: mlx5_0, mlx5_2, mlx5_3); mlx5_2, mlx5_3 through mlx5_0 (other functions of one card)' }, 'the PF alone (enroot given the PFs): passes');
    const vf = await enrootView('vf-vf', VF, ['mlx5_3', uv('mlx5_3')]);
    t.same(n.task(vf, true), { code: 0, fails: [], ok: 'this job sees 1 RDMA adapters, 1 verbs devices, 3 NVIDIA device nodes; not mlx5_1, mlx5_4, mlx5_5, next to none of its GPUs (next to them: mlx5_0, mlx5_2, mlx5_3); mlx5_0, mlx5_2 through mlx5_3 (other functions of one card)' }, 'one VF alone: passes');
    const far = await enrootView('vf-far', VF, ['mlx5_4', uv('mlx5_4')]);
    t.same(n.task(far), {
      code: 1,
      fails: [
        ['job-hca-missing', 'this job sees 1 of the 6 RDMA adapters of the host (missing mlx5_0, mlx5_2, mlx5_3, next to its GPUs)'],
        ['job-uverbs-missing', `this job sees 1 of the 6 verbs devices of the host (missing ${['mlx5_0', 'mlx5_2', 'mlx5_3'].map((a) => `/dev/infiniband/${uv(a)}`).sort().join(', ')}, of the adapters next to its GPUs or of one the record does not place)`],
        ['job-nic-hidden', 'this job cannot use mlx5_0 (no /sys/class/infiniband/mlx5_0), mlx5_2 (no /sys/class/infiniband/mlx5_2), mlx5_3 (no /sys/class/infiniband/mlx5_3), the PIX adapters next to GPU 0 (0000:18:00.0)'],
      ],
    }, 'a VF of the far card alone: failed for every function of the near one');
  });
}
