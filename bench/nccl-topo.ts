// What the NCCL topology file (baseline ncclTopo) adds to the Prolog, on the 8-GPU/8-NIC HGX H100 tree of
// test/gen (plus the NVSwitches and NVMe drives such a node carries, as bench/prolog.ts builds it).
//   npm run build && npx tsc -p bench/tsconfig.json && node .bench/bench/nccl-topo.js   (also in `npm run bench`)
// Three measures, each alternating on and off in one run so that the machine's load falls on both alike:
//   1. the added work alone (the file's reads, build, render, write), over the inventory the Prolog already has;
//   2. the Prolog's per-job state as the gate records it (recordJobState: state, signature, files), on vs off;
//   3. the Prolog as Slurm starts it (node dist/cli.js prolog), on vs off, a new job each time.
// The state directory is on tmpfs where /dev/shm is (as /run/gdrgate is on a node), else under the temporary
// directory; the line says which. Goal: under 1 ms more (docs/nccl-topo.md).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FsHost } from '../src/host/fs-host.js';
import { writeNew } from '../src/host/files.js';
import { buildInventory } from '../src/inventory/build.js';
import { jobDirName } from '../src/state/names.js';
import { recordJobState } from '../src/state/prolog.js';
import { readNcclTopo } from '../src/topo/nccl-read.js';
import { renderNcclXml } from '../src/topo/nccl-xml.js';
import { buildTree } from '../test/gen/sysfs-tree.js';
import { node as hgx } from '../test/gen/topologies/sglang30401-hgx-h100.js';
import { withOthers } from './hgx-others.js';

