// Gathers what NCCL's topology detection reads from sysfs for this node's GPUs and RDMA adapters, through the Host,
// and hands it to the pure builder (topo/nccl-xml.ts). Reads only files: no process, no driver call.
import { nul } from '../model/fact.js';
import type { Host } from '../host/host.js';
import type { Inventory, PciDevice } from '../model/inventory.js';
import { buildNcclXml, NCCL_BDF, ncclChain, type NcclCpu, type NcclEndpoint, pciFiles, strtol0, type XmlNode } from './nccl-xml.js';

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
const natural = (a: string, b: string): number => a.localeCompare(b, 'en', { numeric: true });

/** The endpoints NCCL would use: every GPU, and every RDMA adapter with an active port (NCCL's IB transport skips the others). */
export function ncclEndpoints(inv: Inventory): NcclEndpoint[] {
  const out: NcclEndpoint[] = [];
  for (const g of inv.gpus) {
    const d = inv.pci.get(g.bdf);
    if (d) out.push({ sysPath: d.sysPath, kind: 'gpu' });
  }
  const nics = inv.nics.filter((n) => n.bdf !== null && inv.pci.has(n.bdf)).sort((a, b) => natural(a.name, b.name));
  nics.forEach((n) => {
    const port = n.ports.find((p) => p.state.state === 'present' && /^4:/.test(p.state.value));
    if (!port) return;
    out.push({ sysPath: inv.pci.get(n.bdf!)!.sysPath, kind: 'nic', net: { name: n.name, dev: out.filter((e) => e.net).length, port: port.port, rate: nul(port.rate) } });
  });
  return out;
}

/** Reads the PCI attribute files not known yet; a host bridge's directory (pci0000:00) has none, so none is tried. */
async function readAll(host: Host, paths: readonly string[], into: Map<string, string>): Promise<void> {
  const todo = paths.filter((p) => !into.has(p) && NCCL_BDF.test(p.slice(0, p.lastIndexOf('/')).split('/').pop() ?? ''));
  const got = await Promise.all(todo.map(async (p) => [p, await host.readText(p)] as const));
  for (const [p, r] of got) if (r.ok) into.set(p, r.value);
}

/** pci_speed_string() (drivers/pci/probe.c): the text max_link_speed shows for a speed. */
const speedText = (gts: number): string => `${gts === 2.5 ? '2.5' : gts.toFixed(1)} GT/s PCIe`;
const hex = (n: number, w: number): string => `0x${n.toString(16).padStart(w, '0')}\n`;

/**
 * The attribute texts the inventory already holds, as the kernel prints them (pci-sysfs.c: class "0x%06x", vendor
 * and device "0x%04x", max_link_* from Link Capabilities): the gate read them once, so only the rest is read again.
 * A value the inventory does not know (a width of 0, an unreadable field) is left to be read from its file.
 */
export function prefill(inv: Inventory, dirs: Iterable<string>): Map<string, string> {
  const byPath = new Map<string, PciDevice>();
  for (const d of inv.pci.values()) byPath.set(d.sysPath, d);
  const texts = new Map<string, string>();
  for (const p of dirs) {
    const d = byPath.get(p);
    if (!d) continue;
    if (d.classCode.state === 'present') texts.set(`${p}/class`, hex(d.classCode.value, 6));
    if (d.vendor.state === 'present') texts.set(`${p}/vendor`, hex(d.vendor.value, 4));
    if (d.device.state === 'present') texts.set(`${p}/device`, hex(d.device.value, 4));
    if (d.max.speed.state === 'present') texts.set(`${p}/max_link_speed`, `${speedText(d.max.speed.value)}\n`);
    if (d.max.width.state === 'present') texts.set(`${p}/max_link_width`, `${d.max.width.value}\n`);
  }
  return texts;
}

/** The node's NCCL topology XML tree: the files NCCL would read, read once, then built. */
export async function readNcclTopo(host: Host, inv: Inventory): Promise<XmlNode> {
  const endpoints = ncclEndpoints(inv);
  const { pci, tops } = ncclChain(endpoints);
  const texts = prefill(inv, [...pci, ...pci.map((p) => p.slice(0, p.lastIndexOf('/')))]);
  await readAll(host, pciFiles(pci, tops), texts);
  const ma = await host.readText('/sys/devices/system/cpu/modalias');
  const nodes = new Set(tops.map((t) => strtol0(texts.get(`${t}/numa_node`) ?? '')).filter((n) => n >= 0));
  await Promise.all([...nodes].map(async (n) => {
    const p = `/sys/devices/system/node/node${n}/cpumap`;
    const r = await host.readText(p);
    if (r.ok) texts.set(p, r.value);
  }));
  const modalias = ma.ok ? ma.value : null;
  const cpuinfo = modalias === null ? await host.readText('/proc/cpuinfo') : null;
  const cpu = parseCpuIdentity(modalias, cpuinfo?.ok ? cpuinfo.value : null);
  return buildNcclXml(texts, endpoints, cpu);
}
