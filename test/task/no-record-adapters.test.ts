// Without a trusted Prolog record, the matrix's adapters are found by the PCI function the job's own /sys shows.
// On a node that named mlx5_0 and mlx5_1 the other way round from the reference (the kernel names mlx5 devices in probe
// order; test/gen/topologies/two-socket-2gpu-2nic.ts, the baseline captured from it unswapped), gdrgate task's hook
// run in-process with an empty state directory: a container holding only the GPU's adapter, only the far one, both
// with the near one's verbs node gone, and a visible adapter whose device link leads nowhere.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { runHook } from '../../src/engine/hook.js';
import { ownView, standaloneHook, taskPrologHook } from '../../src/task/hook.js';
import { baselineOf } from '../checks/_trees.js';
import { allDevices, type GenNode } from '../gen/sysfs-tree.js';
import { node as TWO } from '../gen/topologies/two-socket-2gpu-2nic.js';
import { jobRoot } from './_roots.js';

const work = t.testdir();
// The reference node: mlx5_0 at 0000:19:00.0 (PIX to GPU 0000:18:00.0), mlx5_1 at 0000:9b:00.0 (PIX to 0000:9a:00.0).
fs.writeFileSync(path.join(work, 'baseline.json'), JSON.stringify({ version: 1, classes: [await baselineOf(TWO)] }));
const SWAPPED: GenNode = structuredClone(TWO);
const ib = allDevices(SWAPPED).flatMap((d) => (d.ib ? [d.ib] : []));
[ib[0]!.name, ib[1]!.name] = [ib[1]!.name, ib[0]!.name];
const ENV = { SLURM_JOB_ID: '81', SLURMD_NODENAME: 'gpu001', SLURM_JOB_GPUS: '0', SLURM_STEP_GPUS: '0', SLURM_GPUS_ON_NODE: '1', SLURM_STEP_ID: '0', SLURM_LOCALID: '0' };
let n = 0;

/**
 * The job's view on the swapped node: `shown` its adapters (name, uverbs node) as enroot's 99-mellanox.sh leaves them,
 * or all of them; `drop`, /dev/infiniband nodes gone from it; `patch` a last change.
 */
async function view(o: { shown?: [string, string][]; drop?: string[]; patch?: (root: string) => void } = {}): Promise<string> {
  const root = await jobRoot({ node: SWAPPED, minors: [], status: { cpus: '0-7', mems: '0' } }, path.join(work, `view${n++}`));
  if (o.shown) {
    const keep = new Set(o.shown.flat());
    for (const cls of ['infiniband', 'infiniband_verbs']) for (const e of fs.readdirSync(path.join(root, 'sys/class', cls))) if (!keep.has(e)) fs.rmSync(path.join(root, 'sys/class', cls, e), { recursive: true });
    for (const e of fs.readdirSync(path.join(root, 'dev/infiniband'))) if (/^uverbs/.test(e) && !keep.has(e)) fs.rmSync(path.join(root, 'dev/infiniband', e));
  }
  for (const u of o.drop ?? []) fs.rmSync(path.join(root, 'dev/infiniband', u));
  o.patch?.(root);
  return root;
}

/** `gdrgate task --fail` with no Prolog record (an empty state directory): its exit code and its placement findings. */
async function task(root: string): Promise<{ code: number; found: [string, string, string][] }> {
  const config = path.join(work, `config${n++}.json`);
  fs.writeFileSync(config, JSON.stringify({ baseline: path.join(work, 'baseline.json'), root, stateDir: path.join(work, 'run') }));
  const r = await runHook(taskPrologHook({ standalone: false, config, fail: true }, ENV, '81', await ownView(root)));
  return { code: r.code, found: r.judgement.findings.filter((f) => f.check === 'job-placement').map((f) => [f.status, f.code, f.message]) };
}

const OK: [string, string, string] = ['pass', 'job-placement-ok', "this job's CPUs 0-7 and memory nodes 0 are near its GPUs 0=0000:18:00.0"];

