// A snapshot keeps everything the checks read: `check --json` on a snapshot equals `check --json` on the tree it was
// taken from, on every generated topology (test/gen/topologies: each modelled on a named real system) and on the
// two-socket node with Slurm's gres.conf and the NVIDIA module's GPU minors (job-placement's inputs), passing and
// failing. Before, a snapshot left gres.conf and /proc/driver/nvidia/gpus/*/information out: the replay skipped
// job-placement where the node failed it.
import t from 'tap';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { buildTree, type GenNode } from '../gen/sysfs-tree.js';
import { informationText } from '../gen/nvidia-procfs.js';
import { GPUS, node as TWO } from '../gen/topologies/two-socket-2gpu-2nic.js';
import { cli } from '../helpers/cli.js';
import { REPO } from '../helpers/paths.js';
import { scratchDirAsync, TREE_TMP } from '../helpers/scratch.js';

const strip = (s: string): unknown => {
  const o = JSON.parse(s) as Record<string, unknown>;
  for (const k of ['time', 'durationMs', 'root']) delete o[k];
  return o;
};

/** gres.conf, the GPU minors and a Sapphire Rapids pair's core topology on the two-socket tree (job-placement's reads). */
function placement(root: string, gres: string): void {
  const put = (p: string, s: string): void => {
    mkdirSync(path.dirname(path.join(root, p)), { recursive: true });
    writeFileSync(path.join(root, p), s);
  };
  for (let c = 0; c < 192; c++) {
    const core = c % 96;
    put(`sys/devices/system/cpu/cpu${c}/topology/core_cpus_list`, `${core},${core + 96}\n`);
    put(`sys/devices/system/cpu/cpu${c}/topology/physical_package_id`, `${core < 48 ? 0 : 1}\n`);
  }
  GPUS.forEach((g, i) => put(`proc/driver/nvidia/gpus/${g}/information`, informationText(g, i)));
  put('etc/slurm/gres.conf', gres);
}

const dir = await scratchDirAsync('gdrgate-replay-all-', TREE_TMP);
const TOPOS = readdirSync(path.join(REPO, 'test/gen/topologies')).filter((f) => f.endsWith('.ts') && f !== 'hgx-h100-sriov.ts').map((f) => f.slice(0, -3)).sort();

async function sameAfterSnapshot(name: string, make: (root: string) => Promise<void>): Promise<{ checks: Record<string, string[]>; code: number | null }> {
  const root = path.join(dir, name);
  await make(root);
  const file = `${root}.tar.gz`;
  const s = cli(['snapshot', '--root', root, '--out', file]);
  if (s.code !== 0) throw new Error(`snapshot ${name}: ${s.stderr}`);
  const a = cli(['check', '--root', root, '--json']);
  const b = cli(['check', '--root', file, '--json']);
  t.equal(b.code, a.code, `${name}: the same exit code`);
  t.same(strip(b.stdout), strip(a.stdout), `${name}: the same report`);
  const findings = (JSON.parse(a.stdout) as { findings: { check: string; status: string }[] }).findings;
  const checks: Record<string, string[]> = {};
  for (const f of findings) (checks[f.check] ??= []).push(f.status);
  return { checks, code: a.code };
}

t.test('every generated topology: check replays identically from its snapshot', async (t) => {
  for (const name of TOPOS) {
    const m = (await import(`../gen/topologies/${name}.js`)) as { node: GenNode };
    await sameAfterSnapshot(name, (root) => buildTree(root, m.node));
  }
  t.equal(TOPOS.length, 13, 'thirteen models (the SR-IOV HGX, 2,000 functions, is the sglang HGX with VFs: left to its own tests)');
});

t.test("job-placement replays from a snapshot: gres.conf and the GPUs' minors are kept, passing and failing", async (t) => {
  const good = await sameAfterSnapshot('gres-good', async (root) => (await buildTree(root, structuredClone(TWO)), placement(root, 'Name=gpu File=/dev/nvidia0 Cores=0-47\nName=gpu File=/dev/nvidia1 Cores=48-95\n')));
  t.same(good.checks['job-placement'], ['pass', 'pass']);
  const swapped = await sameAfterSnapshot('gres-swapped', async (root) => (await buildTree(root, structuredClone(TWO)), placement(root, 'Name=gpu File=/dev/nvidia0 Cores=48-95\nName=gpu File=/dev/nvidia1 Cores=0-47\n')));
  t.same(swapped.checks['job-placement'], ['fail', 'fail'], 'the tree fails it (its replay, before: skip, "not recorded by this snapshot", exit 0)');
  t.equal(swapped.code, 1);
});
