// pcie-throttle: the kernel's PCIe link-speed cooling devices (drivers/thermal/pcie_cooling.c) on the HGX tree.
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { nul } from '../../src/model/fact.js';
import { parsePciConfig } from '../../src/parsers/pci-config.js';
import { remove } from './_patches.js';
import { dev, P0, patches, put, table, unreadable, type Patch, type Want } from './_trees.js';

/** /sys/class/thermal/cooling_deviceN as the thermal core writes it (type, cur_state, max_state). */
const cooling = (n: number, type: string, cur: number, max = 3): Patch =>
  patches(...Object.entries({ type, cur_state: `${cur}`, max_state: `${max}` }).map(([k, v]) => put(`sys/class/thermal/cooling_device${n}/${k}`, `${v}\n`)));
const port = (n: number, bdf: string, cur: number): Patch => cooling(n, `PCIe_Port_Link_Speed_${bdf}`, cur);
/** A CPU's cooling device (ACPI processor), which every server has, and the two ports above GPU0 at full speed. */
const healthy = patches(cooling(0, 'Processor', 0), port(1, P0.rp, 0), port(2, P0.downGpu, 0));
const ok = (subject: string): Want => ({ status: 'pass', code: 'throttle-ok', subject, expected: 'state 0', actual: 'state 0' });
const none: Want = { status: 'pass', code: 'throttle-ok', subject: 'node', expected: 'state 0', actual: 'no device' };
const on = (state: number, target: string, top = 'Gen5'): Want => ({ status: 'fail', code: 'throttle-on', subject: P0.downGpu, expected: `Target Link Speed ${top}`, actual: `${target}, state ${state}` });
/** State above 0, the port's target the link's top: a slower link, not held. */
const slower = (state: number, top: string): Want => ({ status: 'pass', code: 'throttle-ok', subject: P0.downGpu, expected: `Target Link Speed ${top}`, actual: `${top}, state ${state}` });
/** The bandwidth controller throttles by lowering the port's Target Link Speed (bwctrl.c pcie_set_target_speed). */
const held = (gts: number) => (n: Parameters<typeof dev>[0]): void => void (dev(n, P0.downGpu).targetSpeed = gts);

/** GPU0 a Gen4 device below its Gen5 port, the port's Target Link Speed `gts`. */
const gen4Gpu = (gts: number) => (n: Parameters<typeof dev>[0]): void => {
  dev(n, P0.gpu).speed = 16;
  held(gts)(n);
};

/** The port above GPU0's Link Capabilities Max Link Speed a reserved encoding (0): the port's top speed not known. */
const portTopReserved: Patch = async (root) => {
  const file = path.join(root, 'sys/bus/pci/devices', P0.downGpu, 'config');
  const b = await fsp.readFile(file);
  const at = nul(parsePciConfig(b).pcie)!.offset + 0x0c;
  b.writeUInt32LE((b.readUInt32LE(at) & ~0xf) >>> 0, at);
  await fsp.writeFile(file, b);
};
const unknownDownGpu: Want = { status: 'skip', code: 'throttle-unknown', subject: P0.downGpu };

