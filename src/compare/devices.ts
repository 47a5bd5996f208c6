// PCIe differences between two inventories: devices present and placed, GPU↔NIC classes, link training, ACS per bridge.
import { factText, valueOf, within, ABSENT, nul } from '../model/fact.js';
import type { Inventory, PathClass, PciDevice } from '../model/inventory.js';
import { deviceName, linkText } from '../model/names.js';
import { formatAcs, redirectBits } from '../parsers/pci-config.js';
import { topoMatrix } from '../topo/matrix.js';
import { diff, type Difference } from './types.js';

const RANK: Record<PathClass, number> = { PIX: 0, PXB: 1, PHB: 2, NODE: 3, SYS: 4 };

const what = (inv: Inventory, bdf: string): string => {
  const d = inv.pci.get(bdf);
  const nic = inv.nics.find((n) => n.bdf === bdf);
  if (inv.gpus.some((g) => g.bdf === bdf)) return `GPU ${deviceName(nul(d?.vendor ?? ABSENT), nul(d?.device ?? ABSENT))}`;
  return nic ? `${nic.name} ${deviceName(nul(d?.vendor ?? ABSENT), nul(d?.device ?? ABSENT))}` : 'bridge';
};

/** GPUs by address; NICs by address, then by name (a NIC at a new address under its old name has moved). */
export function presence(a: Inventory, b: Inventory): Difference[] {
  const out: Difference[] = [];
  const ga = new Set(a.gpus.map((g) => g.bdf));
  const gb = new Set(b.gpus.map((g) => g.bdf));
  for (const g of gb) if (!ga.has(g)) out.push(diff('critical', 'device', g, 'missing', what(b, g), 'inventory-missing'));
  for (const g of ga) if (!gb.has(g)) out.push(diff('major', 'device', g, what(a, g), 'absent', 'inventory-extra'));
  const nb = new Map(b.nics.map((n) => [n.bdf ?? n.name, n]));
  const na = new Map(a.nics.map((n) => [n.bdf ?? n.name, n]));
  const moved = new Set<string>();
  for (const [key, n] of nb) {
    const same = na.get(key);
    if (same) {
      if (same.name !== n.name) out.push(diff('minor', 'device', key, same.name, n.name, 'device-renamed'));
      continue;
    }
    const byName = a.nics.find((x) => x.name === n.name && !nb.has(x.bdf ?? x.name));
    if (byName) {
      moved.add(byName.bdf ?? byName.name);
      out.push(diff('critical', 'device', n.name, byName.bdf ?? '?', n.bdf ?? '?', 'topology-changed'));
    } else out.push(diff('critical', 'device', n.name, 'missing', `${what(b, n.bdf ?? '')} at ${n.bdf ?? '?'}`, 'inventory-missing'));
  }
  for (const [key, n] of na) if (!nb.has(key) && !moved.has(key)) out.push(diff('major', 'device', n.name, `${what(a, n.bdf ?? '')} at ${n.bdf ?? '?'}`, 'absent', 'inventory-extra'));
  return out;
}

const endpoints = (inv: Inventory): string[] => [...inv.gpus.map((g) => g.bdf), ...inv.nics.flatMap((n) => (n.bdf ? [n.bdf] : []))];

/** Model, root complex and NUMA node of each GPU and NIC present on both. */
export function placement(a: Inventory, b: Inventory): Difference[] {
  const out: Difference[] = [];
  for (const bdf of endpoints(b)) {
    const x = a.pci.get(bdf);
    const y = b.pci.get(bdf);
    if (!x || !y || !endpoints(a).includes(bdf)) continue;
    if (nul(x.vendor) !== nul(y.vendor) || nul(x.device) !== nul(y.device)) out.push(diff('major', 'device', bdf, what(a, bdf), what(b, bdf), 'inventory-mismatch'));
    if (x.hostBridge !== y.hostBridge) out.push(diff('critical', 'root-complex', bdf, x.hostBridge, y.hostBridge, 'topology-changed'));
    const [na, nb] = [x.numaNode, y.numaNode];
    if (na.state === 'unknown' || nb.state === 'unknown') {
      if (na.state !== nb.state) out.push(diff('minor', 'numa', bdf, `node ${factText(na)}`, `node ${factText(nb)}`, 'unknown-side'));
    } else if (valueOf(na) !== valueOf(nb)) out.push(diff('major', 'numa', bdf, `node ${factText(na)}`, `node ${factText(nb)}`, 'topology-numa-changed'));
  }
  return out;
}

