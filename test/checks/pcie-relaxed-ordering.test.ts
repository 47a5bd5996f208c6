// pcie-relaxed-ordering: Device Control bit 4 of each RDMA adapter (ConnectX-7 on HGX: RlxdOrd+ in lspci's DevCtl).
import { allDevices, type GenNode } from '../gen/sysfs-tree.js';
import { node as P40 } from '../gen/topologies/paddle-8xp40-plx-cascade.js';
import { node as SIMAI } from '../gen/topologies/simai-hgx-8xa100-cx6dx-bond.js';
import { dev, detach, HGX, NICS, P0, table, type Want } from './_trees.js';

const roOff = (bdf: string) => (n: GenNode): void => void (dev(n, bdf).relaxedOrdering = false);
const ok = (subject: string, expected = 'on', actual = 'on'): Want => ({ status: 'pass', code: 'ro-ok', subject, expected, actual });
const off = (status: 'warn' | 'fail'): Want => ({ status, code: 'ro-off', subject: P0.nic, expected: 'on', actual: 'off' });
const P40_NIC = allDevices(P40).find((d) => d.kind === 'nic')!.bdf;

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
    name: 'RlxdOrd- on the P40 cascade\'s only NIC (no GPU shares its switch, SYS): a pass alone, a fail against the reference',
    from: P40,
    change: roOff(P40_NIC),
    subjects: [P40_NIC],
    bare: [ok(P40_NIC, 'on where a GPU is near', 'off')],
    based: [{ status: 'fail', code: 'ro-off', subject: P40_NIC, expected: 'on', actual: 'off' }],
  },
]);
