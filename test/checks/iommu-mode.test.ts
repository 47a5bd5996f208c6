// iommu-mode: the IOMMU domain type of every GPU and NIC group (identity on the HGX: intel_iommu=on iommu=pt).
import { allDevices, type GenNode } from '../gen/sysfs-tree.js';
import { node as GB300 } from '../gen/topologies/gb300-cx8-dma-direct.js';
import { node as TRAY } from '../gen/topologies/gb300-tray-numa.js';
import { hgxB300 } from '../gen/topologies/hgx-b300-cx8-inline.js';
import { captureFrom, detach, dev, GPUS, HGX, inventoryOf, NICS, P0, patches, probe, put, remove, runCheck, softRoce, table, unreadable, type Want } from './_trees.js';

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
/** HGX B300 inline set up for virtual machines (ATS on every CX8), each GPU moved to an IOMMU group apart from its NIC. */
const VIRT = hgxB300(true);
allDevices(VIRT).filter((d) => d.kind === 'gpu').forEach((d, i) => (d.iommuGroup = 60 + i));
const NIC17 = { nic: '0000:17:00.0', gpu: '0000:1a:00.0' } as const;
const gpu0 = (status: Want['status'], code: string, expected: string, type: string): Want => ({ status, code, subject: P0.gpu, expected, actual: got(20, type) });