/** nvidia-smi's class of every GPU↔NIC pair present on both (GPU by address, NIC by name). */
export function topology(a: Inventory, b: Inventory): Difference[] {
  const ma = topoMatrix(a);
  const mb = topoMatrix(b);
  const out: Difference[] = [];
  for (const g of mb.gpus) {
    const ga = ma.gpus.find((x) => x.bdf === g.bdf);
    for (const n of mb.nics) {
      const nA = ma.nics.find((x) => x.name === n.name);
      if (!ga || !nA) continue;
      const ca = ma.cell(ga.label, nA.label) as PathClass;
      const cb = mb.cell(g.label, n.label) as PathClass;
      if (ca === cb) continue;
      const farther = RANK[ca] > RANK[cb];
      out.push(diff(farther ? 'critical' : 'major', 'topology', `${g.bdf}-${n.name}`, ca, cb, farther && ca === 'SYS' ? 'topology-remote-nic' : 'topology-changed'));
    }
  }
  return out;
}

/** Current link of every device on the paths of both nodes (GPUs, NICs, bridges), by address. */
export function links(a: Inventory, b: Inventory): Difference[] {
  const out: Difference[] = [];
  const gpus = new Set(b.gpus.map((g) => g.bdf));
  for (const [bdf, y] of b.pci) {
    const x = a.pci.get(bdf);
    if (!x) continue;
    const [ca, cb] = [x.current, y.current];
    const ta = linkText(ca.speed, ca.width);
    const tb = linkText(cb.speed, cb.width);
    // Only what both sides read is compared; an unknown side is no difference in link training.
    const [wa, wb, sa, sb] = [valueOf(ca.width), valueOf(cb.width), valueOf(ca.speed), valueOf(cb.speed)];
    if (wa !== undefined && wb !== undefined && wa !== wb) {
      const low = wa < wb;
      out.push(diff(low ? 'critical' : 'minor', 'link-width', bdf, ta, tb, low ? 'link-width-low' : 'better-than-reference'));
    }
    if (sa !== undefined && sb !== undefined && sa !== sb) {
      const low = sa < sb;
      // A GPU at idle may drop its link speed (power saving): the pcie-link check calls that a warning.
      const idle = low && gpus.has(bdf);
      out.push(diff(low && !idle ? 'major' : 'minor', 'link-speed', bdf, ta, tb, idle ? 'link-speed-idle' : low ? 'link-speed-low' : 'better-than-reference'));
    }
  }
  return out;
}

function acsText(d: PciDevice): { text: string; redirect: string[] } | null {
  const acs = within(d.config, (c) => c.acs, 'config space absent');
  if (acs.state === 'unknown') return null;
  if (acs.state === 'absent') return { text: 'no ACS capability', redirect: [] };
  // Only the controls that are on, in lspci's words ("SrcValid+ ReqRedir+"): the full word does not fit a table.
  const on = formatAcs(acs.value.ctl).split(' ').filter((b) => b.endsWith('+'));
  return { text: `ACSCtl ${on.length ? on.join(' ') : 'all off'}`, redirect: redirectBits(acs.value.ctl) };
}

/** ACS control of every bridge a GPU↔NIC peer transfer crosses on either node, present on both. */
export function acs(a: Inventory, b: Inventory): Difference[] {
  const bridges = new Set<string>();
  for (const inv of [a, b]) {
    const m = topoMatrix(inv);
    for (const g of m.gpus) for (const n of m.nics) for (const br of m.path(g.label, n.label)?.peerBridges ?? []) bridges.add(br);
  }
  const out: Difference[] = [];
  for (const bdf of bridges) {
    const x = a.pci.get(bdf);
    const y = b.pci.get(bdf);
    if (!x || !y) continue;
    const [sa, sb] = [acsText(x), acsText(y)];
    if (!sa || !sb) {
      if (sa || sb) out.push(diff('minor', 'acs', bdf, sa?.text ?? 'not readable', sb?.text ?? 'not readable', 'acs-unreadable'));
      continue;
    }
    if (sa.text === sb.text) continue;
    const worse = sa.redirect.some((r) => !sb.redirect.includes(r));
    out.push(diff(worse ? 'critical' : 'minor', 'acs', bdf, sa.text, sb.text, worse ? 'acs-redirect' : 'better-than-reference'));
  }
  return out;
}
