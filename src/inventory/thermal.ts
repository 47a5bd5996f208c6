// PCIe link-speed cooling devices (drivers/thermal/pcie_cooling.c, PCIe bandwidth controller): a device of type
// `PCIe_Port_Link_Speed_<BDF>` per port the kernel may slow; cur_state is the port's top speed less its link's current
// speed, so for a port above 0 the Target Link Speed is read too (pcie/link-held.ts tells a throttle from a slow link).
// The thermal class has no link to the port, so every cooling device's `type` is read once.
import type { Host } from '../host/host.js';
import { ABSENT, type Fact, present, unknown, within } from '../model/fact.js';
import type { Bdf, PciDevice, PcieCooling } from '../model/inventory.js';
import { targetLinkSpeed } from '../parsers/pci-config.js';
import { BDF_RE } from '../parsers/sysfs.js';
import { factParsed, factText, type Notes, readWhy } from './read.js';

const DIR = '/sys/class/thermal';
const PREFIX = 'PCIe_Port_Link_Speed_';
// The thermal core prints an unsigned long; no cooling device has a billion states (pcie_cooling.c: one per speed).
const state = (s: string) => (/^\d{1,9}$/.test(s) ? { ok: true as const, value: Number(s) } : { ok: false as const, error: `not a cooling state: ${JSON.stringify(s.slice(0, 20))}` });


/**
 * A cooling device's `type` as a fact: empty, unprintable or a link-speed type without a PCI address is unknown, never
 * "another kind of device". A space is printable: intel_tcc_cooling.c registers "TCC Offset".
 */
async function coolingType(host: Host, path: string, notes: Notes): Promise<Fact<string>> {
  const t = await factText(host, path, notes);
  if (t.state !== 'present') return t.state === 'absent' ? unknown(`${path}: absent`) : t;
  const v = t.value;
  if (v === '' || !/^[\x20-\x7e]{1,64}$/.test(v) || (v.startsWith(PREFIX) && !BDF_RE.test(v.slice(PREFIX.length)))) return unknown(`${path}: not a cooling device type: ${JSON.stringify(v.slice(0, 40))}`);
  return t;
}

/**
 * Absent: no thermal class at all in the tree (a capture without it, or a kernel without CONFIG_THERMAL): unknown.
 * One cooling device whose type cannot be read makes the whole list unknown: it may be the link-speed device of a
 * port on a path, so "none registered" could not be told.
 */
export async function readPcieCooling(host: Host, notes: Notes, pci: ReadonlyMap<Bdf, PciDevice>): Promise<Fact<readonly PcieCooling[]>> {
  const ls = await host.list(DIR);
  if (!ls.ok) return unknown(ls.missing ? `${DIR} absent: a kernel without thermal, or a capture without it` : readWhy(DIR, ls.reason));
  const out = await Promise.all(
    ls.value.filter((n) => /^cooling_device\d+$/.test(n)).map(async (name): Promise<Fact<PcieCooling | null>> => {
      const type = await coolingType(host, `${DIR}/${name}/type`, notes);
      if (type.state !== 'present') return type;
      if (!type.value.startsWith(PREFIX)) return present(null);
      const [read, max] = await Promise.all([factParsed(host, `${DIR}/${name}/cur_state`, state, notes, 'absent'), factParsed(host, `${DIR}/${name}/max_state`, state, notes, 'absent')]);
      // A cooling device's states run from 0 to max_state: one that reads above it is no state of this device (a torn
      // or foreign file), so it says nothing about the link.
      const cur = read.state === 'present' && max.state === 'present' && read.value > max.value ? unknown(`${DIR}/${name}/cur_state ${read.value} is above max_state ${max.value}`) : read;
      return present({ device: name, port: type.value.slice(PREFIX.length), cur, max, target: ABSENT });
    }),
  );
  const bad = out.find((c) => c.state !== 'present');
  if (bad) return bad.state === 'unknown' ? bad : unknown(`${DIR}: a cooling device without a type`);
  const all = out.flatMap((c) => (c.state === 'present' && c.value !== null ? [c.value] : []));
  return present(await Promise.all(all.map(async (c) => (c.cur.state === 'present' && c.cur.value > 0 && pci.has(c.port) ? { ...c, target: await targetSpeed(host, pci.get(c.port)!) } : c))));
}

/**
 * A port's Target Link Speed (Link Control 2, PCIe capability +0x30): one 2-byte read, which the inventory's config
 * reads leave out (a live node's cost a register), so only a port at a cooling state above 0 pays for it.
 */
async function targetSpeed(host: Host, port: PciDevice): Promise<Fact<number>> {
  const pcie = within(port.config, (c) => c.pcie, 'no config space');
  if (pcie.state !== 'present') return pcie.state === 'absent' ? unknown('no PCI Express capability') : pcie;
  if (pcie.value.version < 2) return unknown(`a version ${pcie.value.version} PCI Express capability: no Link Control 2`);
  const at = pcie.value.offset + 0x30;
  const file = `${port.sysPath}/config`;
  const r = host.readParts ? await host.readParts(file, (part) => part(at, 2)) : await host.readBytes(file, 4096).then((x) => (x.ok ? { ok: true as const, value: x.value.subarray(at, at + 2) } : x));
  if (!r.ok) return unknown(readWhy(file, r.reason));
  if (r.value.length < 2) return unknown(`${file}: ends before Link Control 2 (${at.toString(16)}h)`);
  const gts = targetLinkSpeed(r.value[0]! | (r.value[1]! << 8));
  return gts === null ? unknown(`${file}: Link Control 2 Target Link Speed holds a reserved encoding`) : present(gts);
}
