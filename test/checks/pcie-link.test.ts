// pcie-link: valid and invalid link states on the HGX H100 tree (GPU + NIC under one Gen5 switch per pair).
import { allDevices, type GenNode } from '../gen/sysfs-tree.js';
import { d3cold, detach, dev, GPUS, linkSpeedUnknown, NICS, P0, parentOf, patches, remove, softRoce, table, train, type Want } from './_trees.js';

const GEN5 = 'Gen5 x16';
const ok = (subject: string, want = GEN5, got = want): Want => ({ status: 'pass', code: 'link-ok', subject, expected: want, actual: got });
const nonRoot = (n: GenNode): void => {
  for (const d of allDevices(n)) d.configBytes = 64;
};
/** A Gen4-only adapter (ConnectX-6 Dx) in the Gen5 port: both ends of the link run Gen4, the port can do Gen5. */
const gen4Nic = (n: GenNode): void => {
  Object.assign(dev(n, P0.nic), { device: 0x101d, speed: 16, maxSpeed: 16 });
  Object.assign(parentOf(n, P0.nic)!, { speed: 16, maxSpeed: 32 });
};

/** The reverse: a Gen5 adapter in a port that can do only Gen4 (a Gen4 switch): the link's capability is the port's. */
const gen4Port = (n: GenNode): void => {
  Object.assign(dev(n, P0.nic), { speed: 16, maxSpeed: 32 });
  Object.assign(parentOf(n, P0.nic)!, { speed: 16, maxSpeed: 16 });
};

/** The GPU on the root bus, no port above it (a VM's passed-through GPU on the emulated root complex). */
const ROOT_GPU = '0000:15:02.0';
const onRootBus = (n: GenNode): void => {
  const g = dev(n, P0.gpu);
  detach(n, P0.gpu);
  n.hostBridges[0]!.devices.push({ ...g, bdf: ROOT_GPU });
};

/** Every GPU and RDMA adapter taken off the bus (the switches stay, but no link end is left to judge). */
const noDevices = (n: GenNode): void => [...GPUS, ...NICS].forEach((b) => detach(n, b));
const na: Want = { status: 'skip', code: 'link-na', subject: 'node' };

const x8: Want = { status: 'fail', code: 'link-width-low', subject: P0.gpu, expected: GEN5, actual: 'Gen5 x8' };

