// Changes the check tables make on a written sysfs tree, for what a generated node description cannot say: a file
// put or removed, ACS capability bits, a looping capability list, an unreadable file, an Unknown link, D3cold, soft-RoCE.
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { nul } from '../../src/model/fact.js';
import { parsePciConfig } from '../../src/parsers/pci-config.js';

/** A change made on the written tree, for what a GenNode cannot say (an "Unknown" speed, one group's type). */
export type Patch = (root: string) => Promise<void>;
export const put = (kpath: string, text: string): Patch => async (root) => {
  await fsp.mkdir(path.join(root, path.posix.dirname(kpath)), { recursive: true });
  await fsp.writeFile(path.join(root, kpath), text);
};
export const remove = (kpath: string): Patch => (root) => fsp.rm(path.join(root, kpath), { recursive: true, force: true });
/** The file cut to its first `lines` lines, as a torn read or capture leaves it. */
export const cut = (kpath: string, lines: number): Patch => async (root) => {
  const file = path.join(root, kpath);
  const text = await fsp.readFile(file, 'utf8');
  await fsp.writeFile(file, text.split('\n').slice(0, lines).map((l) => `${l}\n`).join(''));
};
export const patches = (...ps: Patch[]): Patch => async (root) => {
  for (const p of ps) await p(root);
};

/**
 * Sets bits of a bridge's ACS Capability register (+4), as a switch that implements Egress Control reports it, and
 * clears `clear` there (a port that does not implement a control: its Control bit then reads 0, hard-wired).
 */
export const acsCap = (bdf: string, bits: number, clear = 0): Patch => async (root) => {
  const file = path.join(root, 'sys/bus/pci/devices', bdf, 'config');
  const b = await fsp.readFile(file);
  const acs = nul(parsePciConfig(b).acs);
  if (!acs) throw new Error(`${bdf} has no ACS capability`);
  b.writeUInt16LE((b.readUInt16LE(acs.offset + 4) | bits) & ~clear & 0xffff, acs.offset + 4);
  await fsp.writeFile(file, b);
};

/** The first extended capability (0x100) points back at itself: the walk stops there with a problem, before ACS/ATS. */
export const extLoop = (bdf: string): Patch => async (root) => {
  const file = path.join(root, 'sys/bus/pci/devices', bdf, 'config');
  const b = await fsp.readFile(file);
  b.writeUInt32LE(((b.readUInt32LE(0x100) & 0x000fffff) | (0x100 << 20)) >>> 0, 0x100);
  await fsp.writeFile(file, b);
};

/**
 * Extended configuration space reads all ones from 0x100 on while the header still answers (ECAM lost after boot, a
 * function that stopped answering): the kernel sized the file 4096 bytes only because 0x100 answered at boot.
 */
export const extAllOnes = (bdf: string): Patch => async (root) => {
  const file = path.join(root, 'sys/bus/pci/devices', bdf, 'config');
  const b = await fsp.readFile(file);
  if (b.length <= 0x100) throw new Error(`${bdf} has no extended configuration space`);
  b.fill(0xff, 0x100);
  await fsp.writeFile(file, b);
};

/** A file no read can return text from (root reads through any mode bits, so a directory stands in: EISDIR). */
export const unreadable = (kpath: string): Patch => async (root) => {
  await fsp.rm(path.join(root, kpath), { recursive: true, force: true });
  await fsp.mkdir(path.join(root, kpath), { recursive: true });
};

/**
 * Current Link Speed reads a reserved value (0), as Link Status does when the link is down: the kernel's
 * current_link_speed then says "Unknown" (pcie_link_speed[0], drivers/pci/pci-sysfs.c). Both are written.
 */
export const linkSpeedUnknown = (bdf: string): Patch => async (root) => {
  await put(`sys/bus/pci/devices/${bdf}/current_link_speed`, 'Unknown\n')(root);
  const file = path.join(root, 'sys/bus/pci/devices', bdf, 'config');
  const b = await fsp.readFile(file);
  const pcie = nul(parsePciConfig(b).pcie);
  if (!pcie) throw new Error(`${bdf} has no PCIe capability`);
  b.writeUInt16LE(b.readUInt16LE(pcie.offset + 0x12) & ~0x000f, pcie.offset + 0x12);
  await fsp.writeFile(file, b);
};

/**
 * A function in D3cold (or fallen off the bus): every configuration read answers all ones, and the kernel's link
 * attributes decode those ones (speed "Unknown", width 63: drivers/pci/pci-sysfs.c).
 */
export const d3cold = (bdf: string): Patch => async (root) => {
  const file = path.join(root, 'sys/bus/pci/devices', bdf, 'config');
  await fsp.writeFile(file, Buffer.alloc((await fsp.readFile(file)).length, 0xff));
  await put(`sys/bus/pci/devices/${bdf}/current_link_speed`, 'Unknown\n')(root);
  await put(`sys/bus/pci/devices/${bdf}/current_link_width`, '63\n')(root);
};

/**
 * A soft-RoCE device (rdma link add rxe0 type rxe netdev eth0) on a kernel where it has no parent device: it lives in
 * /sys/devices/virtual/infiniband and has no `device` link, so it has no PCI function (drivers/infiniband/sw/rxe).
 */
export const softRoce = (name = 'rxe0'): Patch => async (root) => {
  const dir = `sys/devices/virtual/infiniband/${name}`;
  for (const [f, v] of Object.entries({ node_guid: '5054:00ff:fe12:3456', node_type: '1: CA', node_desc: 'rxe', 'ports/1/state': '4: ACTIVE',
    'ports/1/phys_state': '5: LinkUp', 'ports/1/rate': '100 Gb/sec (4X EDR)', 'ports/1/link_layer': 'Ethernet' })) await put(`${dir}/${f}`, `${v}\n`)(root);
  await fsp.mkdir(path.join(root, 'sys/class/infiniband'), { recursive: true });
  await fsp.symlink(`../../devices/virtual/infiniband/${name}`, path.join(root, 'sys/class/infiniband', name));
};