export const cases = table('iommu-mode', [
  {
    name: 'invalid: GB300 Data Direct with IOMMU units but no device in a group: never "shares the GPU\'s group" (no group is none shared)',
    from: GB300,
    change: (n) => allDevices(n).forEach((d) => delete d.iommuGroup),
    subjects: [DD.dma],
    bare: [{ status: 'fail', code: 'iommu-group-split', subject: DD.dma, expected: `group of ${DD.gpu}`, actual: 'group none' }],
    based: [{ status: 'fail', code: 'iommu-group-split', subject: DD.dma, expected: `group of ${DD.gpu}`, actual: 'group none' }],
  },
  {
    name: 'skip: GPU0\'s iommu_group a regular file, not a link: unknown, never pass',
    patch: patches(remove(`sys/bus/pci/devices/${P0.gpu}/iommu_group`), put(`sys/bus/pci/devices/${P0.gpu}/iommu_group`, '20\n')),
    subjects: [P0.gpu],
    bare: [{ status: 'skip', code: 'iommu-unknown', subject: P0.gpu }],
    based: [{ status: 'skip', code: 'iommu-unknown', subject: P0.gpu }],
  },
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
    name: 'skip: GB300 Data Direct whose DMA function cannot be told (config space and device ID unreadable): its group rule is not judged, and said',
    from: GB300,
    patch: patches(unreadable(`sys/bus/pci/devices/${DD.dma}/config`), unreadable(`sys/bus/pci/devices/${DD.dma}/device`)),
    subjects: [DD.dma, 'node'],
    bare: [{ status: 'skip', code: 'iommu-unknown', subject: 'node' }],
    based: [{ status: 'skip', code: 'iommu-unknown', subject: 'node' }],
  },
  {
    name: 'valid with a class of acsPolicy classic: the same GB300 whose DMA function cannot be told: no Direct NIC rules are owed, none said untold',
    from: GB300,
    patch: patches(unreadable(`sys/bus/pci/devices/${DD.dma}/config`), unreadable(`sys/bus/pci/devices/${DD.dma}/device`)),
    edit: { acsPolicy: 'classic' },
    subjects: [DD.dma, 'node'],
    bare: [{ status: 'skip', code: 'iommu-unknown', subject: 'node' }],
    based: [],
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
    name: 'valid: GB300 Data Direct on Linux 6.11 itself, identity domains (the first kernel that keeps them working)',
    from: GB300,
    change: (n) => void Object.assign(n, { kernel: '6.11.0-1001-nvidia-64k', procVersion: undefined }),
    ref: (n) => void Object.assign(n, { kernel: '6.11.0-1001-nvidia-64k', procVersion: undefined }),
    subjects: [DD.gpu],
    bare: [{ status: 'pass', code: 'iommu-ok', subject: DD.gpu, expected: 'passthrough or off', actual: 'passthrough (group 100: identity)' }],
    based: [{ status: 'pass', code: 'iommu-ok', subject: DD.gpu, expected: 'passthrough', actual: 'passthrough (group 100: identity)' }],
  },
  {
    name: 'invalid: GB300 Data Direct on Linux 6.10 with identity domains: translated domains required',
    from: GB300,
    change: (n) => void Object.assign(n, { kernel: '6.10.14-nvidia-64k', procVersion: undefined }),
    ref: (n) => void Object.assign(n, { kernel: '6.10.14-nvidia-64k', procVersion: undefined }),
    subjects: [DD.gpu],
    bare: [{ status: 'fail', code: 'iommu-kernel-domain', subject: DD.gpu, expected: 'translated', actual: 'passthrough (group 100: identity)' }],
    based: [{ status: 'fail', code: 'iommu-kernel-domain', subject: DD.gpu, expected: 'translated', actual: 'passthrough (group 100: identity)' }],
  },
  {
    name: 'valid with a class of iommu "any": translated domains (DMA-FQ)',
    change: groupType('DMA-FQ'),
    edit: { iommu: 'any' },
    subjects: [P0.gpu],
    bare: [gpu0('warn', 'iommu-translated', 'passthrough or off', 'DMA-FQ')],
    based: [gpu0('pass', 'iommu-ok', 'any', 'DMA-FQ')],
  },
  {
    name: 'valid with a class of iommu "any": no IOMMU at all',
    change: noIommu,
    edit: { iommu: 'any' },
    subjects: ['node'],
    bare: [{ status: 'pass', code: 'iommu-ok', subject: 'node', expected: 'off', actual: 'off' }],
    based: [{ status: 'pass', code: 'iommu-ok', subject: 'node', expected: 'any', actual: 'off' }],
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
    name: 'valid: HGX B300 inline, virtualized (ATS on): NIC 0000:17:00.0 in a group apart from its GPU',
    from: VIRT,
    subjects: [NIC17.nic],
    bare: [{ status: 'pass', code: 'iommu-ok', subject: NIC17.nic, expected: `a group apart from ${NIC17.gpu}`, actual: 'group 40' }, { status: 'pass', code: 'iommu-ok', subject: NIC17.nic, expected: 'passthrough or off', actual: 'passthrough (group 40: identity)' }],
    based: [{ status: 'pass', code: 'iommu-ok', subject: NIC17.nic, expected: `a group apart from ${NIC17.gpu}`, actual: 'group 40' }, { status: 'pass', code: 'iommu-ok', subject: NIC17.nic, expected: 'passthrough', actual: 'passthrough (group 40: identity)' }],
  },
  {
    name: 'invalid: HGX B300 inline, virtualized: NIC 0000:17:00.0 in no IOMMU group at all: never "apart from its GPU"',
    from: VIRT,
    change: (n) => void delete dev(n, NIC17.nic).iommuGroup,
    subjects: [NIC17.nic],
    bare: [{ status: 'fail', code: 'iommu-group-shared', subject: NIC17.nic, expected: `a group apart from ${NIC17.gpu}`, actual: 'group none' }, { status: 'pass', code: 'iommu-ok', subject: NIC17.nic, expected: 'passthrough or off', actual: 'off' }],
    based: [{ status: 'fail', code: 'iommu-group-shared', subject: NIC17.nic, expected: `a group apart from ${NIC17.gpu}`, actual: 'group none' }, { status: 'fail', code: 'iommu-mode-changed', subject: NIC17.nic, expected: 'passthrough', actual: 'off' }],
  },
  {
    name: 'invalid: GB300 tray on Grace root ports, GPU 0008:01:00.0 in no IOMMU group: never "a group of its own"',
    from: TRAY,
    change: (n) => void delete dev(n, '0008:01:00.0').iommuGroup,
    subjects: ['0008:01:00.0'],
    bare: [{ status: 'fail', code: 'iommu-group-shared', subject: '0008:01:00.0', expected: 'a group of its own', actual: 'group none' }, { status: 'pass', code: 'iommu-ok', subject: '0008:01:00.0', expected: 'passthrough or off', actual: 'off' }],
    based: [{ status: 'fail', code: 'iommu-group-shared', subject: '0008:01:00.0', expected: 'a group of its own', actual: 'group none' }, { status: 'fail', code: 'iommu-mode-changed', subject: '0008:01:00.0', expected: 'passthrough', actual: 'off' }],
  },
  {
    name: 'invalid against a class of iommu "off": no /sys/class/iommu units, but GPU0 still has an IOMMU group: judged per device, never "no IOMMU"',
    change: (n) => {
      noIommu(n);
      n.iommu = { units: [], groupType: 'identity' };
      dev(n, P0.gpu).iommuGroup = 20;
    },
    ref: noIommu,
    subjects: [P0.gpu, 'node'],
    bare: [gpu0('pass', 'iommu-ok', 'passthrough or off', 'identity')],
    based: [gpu0('fail', 'iommu-mode-changed', 'off', 'identity')],
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
