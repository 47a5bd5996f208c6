// topology-distance: GPU↔NIC path classes (PIX inside a pair, NODE within a socket, SYS across) and NUMA placement.
import { promises as fsp } from 'node:fs';
import { allDevices, type GenNode } from '../gen/sysfs-tree.js';
import { node as DGX1 } from '../gen/topologies/dgx1v-8xv100-4nic.js';
import { node as P40 } from '../gen/topologies/paddle-8xp40-plx-cascade.js';
import { captureFrom, dev, detach, GPUS, HGX, inventoryOf, NICS, P0, patches, probe, put, remove, runCheck, softRoce, table, unreadable, type Want } from './_trees.js';

const NEAR_TO_FAR = ['PIX', 'PXB', 'PHB', 'NODE', 'SYS'];
/** A pair farther apart than on the reference fails; one that came closer is only flagged. */
const path = (g: number, nic: string, expected: string, actual: string): Want => ({
  status: NEAR_TO_FAR.indexOf(actual) > NEAR_TO_FAR.indexOf(expected) ? 'fail' : 'warn',
  code: 'topology-changed', subject: `${GPUS[g]}-${nic}`, expected, actual,
});
const remote = (bdf: string): Want => ({ status: 'warn', code: 'topology-remote-nic', subject: bdf, expected: 'not SYS', actual: 'SYS' });
const na: Want = { status: 'skip', code: 'topology-na', subject: 'node' };
/** A GPU with no RDMA adapter that has a PCI function to place against. */
const unplaced = (bdf: string): Want => ({ status: 'skip', code: 'topology-unknown', subject: bdf });
/** The RDMA adapters pulled, a soft-RoCE rxe0 (no PCI function) the only RDMA device left. */
const noPciNics = (n: GenNode): void => NICS.forEach((b) => detach(n, b));
const GPU_PIX0: Want = { status: 'pass', code: 'topology-ok', subject: `${P0.gpu}-mlx5_0`, expected: 'PIX', actual: 'PIX' };

/** mlx5_0 pulled from pair 0's switch and put in a free slot of pair 4's switch (socket 1): 99:02.0 → 9c:00.0. */
function moveNic0ToSocket1(n: GenNode): void {
  const nic = { ...dev(n, P0.nic), bdf: '0000:9c:00.0' };
  detach(n, '0000:17:01.0');
  dev(n, '0000:98:00.0').children!.push({ bdf: '0000:99:02.0', kind: 'switch-down', speed: 32, acsCtl: 0, children: [nic] });
}

/** Every path that changes when mlx5_0 lands on socket 1: PIX/NODE→SYS fail, SYS→PIX/NODE warn. */
const moved = [
  path(0, 'mlx5_0', 'PIX', 'SYS'),
  ...[1, 2, 3].map((g) => path(g, 'mlx5_0', 'NODE', 'SYS')),
  path(4, 'mlx5_0', 'SYS', 'PIX'),
  ...[5, 6, 7].map((g) => path(g, 'mlx5_0', 'SYS', 'NODE')),
];
/** Pair 0's host bridge reported on node 1 (BIOS SNC/SRAT change): GPU0, mlx5_0 and their switch ports move node. */
const pair0OnNode1 = [
  ...[1, 2, 3].map((k) => path(0, `mlx5_${k}`, 'NODE', 'SYS')),
  ...[4, 5, 6, 7].map((k) => path(0, `mlx5_${k}`, 'SYS', 'NODE')),
  ...[1, 2, 3].map((g) => path(g, 'mlx5_0', 'NODE', 'SYS')),
  ...[4, 5, 6, 7].map((g) => path(g, 'mlx5_0', 'SYS', 'NODE')),
  ...[P0.downGpu, P0.downNic, P0.gpu, P0.nic].map((bdf): Want => ({ status: 'fail', code: 'topology-numa-changed', subject: bdf, expected: '0', actual: '1' })),
];

