// NCCL's topology XML (the format NCCL_TOPO_FILE reads and NCCL_TOPO_DUMP_FILE writes) built from sysfs texts:
// the same walk and the same attribute rules as NCCL's ncclTopoGetXmlFromSys / ncclTopoGetXmlFromCpu (src/graph/xml.cc),
// written as pure functions over the file texts a reader gathered (topo/nccl-read.ts).
export interface XmlNode {
  readonly name: string;
  readonly attrs: [key: string, value: string][];
  readonly subs: XmlNode[];
}

/** What NCCL would have found on this node for one of its endpoints (a GPU or an RDMA adapter's PCI function). */
export interface NcclEndpoint {
  /** The device's kernel path (the realpath of /sys/bus/pci/devices/<bdf>). */
  readonly sysPath: string;
  readonly kind: 'gpu' | 'nic';
  /**
   * RDMA adapters: the net NCCL's IB transport names after the device, under the element of `sysPath`; absent for an
   * adapter function that NCCL merges into another one's element (a card's second port, a VF): NCCL puts its net
   * under that element itself, found by bus id.
   */
  readonly net?: { readonly name: string };
  /** RDMA adapters: the function's own kernel path, where `sysPath` is the element NCCL merges it into (ncclMergedPath). */
  readonly own?: string;
}

/** CPU identity as NCCL writes it on x86 (CPUID); null where this node's files do not say (NCCL then fills it itself). */
export interface NcclCpu {
  readonly arch: string | null;
  readonly vendor: string | null;
  readonly familyid: number | null;
  readonly modelid: number | null;
}

/**
 * Raw file text as the reader found it, by the file's directory, then its name (`/sys/devices/…/0000:18:00.0` →
 * `class` → "0x030200\n"); a file not there could not be read. Two levels, so that a lookup hashes names the walk
 * already holds instead of a new path string each time.
 */
export type Texts = ReadonlyMap<string, ReadonlyMap<string, string>>;

/** Texts from (kernel path, text) pairs. */
export function textsFrom(entries: Iterable<readonly [string, string]>): Map<string, Map<string, string>> {
  const out = new Map<string, Map<string, string>>();
  for (const [p, v] of entries) setText(out, dirOf(p), baseOf(p), v);
  return out;
}

/** Records one file's text under its directory. */
export function setText(t: Map<string, Map<string, string>>, dir: string, file: string, text: string): void {
  let d = t.get(dir);
  if (!d) t.set(dir, (d = new Map()));
  d.set(file, text);
}

/** NCCL's checkBDFFormat: exactly "BBBB:BB:DD.F" in hex digits (a VMD domain "10000:00:02.0" is not one). */
export const NCCL_BDF = /^[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-9a-fA-F]$/;
export const PCI_ATTRS = ['class', 'vendor', 'device', 'subsystem_vendor', 'subsystem_device'] as const;
const dirOf = (p: string): string => p.slice(0, p.lastIndexOf('/'));
const baseOf = (p: string): string => p.slice(p.lastIndexOf('/') + 1);

/**
 * NCCL's parent of a PCI element: it rewinds two levels of the sysfs path, so a switch (upstream port plus downstream
 * port) is one element, and stops at a CPU as soon as a level is not a bus id. Returns the parent's path, or the
 * path of the element whose numa_node names the CPU.
 */
export function ncclParent(sysPath: string): { readonly pci: string } | { readonly cpuOf: string } {
  const up = dirOf(sysPath);
  if (!NCCL_BDF.test(baseOf(up))) return { cpuOf: sysPath };
  const up2 = dirOf(up);
  return NCCL_BDF.test(baseOf(up2)) ? { pci: up2 } : { cpuOf: sysPath };
}