export const cases = table('pcie-link', [
  {
    name: 'valid: healthy HGX, every GPU, NIC and switch uplink trained Gen5 x16',
    subjects: [P0.gpu, P0.nic, P0.up],
    bare: [ok(P0.gpu), ok(P0.nic), ok(P0.up)],
    based: [ok(P0.gpu), ok(P0.nic), ok(P0.up)],
  },
  {
    name: 'invalid: GPU trained x8 of x16',
    change: (n) => train(n, P0.gpu, { width: 8 }),
    bare: [x8],
    based: [x8],
  },
  {
    name: 'invalid: NIC at Gen4 on a Gen5 link',
    change: (n) => train(n, P0.nic, { speed: 16 }),
    bare: [{ status: 'fail', code: 'link-speed-low', subject: P0.nic, expected: GEN5, actual: 'Gen4 x16' }],
    based: [{ status: 'fail', code: 'link-speed-low', subject: P0.nic, expected: GEN5, actual: 'Gen4 x16' }],
  },
  {
    name: 'warn: GPU at Gen1 2.5 GT/s at idle (power saving), gpuSpeedStrict false',
    change: (n) => train(n, P0.gpu, { speed: 2.5 }),
    bare: [{ status: 'warn', code: 'link-speed-idle', subject: P0.gpu, expected: GEN5, actual: 'Gen1 x16' }],
    based: [{ status: 'warn', code: 'link-speed-idle', subject: P0.gpu, expected: GEN5, actual: 'Gen1 x16' }],
  },
  {
    name: 'invalid: GPU at Gen1 2.5 GT/s with gpuSpeedStrict true in the baseline',
    change: (n) => train(n, P0.gpu, { speed: 2.5 }),
    edit: { gpuSpeedStrict: true },
    bare: [{ status: 'warn', code: 'link-speed-idle', subject: P0.gpu, expected: GEN5, actual: 'Gen1 x16' }],
    based: [{ status: 'fail', code: 'link-speed-low', subject: P0.gpu, expected: GEN5, actual: 'Gen1 x16' }],
  },
  {
    name: 'valid: baseline captured while a GPU idled at Gen1 records what the link can do',
    ref: (n) => train(n, P0.gpu, { speed: 2.5 }),
    subjects: [P0.gpu],
    bare: [ok(P0.gpu)],
    based: [ok(P0.gpu)],
  },
  {
    name: 'valid: Gen4 NIC in a Gen5 switch port (capability is the lower of both ends); invalid against a Gen5-NIC baseline',
    change: gen4Nic,
    subjects: [P0.nic],
    bare: [ok(P0.nic, 'Gen4 x16')],
    based: [{ status: 'fail', code: 'link-speed-low', subject: P0.nic, expected: GEN5, actual: 'Gen4 x16' }],
  },
  {
    name: 'valid: Gen4 NIC in a Gen5 switch port, baseline captured with that NIC',
    change: gen4Nic,
    ref: gen4Nic,
    subjects: [P0.nic],
    bare: [ok(P0.nic, 'Gen4 x16')],
    based: [ok(P0.nic, 'Gen4 x16')],
  },
  {
    name: 'valid: Gen5 NIC in a Gen4-only port, trained Gen4: the lower end is the port (never a Gen5 link expected of it)',
    change: gen4Port,
    ref: gen4Port,
    subjects: [P0.nic],
    bare: [ok(P0.nic, 'Gen4 x16')],
    based: [ok(P0.nic, 'Gen4 x16')],
  },
  {
    name: 'valid: the same, the port gone from /sys/bus/pci/devices: read where the NIC\'s path says it is, never taken for no port',
    change: gen4Port,
    ref: gen4Port,
    patch: remove(`sys/bus/pci/devices/${P0.downNic}`),
    subjects: [P0.nic],
    bare: [ok(P0.nic, 'Gen4 x16')],
    based: [ok(P0.nic, 'Gen4 x16')],
  },
  {
    name: 'invalid: switch uplink (upstream port) trained x8',
    change: (n) => train(n, P0.up, { width: 8 }),
    bare: [{ status: 'fail', code: 'link-width-low', subject: P0.up, expected: GEN5, actual: 'Gen5 x8' }],
    based: [{ status: 'fail', code: 'link-width-low', subject: P0.up, expected: GEN5, actual: 'Gen5 x8' }],
  },
  {
    name: 'skip: NIC Link Status speed reserved, current_link_speed "Unknown" (link down)',
    patch: linkSpeedUnknown(P0.nic),
    bare: [{ status: 'skip', code: 'link-unknown', subject: P0.nic }],
    based: [{ status: 'skip', code: 'link-unknown', subject: P0.nic }],
  },
  {
    name: 'skip without baseline: NIC read unprivileged (64-byte config) with current_link_* but no max_link_*: never a pass',
    change: (n) => void (dev(n, P0.nic).configBytes = 64),
    patch: patches(remove(`sys/bus/pci/devices/${P0.nic}/max_link_speed`), remove(`sys/bus/pci/devices/${P0.nic}/max_link_width`)),
    subjects: [P0.nic],
    bare: [{ status: 'skip', code: 'link-max-unknown', subject: P0.nic, actual: GEN5 }],
    based: [ok(P0.nic)],
  },
  {
    name: 'skip without baseline: NIC read unprivileged with max_link_width but no max_link_speed: the speed it can do is not known',
    change: (n) => void (dev(n, P0.nic).configBytes = 64),
    patch: remove(`sys/bus/pci/devices/${P0.nic}/max_link_speed`),
    subjects: [P0.nic],
    bare: [{ status: 'skip', code: 'link-max-unknown', subject: P0.nic, actual: GEN5 }],
    based: [ok(P0.nic)],
  },
  {
    name: 'valid: GPU on the root bus (no port above): its own maximum is what the link can do',
    change: onRootBus,
    subjects: [ROOT_GPU],
    bare: [ok(ROOT_GPU)],
    based: [ok(ROOT_GPU)],
  },
  {
    name: 'invalid: GPU on the root bus (no port above) trained x8 of its x16',
    change: (n) => {
      onRootBus(n);
      train(n, ROOT_GPU, { width: 8 });
    },
    bare: [{ ...x8, subject: ROOT_GPU }],
    based: [{ ...x8, subject: ROOT_GPU }],
  },
  {
    name: 'skip: NIC in D3cold, config space reads all ones: judged from sysfs, speed "Unknown"',
    patch: d3cold(P0.nic),
    bare: [{ status: 'skip', code: 'link-unknown', subject: P0.nic }],
    based: [{ status: 'skip', code: 'link-unknown', subject: P0.nic }],
  },
  {
    name: 'valid: tree read as non-root (64-byte configs) still judges GPU, NIC and switch uplink from sysfs',
    change: nonRoot,
    subjects: [P0.gpu, P0.nic, P0.up],
    bare: [ok(P0.gpu), ok(P0.nic), ok(P0.up)],
    based: [ok(P0.gpu), ok(P0.nic), ok(P0.up)],
  },
  {
    name: 'invalid: non-root read (64-byte configs), GPU trained x8',
    change: (n) => {
      nonRoot(n);
      train(n, P0.gpu, { width: 8 });
    },
    bare: [x8],
    based: [x8],
  },
  {
    name: 'invalid: non-root read, switch uplink trained x8 (found by chain position without config space)',
    change: (n) => {
      nonRoot(n);
      train(n, P0.up, { width: 8 });
    },
    bare: [{ status: 'fail', code: 'link-width-low', subject: P0.up, expected: GEN5, actual: 'Gen5 x8' }],
    based: [{ status: 'fail', code: 'link-width-low', subject: P0.up, expected: GEN5, actual: 'Gen5 x8' }],
  },
  {
    name: 'skip: no GPU and no RDMA adapter on the bus (link-na, not an empty list)',
    change: noDevices,
    bare: [na],
    based: [na],
  },
  {
    name: 'skip: no GPU, the only RDMA device a soft-RoCE rxe0 (no PCI function, so no PCIe link)',
    change: noDevices,
    patch: softRoce(),
    bare: [na],
    based: [na],
  },
]);
