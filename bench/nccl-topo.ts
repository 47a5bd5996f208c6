// What the NCCL topology file (baseline ncclTopo) adds to the Prolog, on the 8-GPU/8-NIC HGX H100 tree of
// test/gen (plus the NVSwitches and NVMe drives such a node carries, as bench/prolog.ts builds it).
//   npm run build && npx tsc -p bench/tsconfig.json && node .bench/bench/nccl-topo.js
// Two measures: in process, the added work itself (the file's reads, build, render and write, over an inventory
// already gathered, as the Prolog has it); and the Prolog as Slurm starts it (node dist/cli.js prolog), ncclTopo on
// and off alternating in one run, a new job each time. Goal: under 1 ms more (docs/nccl-topo.md).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FsHost } from '../src/host/fs-host.js';
import { buildInventory } from '../src/inventory/build.js';
import { readNcclTopo } from '../src/topo/nccl-read.js';
import { renderNcclXml } from '../src/topo/nccl-xml.js';
import { buildTree, type GenDevice, type GenNode } from '../test/gen/sysfs-tree.js';
import { node as hgx } from '../test/gen/topologies/sglang30401-hgx-h100.js';

const REPO = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const CLI = path.join(REPO, 'dist/cli.js');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 30);
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const p95 = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.95)]!;

function withOthers(n: GenNode): GenNode {
  const other = (bus: number, cls: number, vendor: number, device: number): GenDevice =>
    ({ bdf: `0000:${bus.toString(16).padStart(2, '0')}:00.0`, kind: 'other', classCode: cls, vendor, device, speed: 16 }) as GenDevice;
  const extra = [0x05, 0x06, 0x07, 0x08].map((b) => other(b, 0x068000, 0x10de, 0x22a3));
  const nvme = [0x60, 0x61, 0x62, 0x63, 0xe0, 0xe1, 0xe2, 0xe3].map((b) => other(b, 0x010802, 0x144d, 0xa824));
  return { ...n, hostBridges: [...n.hostBridges, ...[...extra, ...nvme].map((d, i) => ({ domainBus: `0000:${d.bdf.slice(5, 7)}`, numaNode: i % 2, devices: [d] }))] };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'gdrgate-bench-nccl-'));
  const tree = path.join(dir, 'tree');
  await buildTree(tree, { ...withOthers(hgx), cpuModalias: 'cpu:type:x86,ven0000fam0006mod008F:feature:,0000' });

  // In process: the added work alone, over the inventory the Prolog already has.
  const host = new FsHost(tree);
  const inv = await buildInventory(host, { slurmdPidFiles: [] });
  const inproc: number[] = [];
  for (let i = 0; i < ROUNDS * 10; i++) {
    const t0 = performance.now();
    const xml = renderNcclTopoText(await readNcclTopo(host, inv));
    writeFileSync(path.join(dir, 'nccl-topo.xml'), xml, { mode: 0o444, flag: 'w' });
    inproc.push(performance.now() - t0);
    rmSync(path.join(dir, 'nccl-topo.xml'));
  }

  // The Prolog as Slurm starts it, on and off alternating.
  const cap = spawnSync(process.execPath, [CLI, 'baseline', 'capture', '--root', tree, '--class', 'hgx', '--match', '*'], { encoding: 'utf8' });
  if (cap.status !== 0) throw new Error(`baseline capture failed: ${cap.stderr}`);
  const configs = [false, true].map((on) => {
    const b = JSON.parse(cap.stdout) as { classes: Record<string, unknown>[] };
    if (on) b.classes[0]!.ncclTopo = true;
    writeFileSync(path.join(dir, `baseline-${on}.json`), JSON.stringify(b));
    const c = path.join(dir, `config-${on}.json`);
    writeFileSync(c, JSON.stringify({ baseline: path.join(dir, `baseline-${on}.json`), root: tree, scontrol: '/bin/false', logFile: path.join(dir, 'gate.log'), stateDir: path.join(dir, 'state') }));
    return c;
  });
  let job = 100;
  const ms: [number[], number[]] = [[], []];
  for (let i = 0; i < ROUNDS + 3; i++) {
    for (const k of [0, 1] as const) {
      const env = { SLURMD_NODENAME: 'gpu001', SLURM_JOB_ID: String(++job), SLURM_JOB_UID: String(process.getuid!()), SLURM_JOB_GID: String(process.getgid!()), SLURM_JOB_GPUS: '0,1,2,3,4,5,6,7' };
      const t0 = performance.now();
      const r = spawnSync(process.execPath, [CLI, 'prolog', '--config', configs[k]!], { env, encoding: 'utf8' });
      const took = performance.now() - t0;
      if (r.status !== 0) throw new Error(`prolog exit ${r.status}: ${r.stderr}`);
      if (i >= 3) ms[k].push(took); // three rounds warm the page cache
    }
  }
  rmSync(dir, { recursive: true, force: true });
  const f = (x: number): string => x.toFixed(2);
  process.stdout.write(`NCCL topology file on the 8-GPU/8-NIC tree (${inv.gpus.length} GPUs, ${inv.nics.length} NICs), ${ROUNDS} rounds\n`);
  process.stdout.write(`  added work in process (read, build, render, write): p50 ${f(median(inproc))} ms, p95 ${f(p95(inproc))} ms, min ${f(Math.min(...inproc))} ms\n`);
  process.stdout.write(`  prolog (node dist/cli.js), ncclTopo off: p50 ${f(median(ms[0]))} ms; on: p50 ${f(median(ms[1]))} ms; difference ${f(median(ms[1]) - median(ms[0]))} ms\n`);
}

const renderNcclTopoText = renderNcclXml;

await main();