/** Every PCI element's path from the endpoints up (each once), and the CPU-side element of each chain. */
export function ncclChain(endpoints: readonly NcclEndpoint[]): { readonly pci: string[]; readonly tops: string[] } {
  const pci = new Set<string>();
  const tops = new Set<string>();
  for (const e of endpoints) {
    let p = e.sysPath;
    while (!pci.has(p)) {
      pci.add(p);
      const up = ncclParent(p);
      if ('cpuOf' in up) {
        tops.add(p);
        break;
      }
      p = up.pci;
    }
  }
  return { pci: [...pci], tops: [...tops] };
}

const OWN_FILES = ['class', 'vendor', 'device', 'subsystem_vendor', 'subsystem_device', 'max_link_speed', 'max_link_width'] as const;
const PORT_FILES = ['max_link_speed', 'max_link_width'] as const;

/** The files NCCL reads for the PCI elements (the device's own and its sysfs parent's max link), by directory. */
export function pciFiles(paths: readonly string[], tops: readonly string[]): Map<string, readonly string[]> {
  const out = new Map<string, readonly string[]>();
  const add = (dir: string, files: readonly string[]): void => {
    const had = out.get(dir);
    out.set(dir, had ? [...new Set([...had, ...files])] : files);
  };
  for (const p of paths) {
    add(p, OWN_FILES);
    add(dirOf(p), PORT_FILES);
  }
  for (const p of tops) add(p, ['numa_node']);
  return out;
}

/** ncclTopoGetStrFromSys: the file's text less its last character (the kernel's newline); '' when unreadable. */
const sysText = (t: Texts, dir: string, file: string): string => {
  const v = t.get(dir)?.get(file);
  return v === undefined || v.length === 0 ? '' : v.slice(0, -1);
};

/** sscanf("%f GT/s"): the leading decimal number, or NCCL's FLT_MAX when there is none. */
function gts(text: string): number {
  const m = /^\s*[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?/.exec(text);
  return m ? Number(m[0]) : Number.MAX_VALUE;
}

/** strtol(text, NULL, 0): optional sign, 0x hex, leading-0 octal, else decimal; 0 when there are no digits. */
export function strtol0(text: string): number {
  const m = /^\s*([-+]?)(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9]\d*)/.exec(text);
  if (!m) return 0;
  const d = m[2]!;
  const v = /^0[xX]/.test(d) ? parseInt(d.slice(2), 16) : d.startsWith('0') ? parseInt(d, 8) || 0 : parseInt(d, 10);
  return m[1] === '-' ? -v : v;
}

/** One `pci` element's attributes in NCCL's order; attributes whose file is empty or unreadable are left out, as NCCL does. */
export function pciAttrs(t: Texts, p: string, kind: 'gpu' | 'nic' | 'bridge'): [string, string][] {
  const attrs: [string, string][] = [['busid', baseOf(p).toLowerCase()]];
  for (const f of PCI_ATTRS) {
    const v = sysText(t, p, f);
    // ncclTopoFillGpu / ncclTopoFillNet set a class before reading sysfs: "0x03" for a GPU, "0x02" for a NIC.
    const fallback = f === 'class' && kind !== 'bridge' ? (kind === 'gpu' ? '0x03' : '0x02') : '';
    if (v || fallback) attrs.push([f, v || fallback]);
  }
  // The link is the device's side and its port's (the sysfs parent's) side: the slower speed, the narrower width.
  const up = dirOf(p);
  const dev = sysText(t, p, 'max_link_speed');
  const port = sysText(t, up, 'max_link_speed');
  attrs.push(['link_speed', gts(port) < gts(dev) ? port : dev]);
  const w = Math.min(strtol0(sysText(t, p, 'max_link_width')), strtol0(sysText(t, up, 'max_link_width')));
  attrs.push(['link_width', String(w)]);
  return attrs;
}

const busidOf = (n: XmlNode): string | undefined => n.attrs.find(([k]) => k === 'busid')?.[1];

/** Children of an element in NCCL's order: PCI elements sorted by bus id (strcmp, issue #820), the rest as added. */
function insertSorted(parent: XmlNode, child: XmlNode): void {
  const id = busidOf(child);
  const at = id === undefined ? -1 : parent.subs.findIndex((s) => {
    const b = busidOf(s);
    return b !== undefined && id < b;
  });
  if (at < 0) parent.subs.push(child);
  else parent.subs.splice(at, 0, child);
}

