// PCIe differences between two nodes' views: devices present and placed, GPU↔NIC classes, link training, ACS per bridge.
import { ABSENT, nul, valueOf, within } from '../model/fact.js';
import { type Inventory, isPathClass, PATH_RANK as RANK, type PciDevice, UNPLACED } from '../model/inventory.js';
import { deviceName } from '../model/names.js';
import { formatAcs, redirectBits } from '../parsers/pci-config.js';
import { diff, type Difference } from './types.js';
import { devicesOf, sameNic } from './by-bdf.js';
import type { CompareView, NicView } from './view.js';


/** How a device is named in a difference: `GPU H100 SXM5`, `mlx5_0 ConnectX-7`, or `bridge`. */
export const what = (inv: Inventory, bdf: string): string => {
  const d = inv.pci.get(bdf);
  const nic = inv.nics.find((n) => valueOf(n.bdf) === bdf);
  if (inv.gpus.some((g) => g.bdf === bdf)) return `GPU ${deviceName(nul(d?.vendor ?? ABSENT), nul(d?.device ?? ABSENT))}`;
  return nic ? `${nic.name} ${deviceName(nul(d?.vendor ?? ABSENT), nul(d?.device ?? ABSENT))}` : 'bridge';
};

/** GPUs by address; NICs by address, then by name (a NIC at a new address under its old name has moved). */
export function presence(a: CompareView, b: CompareView): Difference[] {
  const out: Difference[] = [];
  const ga = new Set(a.gpus.map((g) => g.bdf));
  const gb = new Set(b.gpus.map((g) => g.bdf));
  const whatOf = (v: CompareView, bdf: string): string => v.gpus.find((g) => g.bdf === bdf)!.what;
  for (const g of gb) if (!ga.has(g)) out.push(diff('critical', 'device', g, 'missing', whatOf(b, g), 'inventory-missing'));
  for (const g of ga) if (!gb.has(g)) out.push(diff('major', 'device', g, whatOf(a, g), 'absent', 'inventory-extra'));
  const nb = new Map(b.nics.map((n) => [n.bdf ?? n.name, n]));
  const na = new Map(a.nics.map((n) => [n.bdf ?? n.name, n]));
  // An adapter whose `device` link could not be read may sit anywhere: what hangs on it is a could-not-tell, not a verdict.
  const unreadA = a.nics.filter((n) => n.bdfUnknown !== undefined).map((n) => n.name);
  const moved = new Set<string>();
  for (const [key, n] of nb) {
    const same = na.get(key);
    if (same) {
      if (same.name !== n.name) out.push(diff('minor', 'device', key, same.name, n.name, 'device-renamed'));
      continue;
    }
    const byName = a.nics.find((x) => x.name === n.name && !nb.has(x.bdf ?? x.name));
    if (byName) moved.add(byName.bdf ?? byName.name);
    const why = byName?.bdfUnknown ?? n.bdfUnknown;
    // The reference's side is its adapter as it is (place), whatever the suspect did with it: the fleet counts the
    // nodes that do not differ as holding that text (fleet/facts.ts), so a moved adapter and a missing one are told
    // against one value.
    if (byName && why !== undefined) out.push(diff('minor', 'device', n.name, place(byName), place(n), 'unknown-side'));
    else if (byName) out.push(diff('critical', 'device', n.name, place(byName), place(n), 'topology-changed'));
    else if (unreadA.length) out.push(diff('minor', 'device', n.name, `not found; ${unreadA.join(', ')} could not be placed`, place(n), 'unknown-side'));
    else out.push(diff('critical', 'device', n.name, 'missing', place(n), 'inventory-missing'));
  }
  for (const [key, n] of na) {
    if (nb.has(key) || moved.has(key)) continue;
    if (n.bdfUnknown !== undefined) out.push(diff('minor', 'device', n.name, `${n.what} at ${at(n)}`, 'absent', 'unknown-side'));
    else out.push(diff('major', 'device', n.name, `${n.what} at ${n.bdf ?? '?'}`, 'absent', 'inventory-extra'));
  }
  return out;
}

/** Where a NIC is, as a difference shows it: its address, `unknown (why)` when its link could not be read, or `?`. */
const at = (n: NicView): string => n.bdf ?? (n.bdfUnknown !== undefined ? `unknown (${n.bdfUnknown})` : '?');

/** A NIC and where it is: `mlx5_4 ConnectX-7 at 0000:9b:00.0`; by its name alone where it has no PCI function read. */
const place = (n: NicView): string => `${n.bdf === null ? n.name : n.what} at ${at(n)}`;

const endpoints = (v: CompareView): string[] => [...v.gpus.map((g) => g.bdf), ...v.nics.flatMap((n) => (n.bdf ? [n.bdf] : []))];

