// gpudirect-mechanism: nvidia-peermem or DMA-BUF (open module R515+ on Linux 5.12+), as NCCL decides (net_ib.cc).
import { allDevices, type GenNode } from '../gen/sysfs-tree.js';
import { detach, HGX, put, table, unreadable, type Want } from './_trees.js';

const node = (status: Want['status'], code: string, expected?: string, actual?: string): Want =>
  ({ status, code, subject: 'node', ...(expected ? { expected } : {}), ...(actual ? { actual } : {}) });
const proprietary = (n: GenNode): void => void (n.driver = { ...n.driver!, open: false });
const withPeermem = (n: GenNode): void => {
  proprietary(n);
  n.peermem = true;
};
/** /proc/driver/nvidia/params as the 570 open module prints its last lines; RegistryDwords as modprobe.d set it. */
const params = (dwords: string) => put('proc/driver/nvidia/params', `GrdmaPciTopoCheckOverride: 0\nModifyDeviceFiles: 1\nRegistryDwords: "${dwords}"\nRegistryDwordsPerDevice: ""\n`);
const ibgda = (status: Want['status'], code: string, expected?: string, actual?: string): Want =>
  ({ status, code, subject: 'nvidia', ...(expected ? { expected } : {}), ...(actual ? { actual } : {}) });
const drop = (kind: 'gpu' | 'nic') => (n: GenNode): void => allDevices(HGX).filter((d) => d.kind === kind).forEach((d) => detach(n, d.bdf));