/** x86 vendors whose CPU element NCCL reads a family and model from (topo.cc ncclTopoAddCpu: Intel, Zhaoxin). */
const MODEL_READ = new Set(['GenuineIntel', 'CentaurHauls', '  Shanghai  ']);

/**
 * What a `cpu` element lacks that NCCL's reader requires (topo.cc ncclTopoAddCpu: `arch`; on x86 `vendor`; for Intel
 * and Zhaoxin `familyid` and `modelid`; a file without them fails the communicator's init: "Attribute arch of node
 * cpu not found"), or null. NCCL fills them only for the CPUs it adds itself, never for a file's.
 */
export function cpuMissing(cpu: NcclCpu): string | null {
  const why = (what: string): string => `the CPU's ${what} could not be read (/sys/devices/system/cpu/modalias, /proc/cpuinfo): NCCL requires it of every cpu element of a topology file`;
  if (cpu.arch === null) return why('architecture');
  if (cpu.arch !== 'x86_64') return null;
  if (cpu.vendor === null) return why('vendor');
  return MODEL_READ.has(cpu.vendor) && (cpu.familyid === null || cpu.modelid === null) ? why('family and model') : null;
}

/**
 * The whole node's topology as NCCL would detect it with every GPU and adapter in use. Elements NCCL fills from the
 * driver (`gpu`: dev, sm, rank, gdr, nvlink; a net's latency, guid, maxconn, gdr) are left for NCCL to fill: a file
 * that names them would override what NCCL finds at run time.
 */
export function buildNcclXml(t: Texts, endpoints: readonly NcclEndpoint[], cpu: NcclCpu): XmlNode {
  const system: XmlNode = { name: 'system', attrs: [['version', '1']], subs: [] };
  const kindOf = new Map(endpoints.map((e) => [e.sysPath, e.kind] as const));
  const made = new Map<string, XmlNode>();
  const cpus = new Map<string, XmlNode>();
  const cpuFor = (top: string): XmlNode => {
    const numa = sysText(t, top, 'numa_node');
    let c = cpus.get(numa);
    if (!c) {
      const missing = cpuMissing(cpu);
      if (missing !== null) throw new NcclXmlError(missing);
      c = { name: 'cpu', attrs: [['numaid', numa]], subs: [] };
      // ncclTopoGetXmlFromCpu: the node's cpumap (NCCL reads node<strtoul(numaid)>; -1 has none).
      const n = strtol0(numa);
      const affinity = n >= 0 ? sysText(t, `/sys/devices/system/node/node${n}`, 'cpumap') : '';
      if (affinity) c.attrs.push(['affinity', affinity]);
      if (cpu.arch !== null) c.attrs.push(['arch', cpu.arch]);
      if (cpu.vendor !== null) c.attrs.push(['vendor', cpu.vendor]);
      if (cpu.familyid !== null && cpu.modelid !== null) c.attrs.push(['familyid', String(cpu.familyid)], ['modelid', String(cpu.modelid)]);
      cpus.set(numa, c);
      system.subs.push(c);
    }
    return c;
  };
  const element = (p: string): XmlNode => {
    let e = made.get(p);
    if (e) return e;
    const kind = kindOf.get(p) ?? 'bridge';
    e = { name: 'pci', attrs: pciAttrs(t, p, kind), subs: [] };
    // topo.cc ncclTopoAddPci requires a class of every pci element ("Attribute class of node pci not found", the
    // communicator's init fails); an endpoint has NCCL's own, a bridge whose file cannot be read has none.
    if (!e.attrs.some(([k]) => k === 'class')) throw new NcclXmlError(`<pci busid="${baseOf(p).toLowerCase()}">: its class could not be read (${p}/class): NCCL requires it of every pci element of a topology file`);
    made.set(p, e);
    const up = ncclParent(p);
    insertSorted('cpuOf' in up ? cpuFor(up.cpuOf) : element(up.pci), e);
    return e;
  };
  for (const ep of endpoints) {
    const e = element(ep.sysPath);
    if (!ep.net) continue;
    let nic = e.subs.find((s) => s.name === 'nic');
    if (!nic) e.subs.push((nic = { name: 'nic', attrs: [], subs: [] }));
    // The name alone: NCCL finds its net by name and fills only what the file leaves out (topo.cc
    // ncclTopoPopulateNics: xmlInitAttrInt), so a `port` or `speed` here would stand over its own (the port it
    // numbers across merged functions, the speed ibv_query_port gives), and `dev` it sets itself.
    nic.subs.push({ name: 'net', attrs: [['name', ep.net.name]], subs: [] });
  }
  // CPUs in NUMA order (NCCL adds them in the order it meets them; the order carries no meaning).
  system.subs.sort((a, b) => strtol0(a.attrs[0]![1]) - strtol0(b.attrs[0]![1]));
  return system;
}

