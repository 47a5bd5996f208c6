// A gres.conf of huge Cores= ranges (1.3 KB of Cores=0-1048575 lines), and one id just past the node (Cores=96 of 96 cores), is judged by ranges: exact findings, and the CLI answers well inside a generous bound.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CHECKS } from '../../src/checks/index.js';
import { FsHost } from '../../src/host/fs-host.js';
import { buildInventory } from '../../src/inventory/build.js';
import type { Finding } from '../../src/model/finding.js';
import { informationText } from '../gen/nvidia-procfs.js';
import { buildTree } from '../gen/sysfs-tree.js';
import { GPUS, node as TWO } from '../gen/topologies/two-socket-2gpu-2nic.js';
import { CLI } from '../helpers/paths.js';
import { scratchDir, TREE_TMP } from '../helpers/scratch.js';

const LINE = 'Name=gpu File=/dev/nvidia0 Cores=0-1048575\n';
const LINES = Math.ceil(1300 / LINE.length); // 30 lines, 1,320 bytes
/**
 * Ten times the reported file (300 lines, 13 KB) for the run timed from outside: a loaded two-core machine starts
 * node and answers it in a few seconds, where expanding every core id took 45 s for the 1.3 KB file alone.
 */
const OUTSIDE_LINES = 10 * LINES;
const OUTSIDE_LIMIT_MS = 30_000;

function put(root: string, kpath: string, text: string): void {
  mkdirSync(path.join(root, path.dirname(kpath)), { recursive: true });
  writeFileSync(path.join(root, kpath), text);
}

/** The two-socket tree with its core topology (2 × 48 cores × 2 threads), the module's minors and the gres.conf. */
async function tree(gres: string): Promise<string> {
  const root = scratchDir('gdrgate-gres-', TREE_TMP);
  await buildTree(root, structuredClone(TWO));
  for (let c = 0; c < 192; c++) {
    const core = c % 96;
    put(root, `sys/devices/system/cpu/cpu${c}/topology/core_cpus_list`, `${core},${core + 96}\n`);
    put(root, `sys/devices/system/cpu/cpu${c}/topology/physical_package_id`, `${core < 48 ? 0 : 1}\n`);
  }
  for (const [i, g] of GPUS.entries()) put(root, `proc/driver/nvidia/gpus/${g}/information`, informationText(g, i));
  put(root, 'etc/slurm/gres.conf', gres);
  return root;
}

const placement = (fs: readonly Finding[]): string[] => fs.map((f) => `${f.status} ${f.code} ${f.subject} ${f.actual ?? ''}`);

t.test('Cores=0-1048575 on every line: each line a fail naming the first core the node lacks, nothing expanded', async (t) => {
  const root = await tree(LINE.repeat(LINES));
  const inv = await buildInventory(new FsHost(root));
  const out = CHECKS.find((c) => c.id === 'job-placement')!.run({ inv, baseline: null });
  t.strictSame(placement(out), Array.from({ length: LINES }, () => `fail gres-cores-far ${GPUS[0]} Cores=0-1048575`));
  t.equal(out[0]!.message, 'gres.conf line 1: Cores=0-1048575 for /dev/nvidia0 names core 96, this node has 96 cores');
});

t.test('Cores=96 on the 96-core node: the first id past the last core is beyond the node, as a huge one is', async (t) => {
  const root = await tree('Name=gpu File=/dev/nvidia0 Cores=96\n');
  const inv = await buildInventory(new FsHost(root));
  const out = CHECKS.find((c) => c.id === 'job-placement')!.run({ inv, baseline: null });
  t.strictSame(placement(out), [`fail gres-cores-far ${GPUS[0]} Cores=96`]);
  t.equal(out[0]!.message, 'gres.conf line 1: Cores=96 for /dev/nvidia0 names core 96, this node has 96 cores');
  t.equal(out[0]!.expected, 'cores of this node');
});

t.test('every core of the node on 30 lines: bounded by the node (its 96 cores), judged as far for the socket-1 half', async (t) => {
  const root = await tree('Name=gpu File=/dev/nvidia0 Cores=0-95\n'.repeat(LINES));
  const inv = await buildInventory(new FsHost(root));
  const out = CHECKS.find((c) => c.id === 'job-placement')!.run({ inv, baseline: null });
  t.strictSame(placement(out), Array.from({ length: LINES }, () => `fail gres-cores-far ${GPUS[0]} Cores=0-95 (CPUs 0-191)`));
  t.equal(out[0]!.message, 'gres.conf line 1: /dev/nvidia0 Cores=0-95 (CPUs 0-191), of which CPUs 48-95,144-191 are not its local CPUs 0-47,96-143');
});

t.test('gdrgate check on ten times that file answers inside a generous wall-clock bound, measured from outside', async (t) => {
  const root = await tree(LINE.repeat(OUTSIDE_LINES));
  const r = spawnSync(process.execPath, [CLI, 'check', '--root', root, '--only', 'job-placement', '--json'], { encoding: 'utf8', timeout: OUTSIDE_LIMIT_MS, killSignal: 'SIGKILL' }); // the gate handles SIGTERM, which a synchronous loop never lets run
  t.equal(r.signal, null, `ended by itself within ${OUTSIDE_LIMIT_MS} ms`);
  t.equal(r.status, 1, 'exit 1: the gres.conf is wrong for this node');
  const report = JSON.parse(r.stdout) as { findings: Finding[] };
  t.equal(report.findings.filter((f) => f.check === 'job-placement' && f.status === 'fail').length, OUTSIDE_LINES);
});
