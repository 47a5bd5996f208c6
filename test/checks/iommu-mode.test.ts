// iommu-mode: the IOMMU domain type of every GPU and NIC group (identity on the HGX: intel_iommu=on iommu=pt).
import { allDevices, type GenNode } from '../gen/sysfs-tree.js';
import { node as GB300 } from '../gen/topologies/gb300-cx8-dma-direct.js';
import { node as TRAY } from '../gen/topologies/gb300-tray-numa.js';
import { captureFrom, detach, GPUS, HGX, inventoryOf, NICS, P0, probe, put, remove, runCheck, softRoce, table, type Want } from './_trees.js';

/** GPU i sits in IOMMU group 20+4i, its NIC in 21+4i (the HGX description). */
const DEVS = [...GPUS.map((bdf, i) => ({ bdf, group: 20 + 4 * i })), ...NICS.map((bdf, i) => ({ bdf, group: 21 + 4 * i }))];
const got = (group: number, type: string): string => `${type === 'identity' ? 'passthrough' : 'translated'} (group ${group}: ${type})`;
const each = (status: Want['status'], code: string, expected: string, type: string): Want[] =>
  DEVS.map(({ bdf, group }) => ({ status, code, subject: bdf, expected, actual: got(group, type) }));
const noIommu = (n: GenNode): void => {
  delete n.iommu;
  for (const d of allDevices(n)) delete d.iommuGroup;
};
const groupType = (type: string) => (n: GenNode): void => void (n.iommu!.groupType = type);
/** GB300 Data Direct: GPU 0009:06:00.0 and DMA function 0009:03:00.0 share group 100 (the segment's). */
const DD = { gpu: '0009:06:00.0', dma: '0009:03:00.0' } as const;
const shared: Want = { status: 'pass', code: 'iommu-ok', subject: DD.dma, expected: `group of ${DD.gpu}`, actual: 'group 100' };
const oldKernel = (n: GenNode): void => void Object.assign(n, { kernel: '6.8.0-1014-nvidia-64k', procVersion: undefined });
const gpu0 = (status: Want['status'], code: string, expected: string, type: string): Want => ({ status, code, subject: P0.gpu, expected, actual: got(20, type) });

