// pcie-payload: MPS/MRRS (Device Control), ASPM (Link Control, link/ attributes, pcie_aspm.policy) and pci=pcie_bus_*
// on the HGX tree, whose devices carry MaxPayload 256 bytes as lspci shows an H100 and a ConnectX-7 on HGX nodes.
import { allDevices, type GenNode } from '../gen/sysfs-tree.js';
import { dev, P0, put, table, unreadable, type Want } from './_trees.js';

const DEFAULT = 'no pci=pcie_bus_*, ASPM policy default';
const sizes = (mps: number, mrrs: number, aspm = 'Disabled'): string => `MaxPayload ${mps} bytes, MaxReadReq ${mrrs} bytes, ASPM ${aspm}`;
const GPU = `${sizes(256, 4096)}; link l1_aspm=0`;
const NIC = sizes(256, 4096);
const RP = sizes(256, 128);
const pass = (subject: string, actual: string, expected = actual): Want => ({ status: 'pass', code: 'payload-ok', subject, expected, actual });
const peer = (subject: string, limit: number, mps: number): Want => ({ status: 'fail', code: 'payload-peer-mps', subject, expected: `at most ${limit} bytes`, actual: `${mps} bytes` });
const changed = (subject: string, expected: string, actual: string): Want => ({ status: 'warn', code: 'payload-changed', subject, expected, actual });
const policy = (actual: string): Want => ({ status: 'warn', code: 'payload-policy-changed', subject: 'node', expected: DEFAULT, actual });
const set = (bdf: string, regs: Partial<GenNode['hostBridges'][number]['devices'][number]>) => (n: GenNode): void => void Object.assign(dev(n, bdf), regs);
const PATH0 = [P0.rp, P0.up, P0.downGpu, P0.downNic, P0.gpu, P0.nic];