export const cases = table('pcie-throttle', [
  {
    name: 'valid: the root port and the switch port above GPU0 have cooling devices, both at state 0',
    patch: healthy,
    subjects: [P0.rp, P0.downGpu],
    bare: [ok(P0.rp), ok(P0.downGpu)],
    based: [ok(P0.rp), ok(P0.downGpu)],
  },
  {
    name: 'invalid: the kernel holds the switch port above GPU0 two steps below full speed (Target Link Speed Gen3 of Gen5)',
    change: held(8),
    patch: patches(healthy, port(2, P0.downGpu, 2)),
    bare: [on(2, 'Gen3')],
    based: [on(2, 'Gen3')],
  },
  {
    name: 'invalid: one step below full speed (state 1, Target Link Speed Gen4) is held too',
    change: held(16),
    patch: patches(healthy, port(2, P0.downGpu, 1)),
    bare: [on(1, 'Gen4')],
    based: [on(1, 'Gen4')],
  },
  {
    name: 'valid: state 3 with the port\'s Target Link Speed its top: the link runs slower (a GPU idling at 2.5 GT/s), not held',
    patch: patches(healthy, port(2, P0.downGpu, 3)),
    subjects: [P0.downGpu],
    bare: [slower(3, 'Gen5')],
    based: [slower(3, 'Gen5')],
  },
  {
    // bwctrl's state 0 targets the speeds the port and the device both support (pcie_bwctrl_select_speed): a Gen4 card
    // under a Gen5 port runs at its top with a Gen4 target, and its cooling device reads state 1 for good.
    name: 'valid: a Gen4 device under the Gen5 port, Target Link Speed Gen4, state 1: the link is at its top, not held',
    change: gen4Gpu(16),
    patch: patches(healthy, port(2, P0.downGpu, 1)),
    subjects: [P0.downGpu],
    bare: [slower(1, 'Gen4')],
    based: [slower(1, 'Gen4')],
  },
  {
    name: 'invalid: the same Gen4 device held at Gen3 (state 2): below the link\'s top',
    change: gen4Gpu(8),
    patch: patches(healthy, port(2, P0.downGpu, 2)),
    bare: [on(2, 'Gen3', 'Gen4')],
    based: [on(2, 'Gen3', 'Gen4')],
  },
  {
    name: 'skip: state 2 on a port read without root (64-byte config, no Link Control 2): whether it is held could not be told',
    change: (n) => void (dev(n, P0.downGpu).configBytes = 64),
    patch: patches(healthy, port(2, P0.downGpu, 2)),
    subjects: [P0.downGpu],
    bare: [{ status: 'skip', code: 'throttle-unknown', subject: P0.downGpu }],
    based: [{ status: 'skip', code: 'throttle-unknown', subject: P0.downGpu }],
  },
  {
    name: 'skip: state 2, Target Link Speed Gen3, GPU0 below read without root (no Link Capabilities): the link\'s top could not be told',
    change: (n) => {
      held(8)(n);
      dev(n, P0.gpu).configBytes = 64;
    },
    patch: patches(healthy, port(2, P0.downGpu, 2)),
    subjects: [P0.downGpu],
    bare: [unknownDownGpu],
    based: [unknownDownGpu],
  },
  {
    name: 'skip: state 2, Target Link Speed Gen3, the port\'s own Max Link Speed a reserved encoding: its top could not be told',
    change: held(8),
    patch: patches(healthy, port(2, P0.downGpu, 2), portTopReserved),
    subjects: [P0.downGpu],
    bare: [unknownDownGpu],
    based: [unknownDownGpu],
  },
  {
    name: 'skip: a state above max_state (7 of 3) is no state of that device: unknown, never a throttled link',
    patch: patches(healthy, port(2, P0.downGpu, 7)),
    bare: [{ status: 'skip', code: 'throttle-unknown', subject: P0.downGpu }],
    based: [{ status: 'skip', code: 'throttle-unknown', subject: P0.downGpu }],
  },
  {
    // drivers/thermal/intel/intel_tcc_cooling.c registers its device as "TCC Offset" (Intel client CPUs, Skylake on):
    // a type with a space is a type, not an unreadable one.
    name: 'valid: beside the two ports, the CPU\'s "TCC Offset" cooling device (a type with a space)',
    patch: patches(healthy, cooling(3, 'TCC Offset', 0, 63)),
    subjects: [P0.rp, P0.downGpu],
    bare: [ok(P0.rp), ok(P0.downGpu)],
    based: [ok(P0.rp), ok(P0.downGpu)],
  },
  {
    name: 'valid: thermal class with only CPU cooling devices (a kernel without the PCIe bandwidth controller)',
    patch: cooling(0, 'Processor', 0),
    subjects: ['node'],
    bare: [none],
    based: [none],
  },
  {
    name: 'valid: a throttled port that no GPU↔NIC path crosses',
    patch: port(0, '0000:00:1c.0', 3),
    subjects: ['node'],
    bare: [none],
    based: [none],
  },
  {
    name: 'skip: no /sys/class/thermal in the tree: unknown, never pass',
    bare: [{ status: 'skip', code: 'throttle-unknown', subject: 'node' }],
    based: [{ status: 'skip', code: 'throttle-unknown', subject: 'node' }],
  },
  {
    name: 'skip: cur_state unreadable on the port above GPU0',
    patch: patches(healthy, unreadable('sys/class/thermal/cooling_device2/cur_state')),
    bare: [{ status: 'skip', code: 'throttle-unknown', subject: P0.downGpu }],
    based: [{ status: 'skip', code: 'throttle-unknown', subject: P0.downGpu }],
  },
  {
    name: 'skip: a cooling device whose type cannot be read may be a path port\'s: never "none registered"',
    patch: patches(cooling(0, 'Processor', 0), port(1, P0.downGpu, 0), unreadable('sys/class/thermal/cooling_device1/type')),
    bare: [{ status: 'skip', code: 'throttle-unknown', subject: 'node' }],
    based: [{ status: 'skip', code: 'throttle-unknown', subject: 'node' }],
  },
  {
    // The kernel names every one `PCIe_Port_Link_Speed_` + pci_name() (pcie_cooling.c): a type cut inside the
    // address (a torn copy in a capture) names no port, and may be the port above GPU0 held at state 2.
    name: 'skip: a link-speed cooling device type cut inside its PCI address may be a path port\'s: never "that port is elsewhere"',
    change: held(8),
    patch: patches(healthy, port(2, P0.downGpu, 2), put('sys/class/thermal/cooling_device2/type', `PCIe_Port_Link_Speed_${P0.downGpu.slice(0, 7)}\n`)),
    bare: [{ status: 'skip', code: 'throttle-unknown', subject: 'node' }],
    based: [{ status: 'skip', code: 'throttle-unknown', subject: 'node' }],
  },
  {
    name: 'skip: a link-speed cooling device type with no address at all names no port',
    patch: patches(healthy, put('sys/class/thermal/cooling_device2/type', 'PCIe_Port_Link_Speed_\n')),
    bare: [{ status: 'skip', code: 'throttle-unknown', subject: 'node' }],
    based: [{ status: 'skip', code: 'throttle-unknown', subject: 'node' }],
  },
  {
    name: 'skip: a cooling device without its type file (a capture that left it out) is said by that file',
    patch: patches(cooling(0, 'Processor', 0), port(1, P0.downGpu, 0), remove('sys/class/thermal/cooling_device1/type')),
    bare: [{ status: 'skip', code: 'throttle-unknown', subject: 'node' }],
    based: [{ status: 'skip', code: 'throttle-unknown', subject: 'node' }],
  },
  {
    name: 'skip: a cooling device type that is empty is no type at all',
    patch: patches(cooling(0, 'Processor', 0), port(1, P0.downGpu, 0), put('sys/class/thermal/cooling_device1/type', '\n')),
    bare: [{ status: 'skip', code: 'throttle-unknown', subject: 'node' }],
    based: [{ status: 'skip', code: 'throttle-unknown', subject: 'node' }],
  },
]);
