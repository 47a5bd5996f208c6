// Gathers what NCCL's topology detection reads from sysfs for this node's GPUs and RDMA adapters, through the Host,
// and hands it to the pure builder (topo/nccl-xml.ts). Reads only files: no process, no driver call.
import { ABSENT, valueOf } from '../model/fact.js';
import type { Host } from '../host/host.js';
import type { Inventory, PciDevice } from '../model/inventory.js';
import { typeOf } from '../pcie/pci-kind.js';
import { BDF_RE } from '../parsers/sysfs.js';
import { buildNcclXml, ncclChain, type NcclCpu, type NcclEndpoint, pciFiles, setText, strtol0, type XmlNode } from './nccl-xml.js';
import { checkNodeRoom, ncclMergedPath } from './nccl-limits.js';

// The Prolog loads this module alone (one chunk in the checkout's bundle), so it hands on the renderer too.
export { renderNcclXml } from './nccl-xml.js';

/** Linux x86 vendor numbers (arch/x86/include/asm/processor.h X86_VENDOR_*) → the CPUID string NCCL records. */
const X86_VENDORS: Record<number, string> = { 0: 'GenuineIntel', 2: 'AuthenticAMD', 5: 'CentaurHauls', 9: 'HygonGenuine', 10: '  Shanghai  ' };

/** NCCL's familyid is CPUID's family + (extended family << 4); Linux's "family" is family + extended family. */
const ncclFamily = (linux: number): number => (linux >= 15 ? 15 + ((linux - 15) << 4) : linux);

/**
 * The CPU as NCCL's ncclTopoGetXmlFromCpu records it, from /sys/devices/system/cpu/modalias
 * ("cpu:type:x86,ven0000fam0006mod008F:feature:…", arch/x86/kernel/cpu: print_cpu_modalias), else /proc/cpuinfo's
 * first block. x86 only for vendor/family/model, as in NCCL; null where the node's files do not say.
 */
export function parseCpuIdentity(modalias: string | null, cpuinfo: string | null): NcclCpu {
  const m = modalias ? /^cpu:type:([^,:]+)(?:,ven([0-9A-Fa-f]{4})fam([0-9A-Fa-f]{4})mod([0-9A-Fa-f]{4}))?/.exec(modalias) : null;
  if (m) {
    const arch = m[1] === 'x86' ? 'x86_64' : m[1] === 'aarch64' ? 'arm64' : null;
    if (arch !== 'x86_64' || m[2] === undefined) return { arch, vendor: null, familyid: null, modelid: null };
    return { arch, vendor: X86_VENDORS[parseInt(m[2], 16)] ?? null, familyid: ncclFamily(parseInt(m[3]!, 16)), modelid: parseInt(m[4]!, 16) };
  }
  const first = (cpuinfo ?? '').split('\n\n')[0] ?? '';
  const field = (k: string): string | null => new RegExp(`^${k}\\s*:\\s*(.*)$`, 'm').exec(first)?.[1]?.trim() ?? null;
  const vendor = field('vendor_id');
  if (vendor !== null) {
    const fam = field('cpu family');
    const model = field('model');
    const ok = fam !== null && model !== null && /^\d+$/.test(fam) && /^\d+$/.test(model);
    return { arch: 'x86_64', vendor, familyid: ok ? ncclFamily(Number(fam)) : null, modelid: ok ? Number(model) : null };
  }
  return { arch: field('CPU implementer') !== null ? 'arm64' : null, vendor: null, familyid: null, modelid: null };
}

/** Numeric order of adapter names (mlx5_2 before mlx5_10), the order NCCL's IB transport lists them in practice. */
const numericKey = (s: string): string => s.replace(/\d+/g, (d) => d.padStart(10, '0'));
// Digit runs compared as numbers, the rest by code unit (no ICU collator: a Prolog would load one for this alone).
const natural = (a: string, b: string): number => {
  const [x, y] = [numericKey(a), numericKey(b)];
  return x < y ? -1 : x > y ? 1 : 0;
};

/** Whether NCCL's IB transport uses the adapter: a port in state 4 (ACTIVE); it skips the others. */
const inUse = (n: Inventory['nics'][number]): boolean => n.ports.some((p) => p.state.state === 'present' && /^4:/.test(p.state.value));

/**
 * The endpoints NCCL would use: every GPU, and every RDMA adapter with an active port (NCCL's IB transport skips the
 * others), each adapter under the element NCCL merges its function into (ncclMergedPath), with its net only where that
 * element is its own function: a card's second port and its VFs get theirs from NCCL, under the same element. An
 * adapter whose merged element is no device here (a VF on a bus of its own) has none in the file: NCCL places it.
 */