const REPO = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const CLI = path.join(REPO, 'dist/cli.js');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 30);
const WARM = 3;
const sorted = (xs: number[]): number[] => [...xs].sort((a, b) => a - b);
const median = (xs: number[]): number => sorted(xs)[Math.floor(xs.length / 2)]!;
const p95 = (xs: number[]): number => sorted(xs)[Math.floor(xs.length * 0.95)]!;
const f = (x: number): string => x.toFixed(2);
const line = (s: string): boolean => process.stdout.write(`${s}\n`);

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'gdrgate-bench-nccl-'));
  const shm = existsSync('/dev/shm') ? mkdtempSync('/dev/shm/gdrgate-bench-nccl-') : null;
  const stateRoot = shm ?? dir;
  const where = shm ? 'tmpfs (/dev/shm)' : `${tmpdir()} (no /dev/shm)`;
  const tree = path.join(dir, 'tree');
  await buildTree(tree, { ...withOthers(hgx), cpuModalias: 'cpu:type:x86,ven0000fam0006mod008F:feature:,0000' });
  const host = new FsHost(tree);
  const inv = await buildInventory(host, { slurmdPidFiles: [] });
  line(`NCCL topology file on the 8-GPU/8-NIC tree (${inv.gpus.length} GPUs, ${inv.nics.length} NICs), ${ROUNDS} rounds; state on ${where}`);

  // 1. The added work alone.
  const work: number[] = [];
  for (let i = 0; i < ROUNDS * 10 + WARM; i++) {
    const file = path.join(stateRoot, `nccl-topo-${i}.xml`);
    const t0 = performance.now();
    writeNew(file, renderNcclXml(await readNcclTopo(host, inv)), 0o444);
    if (i >= WARM) work.push(performance.now() - t0);
    rmSync(file);
  }
  line(`  1. added work (read, build, render, write): p50 ${f(median(work))} ms, p95 ${f(p95(work))} ms, min ${f(Math.min(...work))} ms`);

  // 2. The per-job state as the Prolog records it, on and off alternating.
  const stateDir = path.join(stateRoot, 'state-inproc');
  const uid = String(process.getuid!());
  const rec: [number[], number[]] = [[], []];
  const cpu: [number[], number[]] = [[], []]; // CPU time: on a loaded machine the wall time is mostly waiting for a core
  let job = 1000;
  for (let i = 0; i < ROUNDS * 10 + WARM; i++) {
    for (const k of [0, 1] as const) {
      const env = { SLURM_JOB_ID: String(++job), SLURM_JOB_UID: uid, SLURM_JOB_GID: String(process.getgid!()), SLURM_JOB_GPUS: '0,1,2,3,4,5,6,7' };
      const t0 = performance.now();
      const c0 = process.cpuUsage();
      const r = await recordJobState({ stateDir, env, node: 'gpu001', host, inv, memlockMin: 'unlimited', ncclTopo: k === 1 });
      const took = performance.now() - t0;
      const c = process.cpuUsage(c0);
      if (i >= WARM) cpu[k].push((c.user + c.system) / 1000);
      if (!r.ok || r.ncclTopoWhy !== undefined) throw new Error(`recordJobState: ${r.ok ? r.ncclTopoWhy : r.why}`);
      if (i >= WARM) rec[k].push(took);
      rmSync(path.join(stateDir, jobDirName(String(job))), { recursive: true, force: true });
    }
  }
  line(`  2. per-job state (recordJobState), ncclTopo off: p50 ${f(median(rec[0]))} ms, min ${f(Math.min(...rec[0]))} ms; on: p50 ${f(median(rec[1]))} ms, min ${f(Math.min(...rec[1]))} ms; added: p50 ${f(median(rec[1]) - median(rec[0]))} ms, min ${f(Math.min(...rec[1]) - Math.min(...rec[0]))} ms`);
  line(`     its CPU time, off: p50 ${f(median(cpu[0]))} ms; on: p50 ${f(median(cpu[1]))} ms; added: p50 ${f(median(cpu[1]) - median(cpu[0]))} ms, min ${f(Math.min(...cpu[1]) - Math.min(...cpu[0]))} ms`);

  // 3. The Prolog as Slurm starts it, on and off alternating.
  const cap = spawnSync(process.execPath, [CLI, 'baseline', 'capture', '--root', tree, '--class', 'hgx', '--match', '*'], { encoding: 'utf8' });
  if (cap.status !== 0) throw new Error(`baseline capture failed: ${cap.stderr}`);
  const configs = [false, true].map((on) => {
    const b = JSON.parse(cap.stdout) as { classes: Record<string, unknown>[] };
    if (on) b.classes[0]!.ncclTopo = true;
    writeFileSync(path.join(dir, `baseline-${on}.json`), JSON.stringify(b));
    const c = path.join(dir, `config-${on}.json`);
    writeFileSync(c, JSON.stringify({ baseline: path.join(dir, `baseline-${on}.json`), root: tree, scontrol: '/bin/false', logFile: path.join(dir, 'gate.log'), stateDir: path.join(stateRoot, 'state') }));
    return c;
  });
  const ms: [number[], number[]] = [[], []];
  for (let i = 0; i < ROUNDS + WARM; i++) {
    for (const k of [0, 1] as const) {
      const env = { SLURMD_NODENAME: 'gpu001', SLURM_JOB_ID: String(++job), SLURM_JOB_UID: uid, SLURM_JOB_GID: String(process.getgid!()), SLURM_JOB_GPUS: '0,1,2,3,4,5,6,7' };
      const t0 = performance.now();
      const r = spawnSync(process.execPath, [CLI, 'prolog', '--config', configs[k]!], { env, encoding: 'utf8' });
      const took = performance.now() - t0;
      if (r.status !== 0) throw new Error(`prolog exit ${r.status}: ${r.stderr}`);
      if (i >= WARM) ms[k].push(took); // the first rounds warm the page cache
    }
  }
  line(`  3. prolog (node dist/cli.js), ncclTopo off: p50 ${f(median(ms[0]))} ms; on: p50 ${f(median(ms[1]))} ms; difference ${f(median(ms[1]) - median(ms[0]))} ms`);
  rmSync(dir, { recursive: true, force: true });
  if (shm) rmSync(shm, { recursive: true, force: true });
}

await main();
