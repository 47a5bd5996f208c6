// What pcie-payload reads beyond config space: the kernel's pci=pcie_bus_* and pcie_aspm= options, its ASPM policy,
// and each path device's `link/` ASPM attributes (drivers/pci/pcie/aspm.c aspm_ctrl_attr_group, shown only for
// the states the link is capable of: the directory is listed once, only below a downstream port, and only the files
// in it are read).
import type { Host } from '../host/host.js';
import { type Fact, present, unknown } from '../model/fact.js';
import type { Bdf, LinkAspm, PayloadPolicy, PciDevice } from '../model/inventory.js';
import { LINK_ASPM_FILES, type LinkAspmFile, parseAspmFlag, parseAspmPolicy } from '../parsers/aspm.js';
import { parsePciCmdline, type PciCmdline } from '../parsers/pci-cmdline.js';
import { factParsed, type Notes, readWhy } from './read.js';

export const ASPM_POLICY = '/sys/module/pcie_aspm/parameters/policy';
const isAspmFile = (n: string): n is LinkAspmFile => (LINK_ASPM_FILES as readonly string[]).includes(n);

/** Port types that keep a link state: root port, switch downstream port, PCI-to-PCIe bridge (pcie_downstream_port). */
const DOWNSTREAM = new Set([4, 6, 8]);

/**
 * aspm.c pcie_aspm_get_link: a device's link/ shows its upstream bridge's link state, which only a downstream port
 * keeps; older kernels showed the same state on the port too, so it is read once, on the device below. A device on
 * a root bus has none; an upstream bridge whose type could not be read (not root) is listed anyway.
 */
function mayShowLink(pci: ReadonlyMap<Bdf, PciDevice>, d: PciDevice): boolean {
  const up = d.bridges.at(-1);
  if (up === undefined) return false;
  const cfg = pci.get(up)?.config;
  const pcie = cfg?.state === 'present' ? cfg.value.pcie : null;
  return pcie?.state !== 'present' || DOWNSTREAM.has(pcie.value.portType);
}

async function linkAspm(host: Host, dir: string, notes: Notes): Promise<Fact<LinkAspm>> {
  const ls = await host.list(`${dir}/link`);
  // No `link/` at all: a kernel that manages no link above this device (a root port, a device on a root bus).
  if (!ls.ok) return ls.missing ? present({}) : unknown(readWhy(`${dir}/link`, ls.reason));
  const names = ls.value.filter(isAspmFile);
  const flags = await Promise.all(names.map((n) => factParsed(host, `${dir}/link/${n}`, parseAspmFlag, notes, 'absent')));
  const out: Partial<Record<LinkAspmFile, boolean>> = {};
  for (const [i, f] of flags.entries()) {
    if (f.state === 'unknown') return f;
    if (f.state === 'present') out[names[i]!] = f.value;
  }
  return present(out);
}

/** /proc/cmdline is always there on a node: absent (a capture without it) is as unknown as unreadable. */
function cmdlineFact(text: Fact<string>): Fact<PciCmdline> {
  if (text.state === 'absent') return unknown('/proc/cmdline absent');
  if (text.state === 'unknown') return text;
  const p = parsePciCmdline(text.value);
  return p.ok ? present(p.value) : unknown(`/proc/cmdline: ${p.error}`);
}

/** `cmdline`: /proc/cmdline as build.ts read it once (shared with the IOMMU reader). */
export async function readPayload(host: Host, pci: ReadonlyMap<Bdf, PciDevice>, cmdline: Fact<string>, notes: Notes): Promise<PayloadPolicy> {
  const [aspmPolicy, links] = await Promise.all([
    factParsed(host, ASPM_POLICY, parseAspmPolicy, notes, 'absent'),
    Promise.all([...pci.values()].map(async (d) => [d.bdf, mayShowLink(pci, d) ? await linkAspm(host, d.sysPath, notes) : present({})] as const)),
  ]);
  return {
    cmdline: cmdlineFact(cmdline),
    aspmPolicy,
    linkAspm: new Map(links),
  };
}