export function ncclEndpoints(inv: Inventory, byPath = byPathOf(inv), dataDirect: ReadonlyMap<string, string> = new Map()): NcclEndpoint[] {
  const out: NcclEndpoint[] = [];
  for (const g of inv.gpus) {
    const d = inv.pci.get(g.bdf);
    if (d) out.push({ sysPath: d.sysPath, kind: 'gpu' });
  }
  const nics = inv.nics.flatMap((n) => {
    const d = inv.pci.get(valueOf(n.bdf) ?? '');
    return d ? [{ n, d }] : [];
  });
  nics.sort((a, b) => natural(a.n.name, b.n.name)).forEach(({ n, d }) => {
    if (!inUse(n)) return;
    const merged = ncclMergedPath(d.sysPath);
    if (merged === d.sysPath) out.push({ sysPath: d.sysPath, kind: 'nic', own: d.sysPath, net: { name: n.name } });
    else if (byPath.has(merged)) out.push({ sysPath: merged, kind: 'nic', own: d.sysPath });
    const dma = dataDirect.get(n.name);
    if (dma !== undefined) out.push({ sysPath: dma, kind: 'nic', own: dma, net: { name: `${n.name}_dma` } });
  });
  return out;
}

/**
 * ConnectX-8 Data Direct: NCCL's IB transport (NCCL_IB_DATA_DIRECT=1, its default) uses such an adapter as
 * `<name>_dma`, filed under the DMA function mlx5's data_direct driver ties to it (net_ib/init.cc: the path
 * mlx5dv_get_data_direct_sysfs_path gives, as it is). Which one that is: the DMA function whose VPD V3 (the adapter's
 * UUID) is the adapter's own, as rdma_topo pairs them (the inventory read each V3: inventory/adapter-v3.ts, only where
 * the node has a DMA function). Adapter name → the DMA function's kernel path. A pair that cannot be told (a VPD
 * unread, no V3, two DMA functions with one V3) is left out: NCCL places that net itself.
 */
export function dataDirectPairs(inv: Inventory): Map<string, string> {
  const v3 = (b: string): string | null => valueOf(inv.adapterV3.get(b) ?? ABSENT) ?? null;
  const byV3 = new Map<string, string[]>();
  for (const d of inv.pci.values()) {
    const id = typeOf(d) === 'cx_dma' ? v3(d.bdf) : null;
    if (id !== null) byV3.set(id, [...(byV3.get(id) ?? []), d.sysPath]);
  }
  const out = new Map<string, string>();
  if (byV3.size === 0) return out;
  for (const n of inv.nics) {
    const b = valueOf(n.bdf);
    const hit = b === undefined ? undefined : byV3.get(v3(b) ?? '');
    if (hit?.length === 1) out.set(n.name, hit[0]!);
  }
  return out;
}

/**
 * Reads the PCI attribute files not known yet; a host bridge's directory (pci0000:00) has none, so none is tried. A
 * device's directory is read whatever its domain's width (10000:98:00.0, as NCCL does): only NCCL's parent rule takes
 * four domain digits alone.
 */
async function readAll(host: Host, files: ReadonlyMap<string, readonly string[]>, into: Map<string, Map<string, string>>): Promise<void> {
  const todo: [dir: string, file: string][] = [];
  for (const [dir, names] of files) {
    const have = into.get(dir);
    for (const f of names) if (!have?.has(f) && BDF_RE.test(dir.slice(dir.lastIndexOf('/') + 1))) todo.push([dir, f]);
  }
  const got = await Promise.all(todo.map(async ([dir, f]) => [dir, f, await host.readText(`${dir}/${f}`)] as const));
  for (const [dir, f, r] of got) if (r.ok) setText(into, dir, f, r.value);
}

/**
 * How this kernel prints a link speed in max_link_speed: pci_speed_string() ("16.0 GT/s PCIe", drivers/pci/probe.c)
 * or, before it, pci-sysfs.c's own table ("16 GT/s"). NCCL copies the text as it is.
 */
export type SpeedStyle = 'pci_speed_string' | 'legacy';
const SPEED_TEXT: Record<SpeedStyle, (gts: number) => string> = {
  pci_speed_string: (gts) => `${gts === 2.5 ? '2.5' : gts.toFixed(1)} GT/s PCIe`,
  legacy: (gts) => `${gts} GT/s`,
};
const hex = (n: number, w: number): string => `0x${n.toString(16).padStart(w, '0')}\n`;

/** Which style `text` (a max_link_speed file holding `gts`) is in; null for neither (then every file is read). */
export function speedStyleOf(text: string, gts: number): SpeedStyle | null {
  const t = text.endsWith('\n') ? text.slice(0, -1) : text;
  return (Object.keys(SPEED_TEXT) as SpeedStyle[]).find((k) => SPEED_TEXT[k](gts) === t) ?? null;
}

const byPathOf = (inv: Inventory): Map<string, PciDevice> => new Map([...inv.pci.values()].map((d) => [d.sysPath, d]));

