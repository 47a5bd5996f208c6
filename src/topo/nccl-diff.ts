// Reads NCCL topology XML (a NCCL_TOPO_DUMP_FILE, a NCCL_TOPO_FILE) and compares two of them element by element:
// elements are matched by what names them (cpu numaid, pci busid, net name, nvlink target), never by position.
import type { XmlNode } from './nccl-xml.js';

export type ParsedXml = { readonly ok: true; readonly value: XmlNode } | { readonly ok: false; readonly error: string };

/**
 * A small XML reader for NCCL's subset: elements and attributes; declarations and comments skipped; text refused. A
 * value is read as NCCL's xmlGetValue reads it (src/graph/xml.cc): verbatim up to its closing quote, no entity decoded.
 */
export function parseNcclXml(text: string): ParsedXml {
  const root: XmlNode = { name: '#root', attrs: [], subs: [] };
  const stack: XmlNode[] = [root];
  const tag = /<(\/?)([A-Za-z_][\w.-]*)((?:\s+[A-Za-z_][\w.-]*\s*=\s*(?:"[^"]*"|'[^']*'))*)\s*(\/?)>/y;
  const attr = /([A-Za-z_][\w.-]*)\s*=\s*(?:"([^"]*)"|'([^']*)')/g;
  let i = 0;
  while (i < text.length) {
    const lt = text.indexOf('<', i);
    const between = text.slice(i, lt < 0 ? text.length : lt);
    if (between.trim()) return { ok: false, error: `text outside any tag at offset ${i}: ${JSON.stringify(between.trim().slice(0, 40))}` };
    if (lt < 0) break;
    if (text.startsWith('<!--', lt) || text.startsWith('<?', lt)) {
      const end = text.indexOf(text.startsWith('<!--', lt) ? '-->' : '?>', lt);
      if (end < 0) return { ok: false, error: `unterminated comment or declaration at offset ${lt}` };
      i = end + (text.startsWith('<!--', lt) ? 3 : 2);
      continue;
    }
    tag.lastIndex = lt;
    const m = tag.exec(text);
    if (!m) return { ok: false, error: `malformed tag at offset ${lt}: ${JSON.stringify(text.slice(lt, lt + 40))}` };
    i = tag.lastIndex;
    const [, close, name, attrText, selfClose] = m;
    if (close) {
      const top = stack.length > 1 ? stack.pop() : undefined;
      if (!top || top.name !== name) return { ok: false, error: `</${name}> at offset ${lt} closes ${top?.name ?? 'nothing'}` };
      continue;
    }
    const node: XmlNode = { name: name!, attrs: [...attrText!.matchAll(attr)].map((a) => [a[1]!, a[2] ?? a[3]!]), subs: [] };
    stack.at(-1)!.subs.push(node);
    if (!selfClose) stack.push(node);
  }
  if (stack.length !== 1) return { ok: false, error: `<${stack.at(-1)!.name}> is never closed` };
  if (root.subs.length !== 1) return { ok: false, error: `expected one root element, found ${root.subs.length}` };
  return { ok: true, value: root.subs[0]! };
}

const get = (n: XmlNode, k: string): string | undefined => n.attrs.find(([a]) => a === k)?.[1];

/** What names an element among its kind: the attribute NCCL itself looks it up by. */
function keyOf(n: XmlNode, parent: string): string {
  const by: Record<string, string> = { cpu: 'numaid', pci: 'busid', net: 'name', nvlink: 'target', pcilink: 'target' };
  const k = by[n.name];
  const v = k === undefined ? undefined : get(n, k);
  if (n.name === 'pci' || n.name === 'net') return `${n.name}[${v ?? '?'}]`;
  return v === undefined ? `${parent}/${n.name}` : `${parent}/${n.name}[${v}]`;
}

export interface FlatElement {
  readonly name: string;
  readonly parent: string;
  readonly attrs: ReadonlyMap<string, string>;
}

/** Every element by its key (a bus id needs no parent to be named; the parent is kept to compare placement). */
export function flatten(root: XmlNode): Map<string, FlatElement> {
  const out = new Map<string, FlatElement>();
  const walk = (n: XmlNode, parent: string): void => {
    let key = keyOf(n, parent);
    for (let k = 2; out.has(key); k++) key = `${keyOf(n, parent)}#${k}`;
    out.set(key, { name: n.name, parent, attrs: new Map(n.attrs) });
    for (const s of n.subs) walk(s, key);
  };
  walk(root, '');
  return out;
}

export type Difference =
  | { readonly kind: 'only-in-a' | 'only-in-b'; readonly element: string; readonly name: string }
  | { readonly kind: 'parent'; readonly element: string; readonly name: string; readonly a: string; readonly b: string }
  | { readonly kind: 'attr'; readonly element: string; readonly name: string; readonly attr: string; readonly a: string | null; readonly b: string | null };

/** Differences between two topologies, element by element; an empty list means the same tree with the same attributes. */
export function diffNcclXml(a: XmlNode, b: XmlNode): Difference[] {
  const fa = flatten(a);
  const fb = flatten(b);
  const out: Difference[] = [];
  for (const [k, ea] of fa) {
    const eb = fb.get(k);
    if (!eb) {
      out.push({ kind: 'only-in-a', element: k, name: ea.name });
      continue;
    }
    if (ea.parent !== eb.parent) out.push({ kind: 'parent', element: k, name: ea.name, a: ea.parent, b: eb.parent });
    for (const attr of new Set([...ea.attrs.keys(), ...eb.attrs.keys()])) {
      const [va, vb] = [ea.attrs.get(attr) ?? null, eb.attrs.get(attr) ?? null];
      if (va !== vb) out.push({ kind: 'attr', element: k, name: ea.name, attr, a: va, b: vb });
    }
  }
  for (const [k, eb] of fb) if (!fa.has(k)) out.push({ kind: 'only-in-b', element: k, name: eb.name });
  return out;
}

/** One line per difference, for people and for logs. */
export function renderDiff(d: readonly Difference[], names: { a: string; b: string }): string {
  if (d.length === 0) return 'same elements, same attributes';
  return d.map((x) => {
    if (x.kind === 'parent') return `${x.element}: under ${x.a} in ${names.a}, under ${x.b} in ${names.b}`;
    if (x.kind !== 'attr') return `${x.element}: only in ${x.kind === 'only-in-a' ? names.a : names.b}`;
    const show = (v: string | null): string => (v === null ? '(absent)' : JSON.stringify(v));
    return `${x.element} ${x.attr}: ${names.a} ${show(x.a)}, ${names.b} ${show(x.b)}`;
  }).join('\n');
}

/**
 * What an NCCL dump holds that does not come from the PCI tree (gdrgate's file leaves it for NCCL to fill), by
 * element, with why. NCCL_TOPO_FILE values win over what NCCL would detect, so stating these would override it.
 */
export const FROM_ELSEWHERE: Readonly<Record<string, { readonly attrs: readonly string[] | 'all'; readonly why: string }>> = {
  cpu: { attrs: ['host_hash'], why: 'a hash of the host name and boot id; NCCL 2.27+ rewrites it on load' },
  gpu: { attrs: 'all', why: 'dev, sm, rank, gdr, mlopart: NVML, CUDA and the communicator' },
  nvlink: { attrs: 'all', why: 'NVLink targets and counts: NVML' },
  c2c: { attrs: 'all', why: 'C2C links: NVML' },
  net: {
    attrs: ['dev', 'speed', 'port', 'latency', 'guid', 'maxconn', 'gdr', 'net', 'coll', 'gin', 'rma'],
    why: "the network plugin's properties (IB verbs): dev its index, speed the port's, port its IB port plus the function's place among those merged into one device; gdr is whether GPUDirect RDMA works at run time",
  },
};

/** NCCL 2.30+ reads a GPU's ids and link from NVML (the current link generation and width, lower on an idle GPU). */
export const GPU_NVML_ATTRS = ['vendor', 'device', 'subsystem_vendor', 'subsystem_device', 'link_speed', 'link_width'] as const;

/** Why a difference is expected (the dump has what the PCI tree does not say), or null when it is a real one. */
export function expectedBecause(d: Difference, gpuBusIds: ReadonlySet<string>, pciLess: ReadonlySet<string> = new Set()): string | null {
  if (d.kind === 'only-in-b' && pciLess.has(d.element)) return PCI_LESS_NET;
  const e = FROM_ELSEWHERE[d.name];
  if (d.kind === 'only-in-b' && e?.attrs === 'all') return e.why;
  if (d.kind === 'attr' && d.a === null && e && e.attrs !== 'all' && e.attrs.includes(d.attr)) return e.why;
  const bus = /^pci\[(.*)\]$/.exec(d.element)?.[1];
  if (d.kind === 'attr' && bus !== undefined && gpuBusIds.has(bus) && (GPU_NVML_ATTRS as readonly string[]).includes(d.attr)) {
    return 'a GPU attribute NCCL 2.30+ reads from NVML';
  }
  return null;
}

const PCI_LESS_NET =
  'a network NCCL uses with no PCI device behind it in the tree (its socket transport over an Ethernet interface when no RDMA adapter is there): not an RDMA adapter, which is all gdrgate lists';

/** The keys of the nic elements hung straight under a cpu (no pci parent), and of their net elements. */
export function pciLessNets(root: XmlNode): Set<string> {
  const flat = flatten(root);
  const out = new Set<string>();
  for (const [k, e] of flat) if (e.name === 'nic' && flat.get(e.parent)?.name === 'cpu') out.add(k);
  for (const [k, e] of flat) if (e.name === 'net' && out.has(e.parent)) out.add(k);
  return out;
}

/** The bus ids of the GPUs in a tree (pci elements with a display class). */
export function gpuBusIds(root: XmlNode): Set<string> {
  const out = new Set<string>();
  for (const e of flatten(root).values()) {
    const cls = e.attrs.get('class');
    if (e.name === 'pci' && cls !== undefined && /^0x03/.test(cls)) out.add(e.attrs.get('busid') ?? '');
  }
  return out;
}