/**
 * NCCL's reader (src/graph/xml.cc xmlGetValue, xml.h MAX_STR_LEN 255) copies a value verbatim up to its closing
 * quote, one byte at a time, decodes no entity, and fails topology loading ("value too long") on a value of 254 bytes
 * or more. The file is UTF-8: a value's length is its bytes there (a sysfs text that was no UTF-8 reads as U+FFFD,
 * three bytes each), not its characters.
 */
export const NCCL_MAX_VALUE = 253;
/** Attributes NCCL does without when a file leaves them out (it reads the CPU's affinity from sysfs itself). */
const OPTIONAL = new Set(['affinity']);
/** Characters NCCL would read literally (an entity), or that end or break a value: refused, never escaped. */
const UNREADABLE = /["'<>&\u0000-\u001f\u007f]/;

/** A value NCCL's reader cannot take, in an attribute it needs: no file is written (a job's init would fail on it). */
export class NcclXmlError extends Error {
  override readonly name = 'NcclXmlError';
}

/** The attributes as NCCL can read them: an optional one too long is left out (said in `notes`); anything else unreadable throws. */
function readableAttrs(n: XmlNode, notes: string[]): (readonly [string, string])[] {
  return n.attrs.filter(([k, v]) => {
    if (UNREADABLE.test(v)) throw new NcclXmlError(`<${n.name} ${k}=${JSON.stringify(v.slice(0, 80))}>: a character NCCL's topology reader would not read as written (it decodes no entity)`);
    const bytes = Buffer.byteLength(v, 'utf8');
    if (bytes <= NCCL_MAX_VALUE) return true;
    if (!OPTIONAL.has(k)) throw new NcclXmlError(`<${n.name} ${k}>: ${bytes} bytes, NCCL's topology reader takes at most ${NCCL_MAX_VALUE}`);
    notes.push(`<${n.name}> ${k} left out: ${bytes} bytes, NCCL's topology reader takes at most ${NCCL_MAX_VALUE} (NCCL reads it from sysfs)`);
    return false;
  });
}

/** XML attribute text: every value rendered has passed readableAttrs, so this escapes nothing; kept as an assertion. */
export const escapeAttr = (v: string): string => {
  if (UNREADABLE.test(v)) throw new NcclXmlError(`${JSON.stringify(v.slice(0, 80))}: not a value NCCL reads as written`);
  return v;
};

/** The layout of ncclTopoDumpXmlRec: two spaces a level, leaves closed with "/>". `notes`: what was left out, and why. */
export function renderNcclXml(n: XmlNode, indent = 0, notes: string[] = []): string {
  const pad = ' '.repeat(indent);
  const open = `${pad}<${n.name}${readableAttrs(n, notes).map(([k, v]) => ` ${k}="${escapeAttr(v)}"`).join('')}`;
  if (n.subs.length === 0) return `${open}/>\n`;
  return `${open}>\n${n.subs.map((s) => renderNcclXml(s, indent + 2, notes)).join('')}${pad}</${n.name}>\n`;
}