/** Socket 0's adapters pulled, numa_node -1 on every host bridge (each device's local CPUs: all of them). */
const noAffinity = (n: GenNode): void => {
  NICS.slice(0, 4).forEach((b) => detach(n, b));
  n.hostBridges.forEach((hb) => void (hb.numaNode = -1));
};
/** The same on a node whose CPUs all lie on one NUMA node. */
const oneNode = (n: GenNode): void => {
  noAffinity(n);
  n.numa = [{ id: 0, cpus: n.numa.map((x) => x.cpus).join(',') }];
};

export const cases = table('topology-distance', [
  {
    name: 'invalid with baseline: GPU0\'s numa_node reads -1 (firmware lost its proximity data) where the reference had 0',
    change: (n) => void (dev(n, P0.gpu).numaNode = -1),
    subjects: [P0.gpu],
    bare: [{ status: 'pass', code: 'topology-ok', subject: P0.gpu, expected: 'not SYS', actual: 'PIX' }],
    based: [{ status: 'fail', code: 'topology-numa-changed', subject: P0.gpu, expected: '0', actual: 'none' }],
  },
  {
    name: 'invalid with baseline: the reference recorded GPU0 without a NUMA node (numa_node -1), it now reads 0: a NUMA change all the same',
    ref: (n) => void (dev(n, P0.gpu).numaNode = -1),
    subjects: [P0.gpu],
    bare: [{ status: 'pass', code: 'topology-ok', subject: P0.gpu, expected: 'not SYS', actual: 'PIX' }],
    based: [{ status: 'fail', code: 'topology-numa-changed', subject: P0.gpu, expected: 'none', actual: '0' }],
  },
  {
    name: "without baseline: mlx5_1's device link unreadable: GPU0's PIX mlx5_0 is nearest for sure (pass), GPU1's nearest is not known (skip)",
    patch: patches(remove('sys/class/infiniband/mlx5_1/device'), put('sys/class/infiniband/mlx5_1/device', 'x\n')),
    subjects: [P0.gpu, GPUS[1]!],
    bare: [{ status: 'pass', code: 'topology-ok', subject: P0.gpu, expected: 'not SYS', actual: 'PIX' }, unplaced(GPUS[1]!)],
    based: [],
  },
  {
    name: 'valid: HGX as built (PIX in each pair, NODE within a socket, SYS across)',
    subjects: [P0.gpu, `${P0.gpu}-mlx5_0`],
    bare: [{ status: 'pass', code: 'topology-ok', subject: P0.gpu, expected: 'not SYS', actual: 'PIX' }],
    based: [GPU_PIX0],
  },
  {
    name: 'invalid with baseline: mlx5_0 moved to a switch on the other socket',
    change: moveNic0ToSocket1,
    bare: [],
    based: moved,
  },
  {
    name: 'warn without baseline: socket 0 has no RDMA adapter, GPU0-3 only reach SYS NICs',
    change: (n) => NICS.slice(0, 4).forEach((b) => detach(n, b)),
    bare: GPUS.slice(0, 4).map(remote),
    based: [],
  },
  // numa_node -1 on every host bridge (firmware without proximity data: the kernel gives each device every CPU as
  // local) on a two-socket node: a GPU and an adapter on different host bridges may share a socket (NODE) or not
  // (SYS). It was NODE, so GPU0-3, whose adapters are all on socket 1, passed as near.
  {
    name: 'skip without baseline: no NUMA affinity on a two-socket node, socket 0 without an RDMA adapter: NODE or SYS cannot be told, never a pass',
    change: noAffinity,
    ref: noAffinity,
    subjects: GPUS.slice(0, 4),
    bare: GPUS.slice(0, 4).map(unplaced),
    based: [],
  },
  {
    name: 'valid without baseline: no NUMA affinity on a node whose only CPUs lie on one NUMA node: NODE across host bridges (one NUMA node to lie on)',
    change: oneNode,
    ref: oneNode,
    subjects: GPUS.slice(0, 4),
    bare: GPUS.slice(0, 4).map((bdf): Want => ({ status: 'pass', code: 'topology-ok', subject: bdf, expected: 'not SYS', actual: 'NODE' })),
    based: [],
  },
  {
    name: 'warn without baseline: 8x P40 with the only NIC on the other socket (valid against its own baseline)',
    from: P40,
    bare: allDevices(P40).filter((d) => d.kind === 'gpu').map((d) => remote(d.bdf)),
    based: [],
  },
  {
    name: 'invalid with baseline: pair 0 host bridge now reports numa_node 1',
    change: (n) => void (n.hostBridges[0]!.numaNode = 1),
    bare: [],
    based: pair0OnNode1,
  },
  {
    name: 'skip with baseline: GPU0 numa_node holds garbage: unknown, not "none" and not a NUMA change',
    patch: put(`sys/bus/pci/devices/${P0.gpu}/numa_node`, 'garbage\n'),
    bare: [],
    based: [{ status: 'skip', code: 'topology-numa-unknown', subject: P0.gpu, expected: '0' }],
  },
  // A NUMA node's cpulist that could not be read was once "this node has no CPUs": a GPU without a NUMA node whose
  // local CPUs span both sockets (numa_node -1, as firmware without proximity data leaves it) then lay on node 0
  // alone, and its NODE paths to the adapters on node 1 read SYS: four fails on a healthy node.
  {
    name: 'skip with baseline: node1\'s cpulist unreadable while GPU0 has no numa_node: its paths off its switch are unknown, never SYS',
    change: (n) => void (dev(n, P0.gpu).numaNode = -1),
    patch: unreadable('sys/devices/system/node/node1/cpulist'),
    subjects: [1, 2, 3, 4, 5, 6, 7].map((k) => `${P0.gpu}-mlx5_${k}`),
    bare: [],
    based: [1, 2, 3, 4, 5, 6, 7].map((k): Want => ({ status: 'skip', code: 'topology-unknown', subject: `${P0.gpu}-mlx5_${k}` })),
  },
  {
    name: 'skip with baseline: node0\'s cpulist read empty (as a memory-only node\'s is) while GPU0 has no numa_node: CPUs of GPU0 that no node holds, its place unknown',
    change: (n) => void (dev(n, P0.gpu).numaNode = -1),
    patch: put('sys/devices/system/node/node0/cpulist', '\n'),
    subjects: [1, 2, 3, 4, 5, 6, 7].map((k) => `${P0.gpu}-mlx5_${k}`),
    bare: [],
    based: [1, 2, 3, 4, 5, 6, 7].map((k): Want => ({ status: 'skip', code: 'topology-unknown', subject: `${P0.gpu}-mlx5_${k}` })),
  },
  // An adapter whose /sys/bus/pci/devices entry cannot be resolved (a loop, EACCES) has no known place: it was put on
  // a host bridge named "unknown", unlike every other, and its PIX path to GPU0 read NODE (a fail).
  {
    name: 'skip with baseline: mlx5_0\'s /sys/bus/pci/devices entry a link to itself: its paths unknown, never NODE',
    patch: async (root) => {
      const entry = `${root}/sys/bus/pci/devices/${P0.nic}`;
      await fsp.rm(entry);
      await fsp.symlink(P0.nic, entry);
    },
    subjects: GPUS.map((g) => `${g}-mlx5_0`),
    bare: [],
    based: GPUS.map((g): Want => ({ status: 'skip', code: 'topology-unknown', subject: `${g}-mlx5_0` })),
  },
  {
    name: 'skip without baseline: the same, GPU1 (nearest placed adapter NODE) cannot tell its nearest: mlx5_0\'s path to it unknown',
    patch: async (root) => {
      const entry = `${root}/sys/bus/pci/devices/${P0.nic}`;
      await fsp.rm(entry);
      await fsp.symlink(P0.nic, entry);
    },
    subjects: [GPUS[0]!, GPUS[1]!],
    bare: [{ status: 'skip', code: 'topology-unknown', subject: GPUS[0]! }, { status: 'pass', code: 'topology-ok', subject: GPUS[1]!, expected: 'not SYS', actual: 'PIX' }],
    based: [],
  },
  {
    name: 'skip: no RDMA adapter (topology-na)',
    change: (n) => NICS.forEach((b) => detach(n, b)),
    bare: [na],
    based: [na],
  },
  {
    name: 'skip without baseline: the only RDMA device a soft-RoCE rxe0 (no PCI function): topology-unknown per GPU, never a pass',
    change: noPciNics,
    patch: softRoce(),
    subjects: GPUS,
    bare: GPUS.map(unplaced),
    based: [],
  },
  {
    name: 'valid: a soft-RoCE rxe0 beside the HGX NICs: each GPU still placed against its PCI NICs',
    patch: softRoce(),
    subjects: [P0.gpu, `${P0.gpu}-mlx5_0`, `${P0.gpu}-rxe0`],
    bare: [{ status: 'pass', code: 'topology-ok', subject: P0.gpu, expected: 'not SYS', actual: 'PIX' }],
    based: [GPU_PIX0],
  },
  {
    name: 'skip with baseline: mlx5_0 no longer resolves to a PCI function (no device link): its baseline paths cannot be computed',
    patch: remove('sys/class/infiniband/mlx5_0/device'),
    bare: [],
    based: GPUS.map((g): Want => ({ status: 'skip', code: 'topology-unknown', subject: `${g}-mlx5_0` })),
  },
  {
    name: 'valid with baseline: mlx5_0 and mlx5_4 swapped names (probe order), every adapter at its address: no path changed',
    change: (n) => {
      dev(n, P0.nic).ib!.name = 'mlx5_4';
      dev(n, NICS[4]!).ib!.name = 'mlx5_0';
    },
    subjects: [`${P0.gpu}-mlx5_0`, `${GPUS[4]}-mlx5_4`],
    bare: [],
    based: [GPU_PIX0, { status: 'pass', code: 'topology-ok', subject: `${GPUS[4]}-mlx5_4`, expected: 'PIX', actual: 'PIX' }],
  },
  {
    name: 'skip with baseline: a class that records no GPU↔NIC path (topology-na), nothing judged of the paths',
    edit: { paths: [] },
    bare: [],
    based: [na],
  },
  {
    name: 'valid: DGX-1 (PIX, PHB, SYS mix) against its own baseline',
    from: DGX1,
    bare: [],
    based: [],
  },
]);

