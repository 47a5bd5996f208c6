// Shared by the epilog tests: a two-rail node (GPU and HCA per socket, generated sysfs), a baseline with bands, a
// config whose probe tools are the stand-ins in test/fixtures/probe-bin, and a fake scontrol that records drains.
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';

import path from 'node:path';
import { buildTree, type GenDevice, type GenNode } from '../gen/sysfs-tree.js';
import { cli, type CliRun } from '../helpers/cli.js';
import { REPO } from '../helpers/paths.js';
import { captureBaseline, fakeScontrol } from '../helpers/fake-scontrol.js';
import { scratchDir } from '../helpers/scratch.js';

export const PROBE_BIN = path.join(REPO, 'test/fixtures/probe-bin');
export const bin = (name: string): string => path.join(PROBE_BIN, name);

const nic = (bdf: string, name: string): GenDevice => ({
  bdf, kind: 'nic', device: 0x1021, speed: 32, width: 16,
  ib: { name, ports: [{ state: '4: ACTIVE', physState: '5: LinkUp', rate: '400 Gb/sec (4X NDR)', linkLayer: 'InfiniBand' }] },
});
const gpu = (bdf: string): GenDevice => ({ bdf, kind: 'gpu', speed: 32, width: 16 });
const rootPort = (bdf: string, child: GenDevice): GenDevice => ({ bdf, kind: 'rootport', speed: 32, width: 16, children: [child] });

/** Socket 0: GPU 0000:41:00.0 and mlx5_0 behind two root ports of one host bridge; socket 1 the same at 0x82/0x83. */
const sock = (h: number, g: number, n: number, name: string, numa: number) => ({
  domainBus: `0000:${h.toString(16)}`,
  numaNode: numa,
  devices: [rootPort(`0000:${h.toString(16)}:01.0`, gpu(`0000:${g.toString(16)}:00.0`)), rootPort(`0000:${h.toString(16)}:02.0`, nic(`0000:${n.toString(16)}:00.0`, name))],
});

/** `rails` sockets of one GPU and one HCA each (GPU 0000:41:00.0 with mlx5_0, GPU 0000:82:00.0 with mlx5_1). */
export function twoRail(rails = 2): GenNode {
  return node([sock(0x40, 0x41, 0x42, 'mlx5_0', 0), sock(0x80, 0x82, 0x83, 'mlx5_1', 1)].slice(0, rails));
}

/** One rail whose GPU sits at bus `gpuBus` (0000:<gpuBus>:00.0), its HCA mlx5_0 next to it: where a capture's GPU was. */
export function railAt(gpuBus: number): GenNode {
  return node([sock(gpuBus - 1, gpuBus, gpuBus + 1, 'mlx5_0', 0)]);
}

/**
 * A Hyper-V vPCI node (Azure ND H100 v5): every GPU and HCA in a PCI domain of its own, each at bus:device 00:00 on
 * its host bridge (GPUs 0001:00:00.0, 0002:00:00.0 …; HCAs 0101:00:00.0 …), rail i on NUMA node i.
 */
export function vpci(rails = 2): GenNode {
  const one = (domain: number, d: GenDevice, numa: number) => ({ domainBus: `${domain.toString(16).padStart(4, '0')}:00`, numaNode: numa, devices: [d] });
  return node(Array.from({ length: rails }, (_, i) => [one(i + 1, gpu(`000${i + 1}:00:00.0`), i), one(0x101 + i, nic(`0${(0x101 + i).toString(16)}:00:00.0`, `mlx5_${i}`), i)]).flat());
}

function node(hostBridges: ReturnType<typeof sock>[]): GenNode {
  return {
    hostBridges,
    numa: [{ id: 0, cpus: '0-7' }, { id: 1, cpus: '8-15' }],
    driver: { version: '570.133.20', open: true },
    kernel: '6.8.0-60-generic',
    peermem: true,
    memlockKiB: 'unlimited',
    hostname: 'gpu001',
  };
}

export interface EpilogEnv {
  readonly dir: string;
  readonly tree: string;
  readonly config: string;
  readonly baseline: string;
  readonly spool: string;
  readonly log: string;
  writeConfig(probes: Record<string, unknown>, extra?: Record<string, unknown>): void;
  /** Replaces the class's bands (envelopes) in the baseline. */
  setEnvelopes(envelopes: unknown[]): void;
  epilog(job: string, args?: string[]): CliRun;
  drainCalls(): string[];
  /** Marks the fake node drained by someone else (an admin). */
  adminDrain(reason: string): void;
}

export async function makeEpilogEnv(rails = 1): Promise<EpilogEnv> {
  const dir = scratchDir('gdrgate-epilog-');
  chmodSync(dir, 0o755);
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const tree = path.join(dir, 'tree');
  await buildTree(tree, twoRail(rails));
  const baseline = path.join(dir, 'baseline.json');
  captureBaseline(tree, 'rail', baseline);
  const sc = fakeScontrol(dir);
  const config = path.join(dir, 'config.json');
  const spool = path.join(dir, 'spool');
  const log = path.join(dir, 'gate.log');
  mkdirSync(path.join(dir, 'run'));
  return {
    dir, tree, config, baseline, spool, log,
    writeConfig(probes, extra = {}) {
      writeFileSync(config, JSON.stringify({ baseline, root: tree, scontrol: sc.path, logFile: log, stateDir: path.join(dir, 'run'), spool, probes, ...extra }));
    },
    setEnvelopes(envelopes) {
      const b = JSON.parse(readFileSync(baseline, 'utf8')) as { classes: Record<string, unknown>[] };
      b.classes[0]!.probes = envelopes;
      writeFileSync(baseline, JSON.stringify(b, null, 2));
    },
    epilog(job, args = []) {
      return cli(['epilog', '--config', config, ...args], { SLURMD_NODENAME: 'gpu001', SLURM_JOB_ID: job, SLURM_SCRIPT_CONTEXT: 'epilog_slurmd' });
    },
    drainCalls: sc.drainCalls,
    adminDrain: sc.adminDrain,
  };
}
