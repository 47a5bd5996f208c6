// pcie-relaxed-ordering: Device Control bit 4 of each RDMA adapter (ConnectX-7 on HGX: RlxdOrd+ in lspci's DevCtl).
import { allDevices, type GenNode } from '../gen/sysfs-tree.js';
import { node as P40 } from '../gen/topologies/paddle-8xp40-plx-cascade.js';
import { node as SIMAI } from '../gen/topologies/simai-hgx-8xa100-cx6dx-bond.js';
import { node as DGX1V } from '../gen/topologies/dgx1v-8xv100-4nic.js';
import { node as GX3D } from '../gen/topologies/ibm-gx3d-8xh100-vsi.js';
import { dev, detach, HGX, NICS, P0, table, type Want } from './_trees.js';

const roOff = (bdf: string) => (n: GenNode): void => void (dev(n, bdf).relaxedOrdering = false);
const ok = (subject: string, expected = 'on', actual = 'on'): Want => ({ status: 'pass', code: 'ro-ok', subject, expected, actual });
const off = (status: 'warn' | 'fail'): Want => ({ status, code: 'ro-off', subject: P0.nic, expected: 'on', actual: 'off' });
const P40_NIC = allDevices(P40).find((d) => d.kind === 'nic')!.bdf;
const nicsOf = (n: GenNode): string[] => allDevices(n).filter((d) => d.kind === 'nic').map((d) => d.bdf);
/** What probe.c does below a quirked root port (and what a VF reads): RlxdOrd- on every adapter and GPU. */
const allOff = (n: GenNode): void => allDevices(n).forEach((d) => { if (d.kind === 'nic' || d.kind === 'gpu') d.relaxedOrdering = false; });
const asRef = (b: string): Want => ({ status: 'pass', code: 'ro-ok', subject: b, expected: 'off', actual: 'off' });

/** Pair 0's root port given these IDs; mlx5_0 below it with RlxdOrd- (or + with `on`). */
const rootIds = (vendor: number, device: number, on = false) => (n: GenNode): void => {
  Object.assign(dev(n, P0.rp), { vendor, device });
  if (!on) roOff(P0.nic)(n);
};
const hex = (v: number): string => v.toString(16).padStart(4, '0');
/** quirks.c quirk_relaxedordering_disable: 8086:6f01-6f0e, 8086:2f01-2f0e, 1022:1a00-1a02; each range's ends and one past them. */
const QUIRKED = [[0x8086, 0x6f01], [0x8086, 0x6f0e], [0x8086, 0x2f01], [0x8086, 0x2f0e], [0x1022, 0x1a00], [0x1022, 0x1a02]] as const;
const NOT_QUIRKED = [[0x8086, 0x6f00], [0x8086, 0x6f0f], [0x8086, 0x2f00], [0x8086, 0x2f0f], [0x1022, 0x19ff], [0x1022, 0x1a03], [0x1022, 0x6f04]] as const;
/** GPU0 moved off pair 0's switch to a root port of its own on the same host bridge: mlx5_0's nearest GPU is PHB. */
const gpu0OwnRootPort = (n: GenNode): void => {
  const gpu = { ...dev(n, P0.gpu), bdf: '0000:1c:00.0' };
  detach(n, P0.gpu);
  n.hostBridges[0]!.devices.push({ bdf: '0000:15:02.0', kind: 'rootport', speed: 32, children: [gpu] });
};