t.test('the swapped node as generated: here mlx5_1 (uverbs0) is at 0000:19:00.0, next to GPU 0', async (t) => {
  const root = await view();
  t.same(['mlx5_0', 'mlx5_1'].map((a) => fs.realpathSync(path.join(root, 'sys/class/infiniband', a, 'device')).split('/').pop()), ['0000:9b:00.0', '0000:19:00.0']);
  t.equal(fs.readFileSync(path.join(root, 'sys/class/infiniband_verbs/uverbs0/ibdev'), 'utf8'), 'mlx5_1\n');
  t.same(await task(root), { code: 0, found: [OK] }, 'every adapter usable: passes');
});

t.test('a container holding only the adapter next to its GPU (mlx5_1 here, mlx5_0 on the reference): passes', async (t) => {
  t.same(await task(await view({ shown: [['mlx5_1', 'uverbs0']] })), { code: 0, found: [OK] }, 'before: job-nic-hidden for mlx5_0, an adapter this node gives the other function');
});

t.test('a container holding only the far adapter (mlx5_0 here, at 0000:9b:00.0): the one at 0000:19:00.0 is hidden, said by its PCI function', async (t) => {
  t.same(await task(await view({ shown: [['mlx5_0', 'uverbs1']] })), {
    code: 1,
    found: [['fail', 'job-nic-hidden', "this job cannot use the adapter at 0000:19:00.0 (mlx5_0 on the reference node; no adapter in this job's /sys/class/infiniband is at that PCI function), the PIX adapter next to GPU 0 (0000:18:00.0)"]],
  }, 'before: a pass, mlx5_0 judged by its name');
});

t.test("both adapters seen, the nearest one's verbs node hidden: the adapter at the GPU's PCI function is judged", async (t) => {
  t.same(await task(await view({ drop: ['uverbs0'] })), {
    code: 1,
    found: [['fail', 'job-nic-hidden', 'this job cannot use mlx5_1 (no usable /dev/infiniband/uverbs0), the PIX adapter next to GPU 0 (0000:18:00.0)']],
  }, 'before: a pass, mlx5_0 (usable, next to the other GPU) judged instead');
});

t.test("a visible adapter whose PCI function the job's /sys does not show: never a guess", async (t) => {
  const dangle = (a: string) => (root: string): void => {
    const l = path.join(fs.realpathSync(path.join(root, 'sys/class/infiniband', a)), 'device');
    fs.rmSync(l);
    fs.symlinkSync('../../../0000:ff:00.0', l);
  };
  t.same(await task(await view({ shown: [['mlx5_0', 'uverbs1']], patch: dangle('mlx5_0') })), {
    code: 0,
    found: [
      ['skip', 'job-placement-unknown', "whether this job has the PIX adapter next to GPU 0 (0000:18:00.0) cannot be told: no adapter in its /sys/class/infiniband is at 0000:19:00.0 (mlx5_0 on the reference node), and the PCI function of mlx5_0 could not be read (/sys/class/infiniband/mlx5_0/device: missing, or a link to nothing, in this job's /sys (ENOENT))"],
      [OK[0], OK[1], `${OK[2]} (the adapters next to them: see the skip lines)`],
    ],
  }, 'the only visible adapter unplaced: skipped');
  t.same(await task(await view({ patch: dangle('mlx5_0') })), { code: 0, found: [OK] }, 'the nearest one found at its PCI function: judged, whatever the other is');
});

t.test('--standalone judges the same way (no record either)', async (t) => {
  const root = await view({ shown: [['mlx5_1', 'uverbs0']] });
  const config = path.join(work, 'standalone.json');
  fs.writeFileSync(config, JSON.stringify({ baseline: path.join(work, 'baseline.json'), root }));
  const r = await runHook(standaloneHook({ standalone: true, config, fail: true }, ENV));
  t.same(r.judgement.findings.filter((f) => f.check === 'job-placement').map((f) => [f.status, f.code, f.message]), [OK]);
});