// Regression: the path class of a NIC without PCI function is '?', which RANK does not know; the GPU used to pass on it.
probe('only RDMA device a soft-RoCE rxe0 (no PCI function): every GPU is topology-unknown (skip), none passes', async (t) => {
  const n = structuredClone(HGX);
  noPciNics(n);
  const inv = await inventoryOf(n, softRoce());
  const line = (w: Want): string => `${w.status} ${w.code} ${w.subject}`;
  t.strictSame(runCheck('topology-distance', inv, null).map(line), GPUS.map(unplaced).map(line), 'without baseline: one skip per GPU, nothing else');
  const own = runCheck('topology-distance', inv, captureFrom(inv));
  t.strictSame(own.filter((f) => f.status !== 'skip').map(line), [], 'against its own baseline: no pass, warn or fail');
});

// A reference whose GPU0 numa_node could not be read records none for it (capture leaves it out): nothing to compare.
probe('the reference could not read GPU0\'s numa_node: no NUMA finding of GPU0 against it, the node passes', async (t) => {
  const ref = await inventoryOf(structuredClone(HGX), put(`sys/bus/pci/devices/${P0.gpu}/numa_node`, 'garbage\n'));
  const cls = captureFrom(ref);
  const gpu0 = cls.devices.find((d) => d.bdf === P0.gpu);
  t.equal(gpu0?.role, 'gpu', 'the class records GPU0');
  t.equal(gpu0?.numaNode, undefined, 'with no NUMA node');
  t.equal(cls.paths.length, 64, 'and every GPU↔NIC path (8 x 8)');
  const fs = runCheck('topology-distance', await inventoryOf(structuredClone(HGX)), cls);
  t.strictSame(fs.filter((f) => f.status !== 'pass').map((f) => `${f.status} ${f.code} ${f.subject}`), [], 'no skip, warn or fail');
  t.equal(fs.length, cls.paths.length, 'one pass per recorded path');
});