export const cases = table('pcie-relaxed-ordering', [
  {
    name: 'invalid: RlxdOrd- on a SimAI A100 adapter whose nearest GPU is PXB (behind two switches): warn',
    from: SIMAI,
    change: roOff('0000:1a:00.0'),
    subjects: ['0000:1a:00.0'],
    bare: [{ status: 'warn', code: 'ro-off', subject: '0000:1a:00.0', expected: 'on', actual: 'off' }],
    based: [{ status: 'fail', code: 'ro-off', subject: '0000:1a:00.0', expected: 'on', actual: 'off' }],
  },
  {
    name: 'valid: healthy HGX, RlxdOrd+ on every ConnectX-7',
    subjects: NICS,
    bare: NICS.map((b) => ok(b)),
    based: NICS.map((b) => ok(b)),
  },
  {
    name: 'invalid: RlxdOrd- on mlx5_0 (GPU0 under the same switch): warn alone, fail against the reference',
    change: roOff(P0.nic),
    bare: [off('warn')],
    based: [off('fail')],
  },
  {
    name: 'valid with baseline: RlxdOrd- where the reference had it off too (a platform that quirks it)',
    change: roOff(P0.nic),
    ref: roOff(P0.nic),
    subjects: [P0.nic],
    bare: [off('warn')],
    based: [ok(P0.nic, 'off', 'off')],
  },
  {
    name: 'skip: non-root read (64-byte configs): Device Control unreadable, never pass',
    change: (n) => allDevices(n).forEach((d) => (d.configBytes = 64)),
    subjects: NICS,
    bare: NICS.map((b): Want => ({ status: 'skip', code: 'ro-unreadable', subject: b })),
    based: NICS.map((b): Want => ({ status: 'skip', code: 'ro-unreadable', subject: b })),
  },
  {
    name: 'skip: no RDMA adapter (ro-na)',
    change: (n) => allDevices(HGX).filter((d) => d.kind === 'nic').forEach((d) => detach(n, d.bdf)),
    bare: [{ status: 'skip', code: 'ro-na', subject: 'node' }],
    based: [{ status: 'skip', code: 'ro-na', subject: 'node' }],
  },
  {
    name: 'RlxdOrd- on the P40 cascade\'s only NIC (below a Broadwell-EP root port, 8086:6f04): the quirk\'s pass alone, a fail against a reference that had it on',
    from: P40,
    change: roOff(P40_NIC),
    subjects: [P40_NIC],
    bare: [{ status: 'pass', code: 'ro-quirk-ok', subject: P40_NIC, expected: 'off below a quirked root port', actual: 'off' }],
    based: [{ status: 'fail', code: 'ro-off', subject: P40_NIC, expected: 'on', actual: 'off' }],
  },
  {
    name: 'valid: DGX-1V below Broadwell-EP root ports (8086:6f04, 6f08), where the kernel clears RlxdOrd (quirks.c): a pass that says why',
    from: DGX1V,
    change: allOff,
    ref: allOff,
    subjects: nicsOf(DGX1V),
    bare: nicsOf(DGX1V).map((b): Want => ({ status: 'pass', code: 'ro-quirk-ok', subject: b, expected: 'off below a quirked root port', actual: 'off' })),
    based: nicsOf(DGX1V).map(asRef),
  },
  {
    name: 'skip: the ConnectX-7 VFs of the IBM gx3d VM (0x101e), whose RlxdOrd bit is reserved and reads 0; as the reference with one',
    from: GX3D,
    change: allOff,
    ref: allOff,
    subjects: nicsOf(GX3D),
    bare: nicsOf(GX3D).map((b): Want => ({ status: 'skip', code: 'ro-vf-unknown', subject: b })),
    based: nicsOf(GX3D).map(asRef),
  },
  ...QUIRKED.map(([v, d]) => ({
    name: `valid alone: RlxdOrd- on mlx5_0 below a quirked root port ${hex(v)}:${hex(d)}: the kernel's doing`,
    change: rootIds(v, d),
    subjects: [P0.nic],
    bare: [{ status: 'pass', code: 'ro-quirk-ok', subject: P0.nic, expected: 'off below a quirked root port', actual: 'off' } as Want],
    based: [off('fail')],
  })),
  ...NOT_QUIRKED.map(([v, d]) => ({
    name: `invalid: RlxdOrd- on mlx5_0 below root port ${hex(v)}:${hex(d)}, which the kernel does not quirk`,
    change: rootIds(v, d),
    subjects: [P0.nic],
    bare: [off('warn')],
    based: [off('fail')],
  })),
  {
    name: 'valid: RlxdOrd+ on mlx5_0 below a quirked root port (8086:6f04; set by hand after probe): on, not the quirk\'s off',
    change: rootIds(0x8086, 0x6f04, true),
    subjects: [P0.nic],
    bare: [ok(P0.nic)],
    based: [ok(P0.nic)],
  },
  {
    name: 'valid alone: RlxdOrd- on mlx5_0 whose nearest GPU is PHB (GPU0 on another root port of the host bridge): no GPU under its switch',
    change: (n) => { gpu0OwnRootPort(n); roOff(P0.nic)(n); },
    subjects: [P0.nic],
    bare: [ok(P0.nic, 'on where a GPU is near', 'off')],
    based: [off('fail')],
  },
]);
