// Test-side generator, its configuration space part: the 4 KiB `config` of one declared PCI function (header, PCI
// Express capability with link registers, AER, ACS, ATS) and the bus numbering the tree writer shares with it.
import { writeAer, writeDevCtl } from './pci-regs-gen.js';
import type { GenDevice, GenKind } from './sysfs-tree.js';

/** Link speed encodings 1..6 (PCIe Base 6.0 §7.5.3.6) and pci_speed_string() text. */
const SPEEDS = [2.5, 5, 8, 16, 32, 64];
const PORT_TYPE: Record<GenKind, number> = { rootport: 4, 'switch-up': 5, 'switch-down': 6, gpu: 0, nic: 0, other: 0 };
export const DEFAULTS: Record<GenKind, { vendor: number; device: number; cls: number; driver: string | null }> = {
  rootport: { vendor: 0x8086, device: 0x352a, cls: 0x060400, driver: 'pcieport' },
  'switch-up': { vendor: 0x1000, device: 0xc030, cls: 0x060400, driver: 'pcieport' },
  'switch-down': { vendor: 0x1000, device: 0xc030, cls: 0x060400, driver: 'pcieport' },
  gpu: { vendor: 0x10de, device: 0x2330, cls: 0x030200, driver: 'nvidia' },
  nic: { vendor: 0x15b3, device: 0x1021, cls: 0x020700, driver: 'mlx5_core' },
  other: { vendor: 0x8086, device: 0x0d57, cls: 0x088000, driver: null },
};
const BDF_RE = /^([0-9a-f]{4,8}):([0-9a-f]{2}):([0-9a-f]{2})\.([0-7])$/;
export const isBridge = (k: GenKind): boolean => k === 'rootport' || k === 'switch-up' || k === 'switch-down';
export const hx = (n: number, w: number): string => n.toString(16).padStart(w, '0');

function speedCode(gts: number): number {
  const i = SPEEDS.indexOf(gts);
  if (i < 0) throw new Error(`no PCIe speed encoding for ${gts} GT/s`);
  return i + 1;
}

export function busOf(bdf: string, field = 2): number {
  const m = BDF_RE.exec(bdf);
  if (!m) throw new Error(`not a BDF: ${bdf}`);
  return parseInt(m[field]!, 16);
}

const maxBus = (d: GenDevice): number => Math.max(busOf(d.bdf), ...(d.children ?? []).map(maxBus));

/** A bridge's secondary bus (its children's) and subordinate bus (the highest below it). */
export function busRange(d: GenDevice): [secondary: number, subordinate: number] {
  const sec = d.children?.length ? busOf(d.children[0]!.bdf) : busOf(d.bdf) + 1;
  return [sec, Math.max(sec, maxBus(d))];
}

/** Configuration space per PCI Local Bus 3.0 §6 and PCIe Base 6.0 §7.5.3, §7.7.11 (ACS), §10.5.1 (ATS). */
export function configSpace(d: GenDevice): Buffer {
  const b = Buffer.alloc(4096);
  const def = DEFAULTS[d.kind];
  const bridge = isBridge(d.kind);
  const { vendor = def.vendor, device = def.device, classCode: cls = def.cls } = d;
  b.writeUInt32LE(((device << 16) | vendor) >>> 0, 0x00);
  b.writeUInt16LE(bridge ? 0x0407 : 0x0546, 0x04); // Command: memory, bus master (+ I/O on bridges)
  b.writeUInt16LE(0x0010, 0x06); // Status bit 4: capabilities list
  b.writeUInt8(d.revision ?? 0xa1, 0x08);
  b.writeUIntLE(cls, 0x09, 3);
  b.writeUInt8((bridge ? 0x01 : 0x00) | (d.multiFunction ? 0x80 : 0), 0x0e); // bit 7: a multi-function device
  // Type 1: primary, secondary, subordinate bus; type 0: subsystem vendor/device.
  if (bridge) [busOf(d.bdf), ...busRange(d)].forEach((bus, i) => b.writeUInt8(bus, 0x18 + i));
  else b.writeUInt32LE((((d.subsystem?.[1] ?? 0) << 16) | (d.subsystem?.[0] ?? vendor)) >>> 0, 0x2c);
  // 0x34 → 0x40 Power Management → 0x48 MSI → 0x60 PCI Express (v2, port type, slot on ports below a link), as on the H200.
  b.writeUInt8(0x40, 0x34);
  b.writeUInt16LE(0x4801, 0x40);
  b.writeUInt16LE(0x6005, 0x48);
  const pcie = 0x60;
  const slot = d.kind === 'rootport' || d.kind === 'switch-down';
  // Bridges: PCIe cap → 0xa0 Subsystem ID capability (0x0d), where the kernel takes a bridge's subsystem_* from.
  b.writeUInt32LE(((0x0002 | (PORT_TYPE[d.kind] << 4) | (slot ? 0x0100 : 0)) << 16 | (bridge ? 0xa010 : 0x0010)) >>> 0, pcie);
  if (bridge) b.writeUInt32LE(((((d.subsystem?.[1] ?? 0) << 16) | (d.subsystem?.[0] ?? vendor)) >>> 0), 0xa4);
  if (bridge) b.writeUInt16LE(0x000d, 0xa0);
  const { speed, width, maxSpeed, maxWidth } = linkOf(d);
  const dllla = bridge && d.kind !== 'switch-up';
  const port = bridge ? busOf(d.bdf, 3) : 0; // Port Number: the port's device number
  b.writeUInt32LE(((port << 24) | (dllla ? 1 << 20 : 0) | (maxWidth << 4) | speedCode(maxSpeed)) >>> 0, pcie + 0x0c);
  b.writeUInt16LE((dllla ? 1 << 13 : 0) | (width << 4) | speedCode(speed), pcie + 0x12);
  b.writeUInt32LE(((1 << (speedCode(maxSpeed) + 1)) - 2) & 0xfe, pcie + 0x2c); // Link Capabilities 2: supported speeds
  b.writeUInt16LE(speedCode(d.targetSpeed ?? maxSpeed), pcie + 0x30); // Link Control 2: target speed
  writeDevCtl(b, pcie, d, bridge);
  // Extended space: AER at 0x100, then ACS / ATS.
  const ext: [id: number, size: number, fill: (at: number) => void][] = [[0x0001, 0x48, (at) => writeAer(b, at, d)]];
  // ACSCap V B R C U T (no egress control) as on Broadcom/Intel ports; ATS Capability: page-aligned request.
  if (d.acsCtl !== undefined) ext.push([0x000d, 8, (at) => b.writeUInt32LE((((d.acsCtl! & 0xffff) << 16) | 0x005f) >>> 0, at + 4)]);
  if (d.ats !== undefined) ext.push([0x000f, 8, (at) => b.writeUInt32LE(((d.ats ? 0x8000 << 16 : 0) | 0x0020) >>> 0, at + 4)]);
  ext.reduce((at, [id, size, fill], i) => {
    const next = i + 1 < ext.length ? at + size : 0; // header: ID 15:0, version 19:16, next 31:20
    b.writeUInt32LE((id | ((id === 0x0001 ? 2 : 1) << 16) | (next << 20)) >>> 0, at);
    fill(at);
    return next;
  }, 0x100);
  return b.subarray(0, d.configBytes ?? 4096);
}

export function linkOf(d: GenDevice): { speed: number; width: number; maxSpeed: number; maxWidth: number } {
  const [speed, width] = [d.speed ?? 16, d.width ?? 16];
  return { speed, width, maxSpeed: d.maxSpeed ?? speed, maxWidth: d.maxWidth ?? width };
}