export const cases = table('gpudirect-mechanism', [
  {
    name: 'valid: open module 570 on kernel 5.15, DMA-BUF (the reference)',
    subjects: ['node'],
    bare: [node('pass', 'mechanism-ok', 'any', 'dmabuf')],
    based: [node('pass', 'mechanism-ok', 'dmabuf', 'dmabuf')],
  },
  {
    name: 'invalid: NICs present, proprietary driver, no peermem',
    change: proprietary,
    bare: [node('fail', 'mechanism-missing', 'any', 'none')],
    based: [node('fail', 'mechanism-missing', 'dmabuf', 'none')],
  },
  {
    name: 'valid without baseline: proprietary driver with nvidia_peermem loaded; mechanism-wrong against a DMA-BUF class',
    change: withPeermem,
    subjects: ['node'],
    bare: [node('pass', 'mechanism-ok', 'any', 'peermem')],
    based: [node('fail', 'mechanism-wrong', 'dmabuf', 'peermem')],
  },
  {
    name: 'valid: proprietary driver with nvidia_peermem, class captured so',
    change: withPeermem,
    ref: withPeermem,
    subjects: ['node'],
    bare: [node('pass', 'mechanism-ok', 'any', 'peermem')],
    based: [node('pass', 'mechanism-ok', 'peermem', 'peermem')],
  },
  {
    name: 'valid: peermem seen from /sys/module/nvidia_peermem/version alone',
    change: proprietary,
    patch: put('sys/module/nvidia_peermem/version', '570.133.20\n'),
    subjects: ['node'],
    bare: [node('pass', 'mechanism-ok', 'any', 'peermem')],
    based: [node('fail', 'mechanism-wrong', 'dmabuf', 'peermem')],
  },
  {
    name: 'valid: MOFED nv_peer_mem seen from /sys/kernel/mm/memory_peers/nv_mem/version',
    change: proprietary,
    patch: put('sys/kernel/mm/memory_peers/nv_mem/version', '1.3-0\n'),
    subjects: ['node'],
    bare: [node('pass', 'mechanism-ok', 'any', 'peermem')],
    based: [node('fail', 'mechanism-wrong', 'dmabuf', 'peermem')],
  },
  {
    name: 'valid: open module with nvidia_peermem loaded too: both mechanisms',
    change: (n) => void (n.peermem = true),
    subjects: ['node'],
    bare: [node('pass', 'mechanism-ok', 'any', 'peermem+dmabuf')],
    based: [node('pass', 'mechanism-ok', 'dmabuf', 'peermem+dmabuf')],
  },
  {
    name: 'invalid: open module on kernel 5.10 (no DMA-BUF import in RDMA before 5.12)',
    change: (n) => void (n.kernel = '5.10.0-28-amd64'),
    bare: [node('fail', 'mechanism-missing', 'any', 'none')],
    based: [node('fail', 'mechanism-missing', 'dmabuf', 'none')],
  },
  {
    name: 'invalid: open module R510 on kernel 5.15 (GPU DMA-BUF export from R515)',
    change: (n) => void (n.driver = { ...n.driver!, version: '510.47.03' }),
    bare: [node('fail', 'mechanism-missing', 'any', 'none')],
    based: [node('fail', 'mechanism-missing', 'dmabuf', 'none')],
  },
  {
    name: 'invalid with baseline: class wants peermem, only DMA-BUF available',
    edit: { mechanism: 'peermem' },
    subjects: ['node'],
    bare: [node('pass', 'mechanism-ok', 'any', 'dmabuf')],
    based: [node('fail', 'mechanism-wrong', 'peermem', 'dmabuf')],
  },
  {
    name: 'skip: /proc/driver/nvidia/version unreadable on a DMA-BUF node: never a fail (could not tell)',
    patch: unreadable('proc/driver/nvidia/version'),
    bare: [node('skip', 'mechanism-unknown', 'any', 'dmabuf?')],
    based: [node('skip', 'mechanism-unknown', 'dmabuf', 'dmabuf?')],
  },
  {
    // The version field is the one after "Kernel Module [for <arch>]"; a line whose field is no version ("570.") must
    // not give a number from further on ("133.20": below R515, so DMA-BUF "not possible", a fail).
    name: 'skip: the version field is no version ("570. 133.20"): unknown, never a later number of the line',
    patch: put('proc/driver/nvidia/version', 'NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570. 133.20  Release Build  (dvs-builder@U16-I3-B03-4-3)  Thu Oct 19 18:42:12 UTC 2023\n'),
    bare: [node('skip', 'mechanism-unknown', 'any', 'dmabuf?')],
    based: [node('skip', 'mechanism-unknown', 'dmabuf', 'dmabuf?')],
  },
  {
    name: 'skip: /proc/driver/nvidia/version garbage: the driver is unknown, not absent',
    patch: put('proc/driver/nvidia/version', '\u0000\u00ff garbage\n'),
    bare: [node('skip', 'mechanism-unknown', 'any', 'dmabuf?')],
    based: [node('skip', 'mechanism-unknown', 'dmabuf', 'dmabuf?')],
  },
  {
    name: 'valid: peermem loaded, driver version unreadable: peermem alone decides',
    change: withPeermem,
    ref: withPeermem,
    patch: unreadable('proc/driver/nvidia/version'),
    subjects: ['node'],
    bare: [node('pass', 'mechanism-ok', 'any', 'peermem+dmabuf?')],
    based: [node('pass', 'mechanism-ok', 'peermem', 'peermem+dmabuf?')],
  },
  {
    name: 'skip: a peer-memory file unreadable on a proprietary node: loaded or not is unknown (DMA-BUF, known impossible, still fails its class)',
    change: proprietary,
    patch: unreadable('sys/kernel/mm/memory_peers/nv_mem/version'),
    bare: [node('skip', 'mechanism-unknown', 'any', 'peermem?')],
    based: [node('fail', 'mechanism-wrong', 'dmabuf', 'peermem?')],
  },
  {
    name: 'skip: the same node against a class captured with peermem: peermem unknown is no pass of a peermem class',
    change: proprietary,
    ref: withPeermem,
    patch: unreadable('sys/kernel/mm/memory_peers/nv_mem/version'),
    bare: [node('skip', 'mechanism-unknown', 'any', 'peermem?')],
    based: [node('skip', 'mechanism-unknown', 'peermem', 'peermem?')],
  },
  // A module in /proc/modules as Loading (its init running: nvidia_peermem's fails with EINVAL where ib_core has no
  // peer-memory API) or Unloading (rmmod under way) has its /sys/module files, yet is not there for the job: unknown.
  ...(['Loading', 'Unloading'] as const).map((state) => ({
    name: `skip: proprietary driver, nvidia_peermem ${state} in /proc/modules: peermem unknown, never a pass`,
    change: (n: GenNode) => {
      withPeermem(n);
      n.moduleStates = { nvidia_peermem: state };
    },
    ref: withPeermem,
    subjects: ['node'],
    bare: [node('skip', 'mechanism-unknown', 'any', 'peermem?')],
    based: [node('skip', 'mechanism-unknown', 'peermem', 'peermem?')],
  })),
  {
    name: 'valid: open module with nvidia_peermem Unloading: DMA-BUF alone decides',
    change: (n) => {
      n.peermem = true;
      n.moduleStates = { nvidia_peermem: 'Unloading' };
    },
    subjects: ['node'],
    bare: [node('pass', 'mechanism-ok', 'any', 'peermem?+dmabuf')],
    based: [node('pass', 'mechanism-ok', 'dmabuf', 'peermem?+dmabuf')],
  },
  {
    name: 'skip: ib_uverbs Unloading in /proc/modules: whether user space can open the adapters cannot be told',
    change: (n) => void (n.moduleStates = { ib_uverbs: 'Unloading' }),
    subjects: ['ib_uverbs'],
    bare: [{ status: 'skip', code: 'mechanism-unknown', subject: 'ib_uverbs', expected: 'loaded' }],
    based: [{ status: 'skip', code: 'mechanism-unknown', subject: 'ib_uverbs', expected: 'loaded' }],
  },
  {
    name: 'warn: ib_uverbs not loaded while RDMA adapters are present',
    change: (n) => void (n.modules = ['nvidia_uvm', 'nvidia_modeset', 'nvidia', 'mlx5_ib', 'ib_core', 'mlx5_core']),
    bare: [{ status: 'warn', code: 'uverbs-missing', subject: 'ib_uverbs', expected: 'loaded', actual: 'absent' }],
    based: [{ status: 'warn', code: 'uverbs-missing', subject: 'ib_uverbs', expected: 'loaded', actual: 'absent' }],
  },
  {
    name: 'skip: no GPU on the bus',
    change: drop('gpu'),
    bare: [node('skip', 'mechanism-na')],
    based: [node('skip', 'mechanism-na')],
  },
  {
    name: 'not applicable, but available: GPUs without RDMA adapters',
    change: drop('nic'),
    subjects: ['node'],
    bare: [node('pass', 'mechanism-na', 'any', 'dmabuf')],
    based: [node('pass', 'mechanism-na', 'dmabuf', 'dmabuf')],
  },
  {
    name: 'skip: GPUs without RDMA adapters and no mechanism',
    change: (n) => {
      drop('nic')(n);
      proprietary(n);
    },
    bare: [node('skip', 'mechanism-na', 'any', 'none')],
    based: [node('skip', 'mechanism-na', 'dmabuf', 'none')],
  },
  {
    name: 'skip: GPUs without RDMA adapters, no peermem, /proc/driver/nvidia/version empty: DMA-BUF unknown, so available is unknown, never a pass',
    change: drop('nic'),
    patch: put('proc/driver/nvidia/version', ''),
    bare: [node('skip', 'mechanism-na', 'any', 'dmabuf?')],
    based: [node('skip', 'mechanism-na', 'dmabuf', 'dmabuf?')],
  },
  {
    name: 'valid with baseline: a GPU-initiated (IBGDA) class, driver loaded with PeerMappingOverride=1',
    patch: params('PeerMappingOverride=1;'),
    edit: { gpuInitiated: true },
    subjects: ['nvidia'],
    bare: [],
    based: [ibgda('pass', 'peer-mapping-ok', 'PeerMappingOverride=1', 'PeerMappingOverride=1')],
  },
  {
    name: 'warn with baseline: a GPU-initiated (IBGDA) class, RegistryDwords empty (PeerMappingOverride missing)',
    patch: params(''),
    edit: { gpuInitiated: true },
    bare: [],
    based: [ibgda('warn', 'peer-mapping-missing', 'PeerMappingOverride=1', 'not set')],
  },
  {
    name: 'warn with baseline: a GPU-initiated (IBGDA) class, PeerMappingOverride=0 (set, but off)',
    patch: params('PeerMappingOverride=0;'),
    edit: { gpuInitiated: true },
    bare: [],
    based: [ibgda('warn', 'peer-mapping-missing', 'PeerMappingOverride=1', 'PeerMappingOverride=0')],
  },
  {
    name: 'skip with baseline: a GPU-initiated class, /proc/driver/nvidia/params without a RegistryDwords line',
    patch: put('proc/driver/nvidia/params', 'ModifyDeviceFiles: 1\n'),
    edit: { gpuInitiated: true },
    bare: [],
    based: [ibgda('skip', 'peer-mapping-unknown')],
  },
]);