export const cases = table('iommu-mode', [
  {
    name: 'skip: IOMMU on but no GPU and only a soft-RoCE rxe0 (no PCI function): not applicable, not silence',
    change: (n: GenNode): void => [...GPUS, ...NICS].forEach((b) => detach(n, b)),
    patch: softRoce(),
    bare: [{ status: 'skip', code: 'iommu-na', subject: 'node' }],
    based: [{ status: 'skip', code: 'iommu-na', subject: 'node' }],
  },
  {
    name: 'valid: identity domains (iommu=pt) on every GPU and NIC',
    subjects: [P0.gpu, P0.nic],
    bare: [gpu0('pass', 'iommu-ok', 'passthrough or off', 'identity'), { status: 'pass', code: 'iommu-ok', subject: P0.nic, expected: 'passthrough or off', actual: got(21, 'identity') }],
    based: [gpu0('pass', 'iommu-ok', 'passthrough', 'identity'), { status: 'pass', code: 'iommu-ok', subject: P0.nic, expected: 'passthrough', actual: got(21, 'identity') }],
  },
  {
    name: 'warn without baseline, fail against a passthrough baseline: GPU0 group type DMA-FQ',
    patch: put('sys/kernel/iommu_groups/20/type', 'DMA-FQ\n'),
    bare: [gpu0('warn', 'iommu-translated', 'passthrough or off', 'DMA-FQ')],
    based: [gpu0('fail', 'iommu-translated', 'passthrough', 'DMA-FQ')],
  },
  {
    name: 'warn / fail: GPU0 group type DMA (strict translation)',
    patch: put('sys/kernel/iommu_groups/20/type', 'DMA\n'),
    bare: [gpu0('warn', 'iommu-translated', 'passthrough or off', 'DMA')],
    based: [gpu0('fail', 'iommu-translated', 'passthrough', 'DMA')],
  },
  {
    name: 'warn / fail: every group DMA-FQ (iommu=pt lost)',
    change: groupType('DMA-FQ'),
    bare: each('warn', 'iommu-translated', 'passthrough or off', 'DMA-FQ'),
    based: each('fail', 'iommu-translated', 'passthrough', 'DMA-FQ'),
  },
  {
    name: 'invalid with baseline: class validated translated (DMA-FQ), node now identity',
    ref: groupType('DMA-FQ'),
    bare: [],
    based: each('fail', 'iommu-mode-changed', 'translated', 'identity'),
  },
  {
    name: 'valid without baseline, invalid against passthrough: no IOMMU at all',
    change: noIommu,
    subjects: ['node'],
    bare: [{ status: 'pass', code: 'iommu-ok', subject: 'node', expected: 'off', actual: 'off' }],
    based: [{ status: 'fail', code: 'iommu-mode-changed', subject: 'node', expected: 'passthrough', actual: 'off' }],
  },
  {
    name: 'invalid: baseline says off (captured without IOMMU) but groups are present',
    ref: noIommu,
    bare: [],
    based: each('fail', 'iommu-mode-changed', 'off', 'identity'),
  },
  {
    name: 'valid: no IOMMU, baseline captured without IOMMU',
    change: noIommu,
    ref: noIommu,
    subjects: ['node'],
    bare: [{ status: 'pass', code: 'iommu-ok', subject: 'node', expected: 'off', actual: 'off' }],
    based: [{ status: 'pass', code: 'iommu-ok', subject: 'node', expected: 'off', actual: 'off' }],
  },
  {
    name: 'skip: GPU0 group type file missing (cannot tell, never pass)',
    patch: remove('sys/kernel/iommu_groups/20/type'),
    subjects: [P0.gpu],
    bare: [{ status: 'skip', code: 'iommu-unknown', subject: P0.gpu }],
    based: [{ status: 'skip', code: 'iommu-unknown', subject: P0.gpu }],
  },
  {
    name: 'valid: GB300 Data Direct, the DMA function shares the GPU\'s IOMMU group (Linux 6.14, identity domains)',
    from: GB300,
    subjects: [DD.dma],
    bare: [shared],
    based: [shared],
  },
  {
    name: 'invalid: GB300 Data Direct, the DMA function in an IOMMU group of its own',
    from: GB300,
    change: (n) => void (allDevices(n).find((d) => d.bdf === DD.dma)!.iommuGroup = 140),
    subjects: [DD.dma],
    bare: [{ status: 'fail', code: 'iommu-group-split', subject: DD.dma, expected: `group of ${DD.gpu}`, actual: 'group 140' }],
    based: [{ status: 'fail', code: 'iommu-group-split', subject: DD.dma, expected: `group of ${DD.gpu}`, actual: 'group 140' }],
  },
  {
    name: 'invalid: GB300 Data Direct on Linux 6.8 with passthrough (iommu.passthrough=1): translated domains required',
    from: GB300,
    change: oldKernel,
    ref: oldKernel,
    subjects: [DD.gpu],
    bare: [{ status: 'fail', code: 'iommu-kernel-domain', subject: DD.gpu, expected: 'translated', actual: 'passthrough (group 100: identity)' }],
    based: [{ status: 'fail', code: 'iommu-kernel-domain', subject: DD.gpu, expected: 'translated', actual: 'passthrough (group 100: identity)' }],
  },
  {
    name: 'valid: GB300 Data Direct on Linux 6.8 with translated domains (DMA-FQ)',
    from: GB300,
    change: (n) => Object.assign(n, { kernel: '6.8.0-1014-nvidia-64k', procVersion: undefined, iommu: { ...n.iommu!, groupType: 'DMA-FQ' }, cmdline: 'BOOT_IMAGE=/boot/vmlinuz-6.8.0-1014-nvidia-64k ro' }),
    ref: (n) => Object.assign(n, { kernel: '6.8.0-1014-nvidia-64k', procVersion: undefined, iommu: { ...n.iommu!, groupType: 'DMA-FQ' } }),
    subjects: [DD.gpu],
    bare: [{ status: 'pass', code: 'iommu-ok', subject: DD.gpu, expected: 'translated', actual: 'translated (group 100: DMA-FQ)' }],
    based: [{ status: 'pass', code: 'iommu-ok', subject: DD.gpu, expected: 'translated', actual: 'translated (group 100: DMA-FQ)' }],
  },
  {
    name: 'invalid: GB300 tray on Grace root ports, two GPUs of NUMA node 1 share IOMMU group 22 (each needs its own)',
    from: TRAY,
    change: (n) => void (allDevices(n).find((d) => d.bdf === '0019:01:00.0')!.iommuGroup = 22),
    bare: [
      { status: 'fail', code: 'iommu-group-shared', subject: '0018:01:00.0', expected: 'a group of its own', actual: 'group 22' },
      { status: 'fail', code: 'iommu-group-shared', subject: '0019:01:00.0', expected: 'a group of its own', actual: 'group 22' },
    ],
    based: [
      { status: 'fail', code: 'iommu-group-shared', subject: '0018:01:00.0', expected: 'a group of its own', actual: 'group 22' },
      { status: 'fail', code: 'iommu-group-shared', subject: '0019:01:00.0', expected: 'a group of its own', actual: 'group 22' },
    ],
  },
  {
    name: 'valid: a soft-RoCE rxe0 (no PCI function, no IOMMU group) beside the HGX NICs is not judged',
    patch: softRoce(),
    subjects: [P0.gpu, P0.nic, 'rxe0'],
    bare: [gpu0('pass', 'iommu-ok', 'passthrough or off', 'identity'), { status: 'pass', code: 'iommu-ok', subject: P0.nic, expected: 'passthrough or off', actual: got(21, 'identity') }],
    based: [gpu0('pass', 'iommu-ok', 'passthrough', 'identity'), { status: 'pass', code: 'iommu-ok', subject: P0.nic, expected: 'passthrough', actual: got(21, 'identity') }],
  },
]);

// Regression: a NIC without PCI function (rxe0) has no IOMMU group; it was taken as mode 'off' and failed against a
// passthrough baseline captured from the very same node. It is not judged now: every PCI GPU and NIC passes, nothing else.
probe('soft-RoCE rxe0 (no PCI function) on the HGX: iommu-mode judges only the PCI GPUs and NICs, all pass against its own baseline', async (t) => {
  const inv = await inventoryOf(HGX, softRoce());
  const baseline = captureFrom(inv);
  t.equal(baseline.iommu, 'passthrough', 'captured as passthrough');
  const line = (w: Want): string => `${w.status} ${w.code} ${w.subject} ${w.expected} ${w.actual}`;
  t.strictSame(runCheck('iommu-mode', inv, baseline).map(line).sort(), each('pass', 'iommu-ok', 'passthrough', 'identity').map(line).sort());
});
