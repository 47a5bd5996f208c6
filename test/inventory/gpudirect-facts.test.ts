// The GPUDirect mechanism facts as NCCL decides them (src/inventory/gpudirect.ts): DMA-BUF from the open module R515
// on and Linux 5.12 on, each bound at its edge, from the real /proc/driver/nvidia/version captures; peer memory
// loaded when listed or when one of NCCL's files reads; a driver or kernel that could not be read is unknown.
import { readFileSync } from 'node:fs';
import t from 'tap';
import { dmabufFact, dmabufPossible, peermemFact } from '../../src/inventory/gpudirect.js';
import { ABSENT, present, unknown } from '../../src/model/fact.js';
import { parseKernelRelease, parseNvidiaVersion, type NvidiaDriver } from '../../src/parsers/procfs.js';
import { fixture, H200 } from '../helpers/paths.js';

const driver = (f: string): NvidiaDriver => {
  const p = parseNvidiaVersion(readFileSync(fixture('nvidia-version', f), 'utf8'));
  if (!p.ok) throw new Error(p.error);
  return p.value;
};
const ARCH = driver('open_525.60.11_arch.txt');
const UBUNTU = driver('open_565.57.01_ubuntu2404.txt');
const JETSON = driver('open_jetson_35.3.1_aarch64.txt');
const OLD = driver('proprietary_384.98_ubuntu.txt');
const kernel = parseKernelRelease(readFileSync(`${H200}/proc/version`, 'utf8'));
const H200_KERNEL = kernel.ok ? kernel.value : '';

t.test('the captures: three open modules, one proprietary, and the H200 node kernel', async (t) => {
  t.same([ARCH, UBUNTU, JETSON, OLD], [
    { flavour: 'open', version: '525.60.11' }, { flavour: 'open', version: '565.57.01' }, { flavour: 'open', version: '35.3.1' }, { flavour: 'proprietary', version: '384.98' },
  ]);
  t.equal(H200_KERNEL, '6.18.44-fc-v657-gpu');
});

t.test('DMA-BUF possible: open module R515 on, Linux 5.12 on', async (t) => {
  const cases: readonly [string, NvidiaDriver['flavour'] | null, string | null, string | null, boolean][] = [
    ['open 565 on the H200 node kernel (a 6.x kernel: above 5.12 whatever its minor)', UBUNTU.flavour, UBUNTU.version, H200_KERNEL, true],
    ['open 525 on 5.12.0, the first kernel with DMA-BUF import by RDMA drivers', ARCH.flavour, ARCH.version, '5.12.0', true],
    ['open 525 on 5.11.22', ARCH.flavour, ARCH.version, '5.11.22', false],
    ['open 515.43.04 (R515, the first open module) on 5.15.0-91-generic', 'open', '515.43.04', '5.15.0-91-generic', true],
    ['open 510.47.03 on 5.15.0-91-generic', 'open', '510.47.03', '5.15.0-91-generic', false],
    ['the Jetson open module (L4T 35.3.1) on a 6.x kernel', JETSON.flavour, JETSON.version, H200_KERNEL, false],
    ['proprietary 384.98 on a 6.x kernel', OLD.flavour, OLD.version, H200_KERNEL, false],
    ['open 565, kernel not read', UBUNTU.flavour, UBUNTU.version, null, false],
    ['no driver', null, null, H200_KERNEL, false],
  ];
  t.same(cases.map(([what, flavour, version, release]) => [what, dmabufPossible(flavour, version, release)]), cases.map(([what, , , , want]) => [what, want]));
});

t.test('DMA-BUF as a fact: no driver or a proprietary one is a no; a driver or kernel not read is unknown', async (t) => {
  t.same(dmabufFact(present(UBUNTU), present(H200_KERNEL)), present(true));
  t.same(dmabufFact(present(OLD), present(H200_KERNEL)), present(false));
  t.same(dmabufFact(present({ flavour: 'proprietary', version: '535.129.03' }), present(H200_KERNEL)), present(false), 'a proprietary R535: no DMA-BUF whatever its version');
  t.same(dmabufFact(ABSENT, present(H200_KERNEL)), present(false));
  t.same(dmabufFact(unknown('/proc/driver/nvidia/version: EACCES'), present(H200_KERNEL)), unknown('DMA-BUF: /proc/driver/nvidia/version: EACCES'));
  t.same(dmabufFact(present(UBUNTU), unknown('/proc/version: EIO')), unknown('DMA-BUF: kernel release not read'));
  t.same(dmabufFact(present(UBUNTU), present('Linux')), unknown('DMA-BUF: kernel release not read'), 'a release without a version number');
});

t.test('peer memory: listed or a file read is loaded; a file not read is unknown; caught loading is unknown', async (t) => {
  const none = [ABSENT, ABSENT, ABSENT] as const;
  t.same(peermemFact(none, true), present(true), 'listed in /proc/modules, no file');
  t.same(peermemFact([ABSENT, ABSENT, present('1.0-0\n')], false), present(true), '/sys/module/nvidia_peermem/version');
  t.same(peermemFact(none, false), present(false));
  t.same(peermemFact([unknown('/sys/kernel/mm/memory_peers/nv_mem/version: EACCES'), ABSENT, ABSENT], false), unknown('nvidia_peermem: /sys/kernel/mm/memory_peers/nv_mem/version: EACCES'));
  t.same(peermemFact(none, true, 'nvidia_peermem is Loading in /proc/modules'), unknown('nvidia_peermem: nvidia_peermem is Loading in /proc/modules'));
});