/**
 * The attribute texts the inventory already holds, as the kernel prints them (pci-sysfs.c: class "0x%06x", vendor,
 * device and subsystem ids "0x%04x", max_link_* from Link Capabilities in `speeds`' style, numa_node "%d"): the gate
 * read them once, so only the rest is read again. A value the inventory does not know (a width of 0, an unreadable
 * field, a numa_node of -1, a speed when the kernel's style is not known) is left to be read from its file.
 */
export function prefill(inv: Inventory, dirs: Iterable<string>, speeds: SpeedStyle | null = 'pci_speed_string', byPath = byPathOf(inv)): Map<string, Map<string, string>> {
  const texts = new Map<string, Map<string, string>>();
  for (const p of dirs) {
    const d = byPath.get(p);
    if (!d || texts.has(p)) continue;
    const m = new Map<string, string>();
    texts.set(p, m);
    if (d.classCode.state === 'present') m.set('class', hex(d.classCode.value, 6));
    if (d.vendor.state === 'present') m.set('vendor', hex(d.vendor.value, 4));
    if (d.device.state === 'present') m.set('device', hex(d.device.value, 4));
    const sub = d.config.state === 'present' ? d.config.value.subsystem : null;
    if (sub?.state === 'present' || sub?.state === 'absent') {
      const [v, dv] = sub.state === 'present' ? [sub.value.vendor, sub.value.device] : [0, 0];
      m.set('subsystem_vendor', hex(v, 4)).set('subsystem_device', hex(dv, 4));
    }
    if (speeds !== null && d.max.speed.state === 'present') m.set('max_link_speed', `${SPEED_TEXT[speeds](d.max.speed.value)}\n`);
    if (d.max.width.state === 'present') m.set('max_link_width', `${d.max.width.value}\n`);
    if (d.numaNode.state === 'present') m.set('numa_node', `${d.numaNode.value}\n`);
  }
  return texts;
}

/** The kernel's speed style, from one max_link_speed file NCCL reads anyway (its text returned); null when none says. */
async function learnSpeedStyle(host: Host, byPath: ReadonlyMap<string, PciDevice>, dirs: readonly string[]): Promise<{ style: SpeedStyle | null; dir?: string; text?: string }> {
  const d = dirs.map((p) => byPath.get(p)).find((x) => x?.max.speed.state === 'present');
  if (!d || d.max.speed.state !== 'present') return { style: null };
  const r = await host.readText(`${d.sysPath}/max_link_speed`);
  return r.ok ? { style: speedStyleOf(r.value, d.max.speed.value), dir: d.sysPath, text: r.value } : { style: null };
}

/** The node's NCCL topology XML tree: the files NCCL would read, read once, then built. */
export async function readNcclTopo(host: Host, inv: Inventory): Promise<XmlNode> {
  return (await ncclTopo(host, inv)).root;
}

/** The tree and the endpoints it was built from (the Prolog records their own paths for the job's view). */
export async function ncclTopo(host: Host, inv: Inventory): Promise<{ root: XmlNode; endpoints: NcclEndpoint[] }> {
  const byPath = byPathOf(inv);
  const endpoints = ncclEndpoints(inv, byPath, dataDirectPairs(inv));
  const { pci, tops } = ncclChain(endpoints);
  const dirs = [...pci, ...pci.map((p) => p.slice(0, p.lastIndexOf('/')))];
  const sample = await learnSpeedStyle(host, byPath, dirs);
  const texts = prefill(inv, dirs, sample.style, byPath);
  if (sample.dir !== undefined && sample.text !== undefined) setText(texts, sample.dir, 'max_link_speed', sample.text);
  await readAll(host, pciFiles(pci, tops), texts);
  const ma = await host.readText('/sys/devices/system/cpu/modalias');
  const nodes = new Set(tops.map((t) => strtol0(texts.get(t)?.get('numa_node') ?? '')).filter((n) => n >= 0));
  await Promise.all([...nodes].map(async (n) => {
    const dir = `/sys/devices/system/node/node${n}`;
    const r = await host.readText(`${dir}/cpumap`);
    if (r.ok) setText(texts, dir, 'cpumap', r.value);
  }));
  const modalias = ma.ok ? ma.value : null;
  const cpuinfo = modalias === null ? await host.readText('/proc/cpuinfo') : null;
  const cpu = parseCpuIdentity(modalias, cpuinfo?.ok ? cpuinfo.value : null);
  const root = buildNcclXml(texts, endpoints, cpu);
  // Nets left to NCCL: each adapter's, less those the file names (an adapter's `_dma` net names it too).
  const named = new Set(endpoints.flatMap((e) => (e.net ? [e.net.name.replace(/_dma$/, '')] : [])));
  checkNodeRoom(root, endpoints.filter((e) => e.kind === 'gpu').length, inv.nics.filter((n) => inUse(n) && !named.has(n.name)).length);
  return { root, endpoints };
}