export const cases = table('pcie-payload', [
  {
    name: 'valid: healthy HGX, MaxPayload 256 bytes on every path device, ASPM disabled, no pci= option',
    subjects: ['node', P0.rp, P0.gpu, P0.nic],
    bare: [pass('node', DEFAULT, 'no reference'), pass(P0.rp, RP, 'no reference'), pass(P0.gpu, GPU, 'MaxPayload at most 256 bytes'), pass(P0.nic, NIC, 'MaxPayload at most 256 bytes')],
    based: [pass('node', DEFAULT), pass(P0.rp, RP), pass(P0.gpu, GPU), pass(P0.nic, NIC)],
  },
  {
    name: 'invalid: GPU0 at MaxPayload 512 bytes below a 256-byte switch port: the spec forbids it, a fail with or without a reference',
    change: set(P0.gpu, { mps: 512, mpsSupported: 512 }),
    bare: [{ status: 'fail', code: 'payload-mps-over', subject: P0.gpu, expected: 'at most 256 bytes', actual: '512 bytes' }],
    based: [{ status: 'fail', code: 'payload-mps-over', subject: P0.gpu, expected: 'at most 256 bytes', actual: '512 bytes' }],
  },
  {
    name: 'invalid: the switch port above GPU0 at 128 bytes under GPU0\'s 256 (a port reprogrammed after boot)',
    change: set(P0.downGpu, { mps: 128 }),
    // mlx5_0's 256-byte writes to GPU0 leave the switch through that port too.
    bare: [{ status: 'fail', code: 'payload-mps-over', subject: P0.gpu, expected: 'at most 128 bytes', actual: '256 bytes' }, peer(P0.nic, 128, 256)],
    based: [{ status: 'fail', code: 'payload-mps-over', subject: P0.gpu, expected: 'at most 128 bytes', actual: '256 bytes' }, changed(P0.downGpu, sizes(256, 128), sizes(128, 128)), peer(P0.nic, 128, 256)],
  },
  {
    name: 'valid alone, a warning against the reference: mlx5_0 reads at most 512 bytes where the reference read 4096',
    change: set(P0.nic, { mrrs: 512 }),
    bare: [],
    based: [changed(P0.nic, NIC, sizes(256, 512))],
  },
  {
    name: 'valid alone: GPU0 at 128 bytes below a 256-byte port is legal; against the reference a change',
    change: set(P0.gpu, { mps: 128 }),
    subjects: [P0.gpu],
    bare: [pass(P0.gpu, `${sizes(128, 4096)}; link l1_aspm=0`, 'MaxPayload at most 256 bytes')],
    based: [changed(P0.gpu, GPU, `${sizes(128, 4096)}; link l1_aspm=0`)],
  },
  {
    // GPUDirect RDMA: mlx5_0 writes into GPU0's memory through the switch (downNic → downGpu → GPU0) in TLPs up to its
    // own 256 bytes, past GPU0's 128: Malformed TLPs (§2.2.2). Each device is within its port, so only the pair tells.
    name: 'invalid: GPU0 at 128 bytes, mlx5_0 beside it under the same switch at 256: mlx5_0\'s writes to GPU0 exceed its MaxPayload',
    change: set(P0.gpu, { mps: 128 }),
    bare: [peer(P0.nic, 128, 256)],
    based: [peer(P0.nic, 128, 256), changed(P0.gpu, GPU, `${sizes(128, 4096)}; link l1_aspm=0`)],
  },
  {
    // pci=pcie_bus_perf (probe.c pcie_write_mps): each device gets the smaller of its MPSS and its parent's MPS, on the
    // assumption that nothing but reads flows downstream; a 512-byte path with a GPU that supports 256 splits the peers.
    name: 'invalid: pair 0 at 512 bytes with GPU0 at the 256 it supports, as pcie_bus_perf leaves it: mlx5_0\'s 512 over GPU0\'s 256',
    change: (n) => { PATH0.forEach((b) => set(b, { mps: 512, mpsSupported: 512 })(n)); set(P0.gpu, { mps: 256, mpsSupported: 256 })(n); },
    ref: (n) => { PATH0.forEach((b) => set(b, { mps: 512, mpsSupported: 512 })(n)); set(P0.gpu, { mps: 256, mpsSupported: 256 })(n); },
    subjects: [P0.gpu, P0.nic],
    bare: [pass(P0.gpu, GPU, 'MaxPayload at most 512 bytes'), peer(P0.nic, 256, 512)],
    based: [pass(P0.gpu, GPU), peer(P0.nic, 256, 512)],
  },
  {
    name: 'valid: the whole pair-0 path at 128 bytes on the reference too (pcie_bus_safe under a 128-byte port): as the reference',
    change: (n) => PATH0.forEach((b) => set(b, { mps: 128 })(n)),
    ref: (n) => PATH0.forEach((b) => set(b, { mps: 128 })(n)),
    subjects: [P0.gpu],
    bare: [pass(P0.gpu, `${sizes(128, 4096)}; link l1_aspm=0`, 'MaxPayload at most 128 bytes')],
    based: [pass(P0.gpu, `${sizes(128, 4096)}; link l1_aspm=0`)],
  },
  {
    name: 'invalid against the reference: ASPM L1 enabled on GPU0\'s link (Link Control of both ends, the kernel\'s l1_aspm=1)',
    change: (n) => { set(P0.gpu, { aspm: 2 })(n); set(P0.downGpu, { aspm: 2 })(n); },
    bare: [],
    based: [changed(P0.gpu, GPU, `${sizes(256, 4096, 'L1 Enabled')}; link l1_aspm=1`), changed(P0.downGpu, sizes(256, 128), sizes(256, 128, 'L1 Enabled'))],
  },
  {
    name: 'invalid against the reference: L1.2 enabled on GPU0\'s link (link/l1_2_aspm 0 → 1) while Link Control still reads L1 as on the reference',
    change: (n) => { set(P0.gpu, { aspm: 2, linkAspm: { l1_aspm: 1, l1_1_aspm: 0, l1_2_aspm: 1 } })(n); set(P0.downGpu, { aspm: 2 })(n); },
    ref: (n) => { set(P0.gpu, { aspm: 2, linkAspm: { l1_aspm: 1, l1_1_aspm: 0, l1_2_aspm: 0 } })(n); set(P0.downGpu, { aspm: 2 })(n); },
    bare: [],
    based: [changed(P0.gpu, `${sizes(256, 4096, 'L1 Enabled')}; link l1_aspm=1 l1_1_aspm=0 l1_2_aspm=0`, `${sizes(256, 4096, 'L1 Enabled')}; link l1_aspm=1 l1_1_aspm=0 l1_2_aspm=1`)],
  },
  {
    name: 'invalid against the reference: booted with pci=pcie_bus_perf (and a second pci= later on the line)',
    change: (n) => void (n.cmdline = 'BOOT_IMAGE=/boot/vmlinuz root=/dev/sda1 ro pci=realloc=off,pcie_bus_perf quiet pci=noaer'),
    bare: [],
    based: [policy('pci=pcie_bus_perf, ASPM policy default')],
  },
  {
    name: 'invalid against the reference: ASPM policy powersupersave set at run time',
    patch: put('sys/module/pcie_aspm/parameters/policy', 'default performance powersave [powersupersave] \n'),
    bare: [],
    based: [policy('no pci=pcie_bus_*, ASPM policy powersupersave')],
  },
  {
    name: 'valid: a kernel without ASPM support (no policy file) where the reference had none either',
    change: (n) => void (n.aspmPolicy = null),
    ref: (n) => void (n.aspmPolicy = null),
    subjects: ['node'],
    bare: [pass('node', 'no pci=pcie_bus_*, ASPM policy none', 'no reference')],
    based: [pass('node', 'no pci=pcie_bus_*, ASPM policy none')],
  },
  {
    name: 'invalid against the reference: the reference had no ASPM policy file (a kernel without ASPM), this node has one',
    ref: (n) => void (n.aspmPolicy = null),
    subjects: ['node'],
    bare: [pass('node', DEFAULT, 'no reference')],
    based: [{ status: 'warn', code: 'payload-policy-changed', subject: 'node', expected: 'no pci=pcie_bus_*, ASPM policy none', actual: DEFAULT }],
  },
  {
    name: 'invalid against the reference: the reference booted with pcie_aspm=off, this node without it',
    ref: (n) => void (n.cmdline = 'BOOT_IMAGE=/boot/vmlinuz root=/dev/sda1 ro pcie_aspm=off quiet'),
    subjects: ['node'],
    bare: [pass('node', DEFAULT, 'no reference')],
    based: [{ status: 'warn', code: 'payload-policy-changed', subject: 'node', expected: 'no pci=pcie_bus_*, pcie_aspm=off, ASPM policy default', actual: DEFAULT }],
  },
  {
    name: 'skip: non-root read (64-byte configs): payload sizes and ASPM unknown on every path device, never pass',
    change: (n) => allDevices(n).forEach((d) => (d.configBytes = 64)),
    subjects: [P0.rp, P0.gpu, P0.nic],
    bare: [P0.rp, P0.gpu, P0.nic].map((b): Want => ({ status: 'skip', code: 'payload-unknown', subject: b })),
    based: [P0.rp, P0.gpu, P0.nic].map((b): Want => ({ status: 'skip', code: 'payload-unknown', subject: b })),
  },
  {
    name: 'skip: only the switch port right above GPU0 read unprivileged (64 bytes): GPU0 readable, its MaxPayload not compared, no pass',
    change: set(P0.downGpu, { configBytes: 64 }),
    subjects: [P0.gpu],
    bare: [{ status: 'skip', code: 'payload-unknown', subject: P0.gpu }],
    based: [{ status: 'skip', code: 'payload-unknown', subject: P0.gpu }],
  },
  {
    name: 'invalid: the port right above GPU0 unreadable, the switch upstream port above it at 128 bytes: GPU0\'s 256 judged against that one',
    change: (n) => { set(P0.downGpu, { configBytes: 64 })(n); set(P0.up, { mps: 128 })(n); },
    subjects: [P0.gpu],
    bare: [{ status: 'fail', code: 'payload-mps-over', subject: P0.gpu, expected: 'at most 128 bytes', actual: '256 bytes' }],
    based: [{ status: 'fail', code: 'payload-mps-over', subject: P0.gpu, expected: 'at most 128 bytes', actual: '256 bytes' }],
  },
  {
    name: 'skip: the ASPM policy file unreadable (EISDIR): unknown, never pass',
    patch: async (root) => { await unreadable('sys/module/pcie_aspm/parameters/policy')(root); },
    subjects: ['node'],
    bare: [{ status: 'skip', code: 'payload-unknown', subject: 'node' }],
    based: [{ status: 'skip', code: 'payload-unknown', subject: 'node' }],
  },
  {
    name: 'skip: /proc/cmdline absent from the tree (a capture without it): the bus policy is unknown',
    patch: async (root) => { const { rm } = await import('node:fs/promises'); await rm(`${root}/proc/cmdline`); },
    subjects: ['node'],
    bare: [{ status: 'skip', code: 'payload-unknown', subject: 'node' }],
    based: [{ status: 'skip', code: 'payload-unknown', subject: 'node' }],
  },
  {
    name: 'skip: l1_aspm of GPU0 holds garbage where the reference showed it',
    patch: put(`sys/devices/pci0000:15/${P0.rp}/${P0.up}/${P0.downGpu}/${P0.gpu}/link/l1_aspm`, 'on\n'),
    subjects: [P0.gpu],
    bare: [pass(P0.gpu, sizes(256, 4096), 'MaxPayload at most 256 bytes')],
    based: [{ status: 'skip', code: 'payload-unknown', subject: P0.gpu }],
  },
  {
    name: 'valid: link/l1_aspm garbage on mlx5_0, whose reference has no link/ attributes at all: nothing to compare them with, the rest as the reference',
    patch: put(`sys/bus/pci/devices/${P0.nic}/link/l1_aspm`, 'on\n'),
    subjects: [P0.nic],
    bare: [pass(P0.nic, NIC, 'MaxPayload at most 256 bytes')],
    based: [pass(P0.nic, NIC)],
  },
]);