/** Model, root complex and NUMA node of each GPU and NIC present on both. */
export function placement(a: CompareView, b: CompareView): Difference[] {
  const out: Difference[] = [];
  const [pa, pb] = [devicesOf(a), devicesOf(b)];
  const ends = new Set(endpoints(a));
  for (const bdf of endpoints(b)) {
    const x = pa.get(bdf);
    const y = pb.get(bdf);
    if (!x || !y || !ends.has(bdf)) continue;
    if (x.vendor !== y.vendor || x.device !== y.device) out.push(diff('major', 'device', bdf, x.what, y.what, 'inventory-mismatch'));
    // A side whose place could not be read tells no move: said, as an unknown NUMA node is.
    if (x.hostBridge !== y.hostBridge) out.push(x.hostBridge === UNPLACED || y.hostBridge === UNPLACED ? diff('minor', 'root-complex', bdf, x.hostBridge, y.hostBridge, 'unknown-side') : diff('critical', 'root-complex', bdf, x.hostBridge, y.hostBridge, 'topology-changed'));
    const [na, nb] = [x.numa, y.numa];
    if (na.state === 'unknown' || nb.state === 'unknown') {
      if (na.state !== nb.state) out.push(diff('minor', 'numa', bdf, `node ${na.text}`, `node ${nb.text}`, 'unknown-side'));
    } else if (na.value !== nb.value) out.push(diff('major', 'numa', bdf, `node ${na.text}`, `node ${nb.text}`, 'topology-numa-changed'));
  }
  return out;
}

/** For each NIC column of `b`, the column of `a` that holds the same adapter (sameNic); -1 where none. */
function nicColumns(a: CompareView, b: CompareView): number[] {
  const cols = (v: CompareView) => v.topo.nics.map((name, i) => ({ name, bdf: v.topo.nicBdfs?.[i] ?? null, i }));
  const [ac, bc] = [cols(a), cols(b)];
  return bc.map((n) => sameNic(ac, bc, n)?.i ?? -1);
}

/** nvidia-smi's class of every GPU↔NIC pair present on both (GPU by address, NIC by address, else by name). */
export function topology(a: CompareView, b: CompareView): Difference[] {
  const out: Difference[] = [];
  const columns = nicColumns(a, b);
  b.topo.gpus.forEach((g, gi) => {
    const ga = a.topo.gpus.indexOf(g);
    b.topo.nics.forEach((n, ni) => {
      const na = columns[ni]!;
      if (ga < 0 || na < 0) return;
      const ca = a.topo.cells[ga]![na]!;
      const cb = b.topo.cells[gi]![ni]!;
      if (ca === cb) return;
      // A cell one side could not compute (`?`: a NUMA node unread across host bridges) is no change of path.
      if (!isPathClass(ca) || !isPathClass(cb)) {
        out.push(diff('minor', 'topology', `${g}-${n}`, ca, cb, 'unknown-side'));
        return;
      }
      const farther = RANK[ca] > RANK[cb];
      out.push(diff(farther ? 'critical' : 'major', 'topology', `${g}-${n}`, ca, cb, farther && ca === 'SYS' ? 'topology-remote-nic' : 'topology-changed'));
    });
  });
  return out;
}

/** Current link of every device on the paths of both nodes (GPUs, NICs, bridges), by address. */
export function links(a: CompareView, b: CompareView): Difference[] {
  const out: Difference[] = [];
  const gpus = new Set(b.gpus.map((g) => g.bdf));
  const pa = devicesOf(a);
  for (const y of b.pci) {
    const x = pa.get(y.bdf);
    if (!x) continue;
    // Only what both sides read is compared; an unknown side is no difference in link training.
    const [wa, wb, sa, sb] = [x.width, y.width, x.speed, y.speed];
    if (wa !== null && wb !== null && wa !== wb) {
      const low = wa < wb;
      out.push(diff(low ? 'critical' : 'minor', 'link-width', y.bdf, x.link, y.link, low ? 'link-width-low' : 'better-than-reference'));
    }
    if (sa !== null && sb !== null && sa !== sb) {
      const low = sa < sb;
      // A GPU at idle may drop its link speed (power saving): the pcie-link check calls that a warning.
      const idle = low && gpus.has(y.bdf);
      out.push(diff(low && !idle ? 'major' : 'minor', 'link-speed', y.bdf, x.link, y.link, idle ? 'link-speed-idle' : low ? 'link-speed-low' : 'better-than-reference'));
    }
  }
  return out;
}

export interface AcsView {
  readonly text: string;
  readonly redirect: readonly string[];
}

export function acsText(d: PciDevice): AcsView | null {
  const acs = within(d.config, (c) => c.acs, 'config space absent');
  if (acs.state === 'unknown') return null;
  if (acs.state === 'absent') return { text: 'no ACS capability', redirect: [] };
  // Only the controls that are on, in lspci's words ("SrcValid+ ReqRedir+"): the full word does not fit a table.
  const on = formatAcs(acs.value.ctl).split(' ').filter((b) => b.endsWith('+'));
  return { text: `ACSCtl ${on.length ? on.join(' ') : 'all off'}`, redirect: redirectBits(acs.value.ctl) };
}

/** ACS control of every bridge a GPU↔NIC peer transfer crosses on either node, present on both. */
export function acs(a: CompareView, b: CompareView): Difference[] {
  const bridges = new Set([...a.peerBridges, ...b.peerBridges]);
  const [pa, pb] = [devicesOf(a), devicesOf(b)];
  const out: Difference[] = [];
  for (const bdf of bridges) {
    const x = pa.get(bdf);
    const y = pb.get(bdf);
    if (!x || !y) continue;
    const [sa, sb] = [x.acs, y.acs];
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
