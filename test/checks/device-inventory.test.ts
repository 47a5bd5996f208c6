// device-inventory: GPUs and RDMA adapters by address, model, firmware, driver and kernel, against the baseline.
import { readFileSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { GenNode } from '../gen/sysfs-tree.js';
import { captureFrom, d3cold, dev, detach, GPUS, HGX, inventoryOf, NICS, P0, patches, probe, put, remove, runCheck, softRoce, table, unreadable, type Want } from './_trees.js';

const fail = (code: string, subject: string, expected: string, actual: string): Want => ({ status: 'fail', code, subject, expected, actual });
const driver = (d: Partial<NonNullable<GenNode['driver']>>) => (n: GenNode): void => void (n.driver = { ...n.driver!, ...d });

export const cases = table('device-inventory', [
  {
    name: 'invalid with baseline: GPU 0000:2a:00.0 off the bus while mlx5_3\'s device link is unreadable: the GPU is missing all the same',
    change: (n) => detach(n, GPUS[1]!),
    patch: patches(remove('sys/class/infiniband/mlx5_3/device'), put('sys/class/infiniband/mlx5_3/device', 'x\n')),
    subjects: [GPUS[1]!],
    bare: [],
    based: [{ status: 'fail', code: 'inventory-missing', subject: GPUS[1]!, expected: 'present', actual: 'missing' }],
  },
  {
    name: 'valid: the HGX as captured (8 GPUs, 8 ConnectX-7, open 570.133.20, kernel 5.15.0-136)',
    subjects: [P0.gpu, 'mlx5_0'],
    bare: [{ status: 'pass', code: 'inventory-ok', subject: P0.gpu }, { status: 'pass', code: 'inventory-ok', subject: 'mlx5_0' }],
    based: [{ status: 'pass', code: 'inventory-ok', subject: P0.gpu }, { status: 'pass', code: 'inventory-ok', subject: 'mlx5_0' }],
  },
  {
    name: 'skip with baseline: GPU 0000:2a:00.0\'s class file garbage: what the function is cannot be told, never a missing GPU',
    patch: put(`sys/bus/pci/devices/${GPUS[1]!}/class`, 'zz\n'),
    subjects: [GPUS[1]!],
    bare: [],
    based: [{ status: 'skip', code: 'inventory-unknown', subject: GPUS[1]!, expected: 'present' }],
  },
  {
    name: 'invalid: GPU3 missing from the bus (its switch port still there)',
    change: (n) => detach(n, GPUS[3]!),
    bare: [],
    based: [fail('inventory-missing', GPUS[3]!, 'present', 'missing')],
  },
  {
    name: 'invalid: GPU0 fallen off the bus (Xid 79): listed by sysfs, every configuration read all ones, link "Unknown" x63',
    patch: d3cold(P0.gpu),
    bare: [fail('inventory-not-responding', P0.gpu, 'answers', 'all ones')],
    based: [fail('inventory-not-responding', P0.gpu, 'answers', 'all ones')],
  },
  {
    name: 'invalid: mlx5_0 and the switch port above GPU0 no longer answer configuration reads',
    patch: patches(d3cold(P0.nic), d3cold(P0.downGpu)),
    bare: [fail('inventory-not-responding', P0.downGpu, 'answers', 'all ones'), fail('inventory-not-responding', P0.nic, 'answers', 'all ones')],
    based: [fail('inventory-not-responding', P0.downGpu, 'answers', 'all ones'), fail('inventory-not-responding', P0.nic, 'answers', 'all ones')],
  },
  {
    name: 'valid: an SR-IOV Virtual Function\'s header (vendor and device IDs read FFFFh by definition, its class code answers) is no silent device',
    patch: async (root) => {
      const file = path.join(root, 'sys/bus/pci/devices', P0.gpu, 'config');
      const b = readFileSync(file);
      b.fill(0xff, 0, 4);
      writeFileSync(file, b);
    },
    bare: [],
    based: [],
  },
  {
    name: 'skip, never a fail: a zeroed configuration read (0x0000) is no device\'s answer',
    patch: async (root) => {
      const file = path.join(root, 'sys/bus/pci/devices', P0.gpu, 'config');
      writeFileSync(file, Buffer.alloc(readFileSync(file).length, 0));
    },
    bare: [],
    based: [],
  },
  {
    name: 'skip, never a fail: a GPU config file past 4096 bytes (all ones) is none the kernel writes: not read, never "fallen off the bus"',
    patch: async (root) => writeFileSync(path.join(root, 'sys/bus/pci/devices', P0.gpu, 'config'), Buffer.alloc(8192, 0xff)),
    bare: [],
    based: [],
  },
  // A NIC's or a bridge's config space another function's (here GPU0's, copied over mlx5_0's): its IDs were taken as
  // the NIC's ("device id 0x10de:0x2330", a mismatch fail) where sysfs says 0x15b3:0x1021; as for a GPU, the header
  // is refused now (its base class, 03h, is not the 02h of mlx5_0's class file) and the IDs come from sysfs.
  {
    name: 'valid: mlx5_0\'s config space holding GPU0\'s (a foreign read): refused, the NIC told by sysfs, never a mismatch',
    patch: async (root) => {
      const dir = path.join(root, 'sys/bus/pci/devices');
      writeFileSync(path.join(dir, P0.nic, 'config'), readFileSync(path.join(dir, P0.gpu, 'config')));
    },
    subjects: [P0.nic, 'mlx5_0'],
    bare: [{ status: 'pass', code: 'inventory-ok', subject: 'mlx5_0' }],
    based: [{ status: 'pass', code: 'inventory-ok', subject: 'mlx5_0' }],
  },
  {
    name: 'invalid: mlx5_2 missing from the bus',
    change: (n) => detach(n, NICS[2]!),
    bare: [],
    based: [fail('inventory-missing', NICS[2]!, 'present', 'missing')],
  },
  {
    name: 'warn: an extra GPU in a third port of pair 0\'s switch',
    change: (n) => void dev(n, P0.up).children!.push({ bdf: '0000:17:02.0', kind: 'switch-down', speed: 32, acsCtl: 0, children: [
      { bdf: '0000:1a:00.0', kind: 'gpu', device: 0x2330, subsystem: [0x10de, 0x16c1], speed: 32, iommuGroup: 60, ats: false },
    ] }),
    bare: [],
    based: [{ status: 'warn', code: 'inventory-extra', subject: '0000:1a:00.0', expected: 'absent', actual: 'present' }],
  },
  {
    name: "warn: an extra ConnectX-7 (mlx5_8) in a third port of pair 0's switch",
    change: (n) => void dev(n, P0.up).children!.push({ bdf: '0000:17:02.0', kind: 'switch-down', speed: 32, acsCtl: 0, children: [
      { bdf: '0000:1b:00.0', kind: 'nic', device: 0x1021, subsystem: [0x15b3, 0x0041], speed: 32, iommuGroup: 61, ats: false, ib: { name: 'mlx5_8', fwVer: '28.39.1002' } },
    ] }),
    bare: [],
    based: [{ status: 'warn', code: 'inventory-extra', subject: 'mlx5_8', expected: 'absent', actual: 'present' }],
  },
  {
    name: 'skip: two adapters claim one PCI function (a class listing no kernel writes): which is real cannot be told, neither passes',
    patch: async (root) => symlinkSync(readlinkSync(path.join(root, 'sys/class/infiniband/mlx5_0')), path.join(root, 'sys/class/infiniband/mlx5_9')),
    subjects: ['mlx5_0', 'mlx5_9'],
    bare: [{ status: 'skip', code: 'inventory-unknown', subject: 'mlx5_0' }, { status: 'skip', code: 'inventory-unknown', subject: 'mlx5_9' }],
    based: [{ status: 'skip', code: 'inventory-unknown', subject: 'mlx5_0' }, { status: 'skip', code: 'inventory-unknown', subject: 'mlx5_9' }],
  },
  {
    name: 'invalid: mlx5_0 firmware changed',
    change: (n) => void (dev(n, P0.nic).ib!.fwVer = '28.40.1000'),
    bare: [],
    based: [fail('firmware-mismatch', 'mlx5_0', '28.39.1002', '28.40.1000')],
  },
  {
    name: 'skip with baseline: mlx5_0 fw_ver unreadable: not a firmware mismatch, never a pass either',
    patch: unreadable('sys/class/infiniband/mlx5_0/fw_ver'),
    bare: [],
    based: [{ status: 'skip', code: 'firmware-unknown', subject: 'mlx5_0', expected: '28.39.1002' }],
  },
  {
    name: 'skip with baseline: mlx5_0 fw_ver empty (what a FIFO or a silent driver gives): unknown, not a version',
    patch: put('sys/class/infiniband/mlx5_0/fw_ver', ''),
    bare: [],
    based: [{ status: 'skip', code: 'firmware-unknown', subject: 'mlx5_0', expected: '28.39.1002' }],
  },
  {
    name: 'skip with baseline: GPU0 config space gone and its device id garbage: the model cannot be compared',
    patch: patches(remove(`sys/bus/pci/devices/${P0.gpu}/config`), put(`sys/bus/pci/devices/${P0.gpu}/device`, 'zz\n')),
    bare: [],
    based: [{ status: 'skip', code: 'inventory-unknown', subject: P0.gpu, expected: '0x10de:0x2330' }],
  },
  {
    name: 'invalid: GPU driver version changed',
    change: driver({ version: '570.172.08' }),
    bare: [],
    based: [fail('driver-mismatch', 'nvidia', 'open 570.133.20', 'open 570.172.08')],
  },
  {
    name: 'invalid: GPU driver flavour changed (proprietary module, same version)',
    change: driver({ open: false }),
    bare: [],
    based: [fail('driver-mismatch', 'nvidia', 'open 570.133.20', 'proprietary 570.133.20')],
  },
  {
    name: 'invalid: NVIDIA driver not loaded (/proc/driver/nvidia/version absent)',
    change: (n) => void delete n.driver,
    bare: [],
    based: [fail('driver-mismatch', 'nvidia', 'open 570.133.20', 'none')],
  },
  {
    name: 'skip with baseline: /proc/driver/nvidia/version unreadable: not a driver mismatch (could not tell)',
    patch: unreadable('proc/driver/nvidia/version'),
    bare: [],
    based: [{ status: 'skip', code: 'inventory-unknown', subject: 'nvidia', expected: 'open 570.133.20' }],
  },
  {
    name: 'skip with baseline: kernel release unreadable (osrelease and /proc/version): not a kernel change',
    patch: patches(unreadable('proc/sys/kernel/osrelease'), unreadable('proc/version')),
    bare: [],
    based: [{ status: 'skip', code: 'inventory-unknown', subject: 'kernel', expected: '5.15.0-136-generic' }],
  },
  {
    name: 'invalid: GPU0 device id changed (H200 0x2335 where the class has H100 0x2330)',
    change: (n) => void (dev(n, P0.gpu).device = 0x2335),
    bare: [],
    based: [fail('inventory-mismatch', P0.gpu, '0x10de:0x2330', '0x10de:0x2335')],
  },
  {
    name: 'invalid: NIC0 device id changed (BlueField-3 where the class has ConnectX-7)',
    change: (n) => void (dev(n, P0.nic).device = 0xa2dc),
    bare: [],
    based: [fail('inventory-mismatch', P0.nic, '0x15b3:0x1021', '0x15b3:0xa2dc')],
  },
  {
    name: 'valid: a soft-RoCE rxe0 (no PCI function) is listed but never extra against a baseline (capture keeps PCI NICs only)',
    patch: softRoce(),
    subjects: ['rxe0'],
    bare: [{ status: 'pass', code: 'inventory-ok', subject: 'rxe0' }],
    based: [{ status: 'pass', code: 'inventory-ok', subject: 'rxe0' }],
  },
  {
    name: 'warn: kernel release changed',
    change: (n) => void (n.kernel = '5.15.0-140-generic'),
    bare: [],
    based: [{ status: 'warn', code: 'driver-mismatch', subject: 'kernel', expected: '5.15.0-136-generic', actual: '5.15.0-140-generic' }],
  },
]);

// Regression: capture keeps only NICs with a PCI address; the check used to warn on every NIC the baseline lacked by
// `bdf ?? name`, so a soft-RoCE device was "extra" against a baseline captured from the same node, forever.
probe('soft-RoCE rxe0 (no PCI function) against a baseline captured with it: every GPU and NIC inventory-ok, no extra', async (t) => {
  const inv = await inventoryOf(HGX, softRoce());
  const line = (f: { status: string; code: string; subject: string }): string => `${f.status} ${f.code} ${f.subject}`;
  const want = [...GPUS, ...NICS.map((_, i) => `mlx5_${i}`), 'rxe0'].map((subject) => line({ status: 'pass', code: 'inventory-ok', subject }));
  t.strictSame(runCheck('device-inventory', inv, captureFrom(inv)).map(line).sort(), want.sort());
});
