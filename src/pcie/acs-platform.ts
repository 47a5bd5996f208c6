// Which ACS each port of a Direct NIC platform must have: the three topologies NVIDIA's rdma_topo (rdma-core
// kernel-boot/) knows (a ConnectX-8 Data Direct function beside a GPU under nested ConnectX switches on a Grace root
// port; a ConnectX switch carrying GPU and NIC inline; GPUs and NICs alone on Grace/Vera root ports), judged from
// the inventory. Anything else is the classic platform (no redirect between GPU and NIC).
import { ABSENT } from '../model/fact.js';
import { type Bdf, type Inventory, type PciDevice } from '../model/inventory.js';
import { type AcsMask, acsMask, MASK } from './acs-mask.js';
import { childrenOf, parentOf, typeOf, under } from './pci-kind.js';

export type DirectTopology = 'dma' | 'inline' | 'numa';

export interface PortRule {
  readonly bdf: Bdf;
  readonly mask: AcsMask;
  /** What the port is to the platform ("switch port toward the GPU of 0009:06:00.0"). */
  readonly role: string;
}

export type AcsPlatform =
  | { readonly kind: 'classic'; readonly note: string | null }
  | {
    readonly kind: 'direct-nic';
    readonly topology: DirectTopology;
    /** Inline complexes only: the NICs expose ATS, so the node is set up for virtual machines. */
    readonly virt: boolean;
    readonly rules: ReadonlyMap<Bdf, PortRule>;
    /** DMA-based complexes: each GPU with the ConnectX DMA function that must share its IOMMU group. */
    readonly dma: readonly { readonly gpu: Bdf; readonly dma: Bdf }[];
    /** Inline complexes: each NIC with its GPU (one IOMMU group on bare metal, two under virtualization). */
    readonly inline: readonly { readonly nic: Bdf; readonly gpu: Bdf }[];
    /** Grace root ports: per NUMA node, the GPUs and ConnectX NICs that must each have an IOMMU group of its own. */
    readonly apart: readonly { readonly node: number; readonly devs: readonly Bdf[] }[];
  }
  /** topology null: a function's identity could not be read, so not even which Direct NIC topology can be told. */
  | { readonly kind: 'unexpected'; readonly topology: DirectTopology | null; readonly why: string };

/** rdma_topo's two ways of giving up: not this topology at all (classic), or this topology built oddly (skip). */
class NotThis extends Error {}
class Odd extends Error {
  /** The topology being built when it was found odd (set by detect). */
  topology: DirectTopology | null = null;
}
class Untold extends Odd {}

/**
 * Every complex built, not the first alone: rdma_topo stops at the first it meets (in directory order), so one odd
 * complex beside one that is "not this topology" gave either answer. Any odd one: odd (skip, never judged by a rule
 * of the wrong platform); else any not of this topology: the classic rule.
 */
function every<T>(xs: readonly PciDevice[], build: (d: PciDevice) => T): T[] {
  const got = xs.map((d): T | Error => {
    try {
      return build(d);
    } catch (e) {
      if (e instanceof NotThis || e instanceof Odd) return e;
      throw e;
    }
  });
  const odd = got.find((x) => x instanceof Odd);
  if (odd) throw odd;
  const not = got.find((x) => x instanceof NotThis);
  if (not) throw not;
  return got as T[];
}

/** Whether a port has, or may have, an ACS capability: only a config space read to its end without one says no (a `config` file missing says nothing). */
const hasAcs = (d: PciDevice | undefined): boolean => d !== undefined && (d.config.state !== 'present' || d.config.value.acs.state !== 'absent');
const isolated = (d: PciDevice): AcsMask => (typeOf(d) === 'vera_rp' ? MASK.isolatedVera : MASK.isolated);

/** The ports a message names by kind, in words (never the kind's identifier). */
const NAMED: Readonly<Record<string, string>> = { cx_switch: 'ConnectX switch port', bf3_switch: 'BlueField-3 switch port', grace_rp: 'Grace root port', vera_rp: 'Vera root port' };
const named = (kind: string): string => NAMED[kind] ?? kind;

function need(d: PciDevice | undefined, type: string, what: string): PciDevice {
  if (!d || typeOf(d) !== type) throw new Odd(`${what} is not a ${named(type)}`);
  return d;
}

/**
 * The DMA function's adapter, by VPD V3 (the adapter's UUID on the DMA function and on each of its PFs): a DMA
 * function without one, or whose V3 no ConnectX NIC function carries, is a complex rdma_topo refuses (odd).
 */
function pairByV3(inv: Inventory, dma: PciDevice): void {
  const v3 = inv.adapterV3.get(dma.bdf) ?? ABSENT;
  if (v3.state === 'unknown') throw new Odd(`the VPD of DMA function ${dma.bdf} could not be read (${v3.why}), so its adapter cannot be told`);
  if (v3.state === 'absent') throw new Odd(`DMA function ${dma.bdf} has no VPD V3 (its adapter's UUID), so its adapter cannot be told`);
  const pfs = [...inv.adapterV3].filter(([b]) => typeOf(inv.pci.get(b)) === 'cx_nic');
  if (pfs.some(([, f]) => f.state === 'present' && f.value === v3.value)) return;
  const unread = pfs.find(([, f]) => f.state === 'unknown');
  throw new Odd(unread ? `the VPD of ConnectX NIC ${unread[0]} could not be read, so DMA function ${dma.bdf}'s adapter cannot be told` : `no ConnectX NIC function carries DMA function ${dma.bdf}'s VPD V3 ${v3.value}`);
}

/** DMA function → switch port → switch → Grace root port; the one GPU below that port behind a second switch. */
function dmaComplex(inv: Inventory, dma: PciDevice, rules: Map<Bdf, PortRule>): { gpu: Bdf; dma: Bdf } {
  pairByV3(inv, dma);
  const dsp = need(parentOf(inv, dma), 'cx_switch', `the port above DMA function ${dma.bdf}`);
  const usp = need(parentOf(inv, dsp), 'cx_switch', `the switch above ${dsp.bdf}`);
  const rp = need(parentOf(inv, usp), 'grace_rp', `the port above ${usp.bdf}`);
  const gpus = inv.gpus.filter((g) => inv.pci.get(g.bdf)?.bridges.includes(rp.bdf));
  if (gpus.length !== 1) throw new Odd(`${gpus.length} GPUs below Grace root port ${rp.bdf}, want 1 beside DMA function ${dma.bdf}`);
  const gpu = inv.pci.get(gpus[0]!.bdf)!;
  const chain = [...gpu.bridges].reverse().map((b) => inv.pci.get(b));
  if (chain.length < 4 || chain.slice(0, 3).some((d) => !d || typeOf(d) !== 'cx_switch') || chain[3] !== usp) throw new NotThis(`GPU ${gpu.bdf} is not below ${usp.bdf} behind a second ConnectX switch`);
  const [dsp2, usp2, dsp1] = chain as [PciDevice, PciDevice, PciDevice];
  const expected = new Set([dma.bdf, dsp.bdf, usp.bdf, gpu.bdf, dsp2.bdf, usp2.bdf, dsp1.bdf]);
  const below = under(inv, rp.bdf).map((d) => d.bdf);
  if (below.length !== expected.size || below.some((b) => !expected.has(b))) throw new Odd(`unexpected PCI functions below Grace root port ${rp.bdf}`);
  for (const p of [dsp, dsp1, rp]) if (!hasAcs(p)) throw new Odd(`${p.bdf} has no ACS capability`);
  rules.set(dsp.bdf, { bdf: dsp.bdf, mask: acsMask('xx110x1'), role: `switch port toward DMA function ${dma.bdf}` });
  rules.set(dsp1.bdf, { bdf: dsp1.bdf, mask: acsMask('xx101x1'), role: `switch port toward GPU ${gpu.bdf}` });
  rules.set(rp.bdf, { bdf: rp.bdf, mask: acsMask('xx111x0'), role: `Grace root port of GPU ${gpu.bdf} and DMA function ${dma.bdf}` });
  return { gpu: gpu.bdf, dma: dma.bdf };
}

/** GPU → switch → switch → switch port → shared ConnectX switch, with a ConnectX NIC on another of its ports. */
function inlineComplex(inv: Inventory, gpu: PciDevice): { nic: PciDevice; ports: [nicDsp: PciDevice, gpuDsp: PciDevice, rp: PciDevice] } {
  const chain = [...gpu.bridges].reverse().map((b) => inv.pci.get(b));
  if (chain.length < 4 || chain.slice(0, 4).some((d) => !d || typeOf(d) !== 'cx_switch')) throw new NotThis(`GPU ${gpu.bdf} is not below nested ConnectX switches`);
  const usp1 = chain[3]!;
  const rp = inv.pci.get(gpu.bridges[0]!);
  if (!rp || typeOf(rp) !== 'generic_rp') throw new Odd(`no generic root port above ${usp1.bdf}`);
  const nic = under(inv, usp1.bdf).find((d) => typeOf(d) === 'cx_nic');
  if (!nic) throw new Odd(`GPU ${gpu.bdf} has no ConnectX NIC beside it`);
  let nicDsp: PciDevice | null = null;
  let gpuDsp: PciDevice | null = null;
  for (const dsp of childrenOf(inv, usp1.bdf)) {
    const types = under(inv, dsp.bdf).map(typeOf);
    if (types.includes('cx_nic')) {
      if (nicDsp) throw new NotThis(`several ConnectX NIC ports under ${usp1.bdf}`);
      nicDsp = dsp;
    } else if (types.includes('nvgpu')) {
      if (gpuDsp) throw new NotThis(`several GPU ports under ${usp1.bdf}`);
      gpuDsp = dsp;
    }
  }
  if (!nicDsp || !gpuDsp) throw new Odd(`${nicDsp ? 'GPU' : 'NIC'} port of ${usp1.bdf} not found`);
  for (const p of [nicDsp, gpuDsp, rp]) if (!hasAcs(p)) throw new Odd(`${p.bdf} has no ACS capability`);
  return { nic, ports: [nicDsp, gpuDsp, rp] };
}

function detect(inv: Inventory): AcsPlatform {
  const devs = [...inv.pci.values()];
  // A function on or beside a GPU↔NIC path that cannot be told (a DMA function, a ConnectX switch port?): which
  // platform this is cannot be told either, never "not this one" (classic) nor a complex without it.
  const unread = devs.find((d) => typeOf(d) === 'unknown');
  // A function that could not be told at all (its place, class or vendor unread), not read as part of a path, and not
  // known to lie away from every complex (on a root bus, or below bridges all read that no complex hangs from) may be a
  // complex's DMA function, port or GPU: the complexes cannot be counted. One known to lie elsewhere changes nothing (inventory's `unaccounted`).
  const lost = inv.unaccounted[0];
  if (lost) throw new Untold(`PCI function ${lost} could not be told (its place, class or vendor unread), so the Direct NIC complexes cannot be counted`);
  if (unread) throw new Untold(`what PCI function ${unread.bdf} is could not be read (its vendor or device ID${unread.vendor.state === 'unknown' ? `: ${unread.vendor.why}` : unread.device.state === 'unknown' ? `: ${unread.device.why}` : ''})`);
  const rules = new Map<Bdf, PortRule>();
  const dma: { gpu: Bdf; dma: Bdf }[] = [];
  const inline: { nic: Bdf; gpu: Bdf }[] = [];
  const apart: { node: number; devs: Bdf[] }[] = [];
  let topology: DirectTopology | undefined;
  let virt = false;
  const gpus = inv.gpus.map((g) => inv.pci.get(g.bdf)).filter((d): d is PciDevice => d !== undefined);
  try {
    if (devs.some((d) => typeOf(d) === 'cx_dma')) {
      topology = 'dma';
      dma.push(...every(devs.filter((x) => typeOf(x) === 'cx_dma'), (d) => dmaComplex(inv, d, rules)));
    } else if (gpus.some((g) => ['grace_rp', 'vera_rp'].includes(typeOf(parentOf(inv, g))))) {
      topology = 'numa';
      // Every NUMA node holding a GPU or ConnectX NIC holds both (rdma_topo pairs them per node).
      const nics = devs.filter((d) => typeOf(d) === 'cx_nic');
      const node = (d: PciDevice): number | null => (d.numaNode.state === 'present' && d.numaNode.value >= 0 ? d.numaNode.value : null);
      for (const n of new Set([...gpus, ...nics].map(node).filter((x): x is number => x !== null))) {
        if (!nics.some((d) => node(d) === n)) throw new Odd(`no ConnectX NIC on NUMA node ${n}`);
        if (!gpus.some((d) => node(d) === n)) throw new Odd(`no GPU on NUMA node ${n}`);
        apart.push({ node: n, devs: [...nics, ...gpus].filter((d) => node(d) === n).map((d) => d.bdf).sort() });
      }
      apart.sort((a, b) => a.node - b.node);
    } else if (devs.some((d) => typeOf(d) === 'cx_switch') && devs.some((d) => typeOf(d) === 'cx_nic') && gpus.length > 0) {
      topology = 'inline';
      const complexes = every(gpus, (g) => ({ gpu: g.bdf, ...inlineComplex(inv, g) })).sort((a, b) => (a.nic.bdf < b.nic.bdf ? -1 : 1));
      // Every ConnectX NIC function beside the GPU (a second PF of a dual-port card too): each must share the GPU's
      // group on bare metal, not only the first found (rdma_topo takes one, in an order it does not fix).
      for (const c of complexes) for (const f of under(inv, c.ports[0].bdf).filter((d) => typeOf(d) === 'cx_nic')) inline.push({ nic: f.bdf, gpu: c.gpu });
      const ats = complexes.map((c) => (c.nic.config.state === 'present' ? c.nic.config.value.ats.state : 'unknown'));
      if (ats.includes('unknown')) throw new Odd('ATS of a ConnectX NIC could not be read, so virtualization cannot be told');
      if (new Set(ats).size > 1) throw new Odd('the ConnectX NICs differ in ATS, so virtualization cannot be told');
      virt = ats[0] === 'present';
      for (const { nic, ports: [nicDsp, gpuDsp, rp] } of complexes) {
        rules.set(nicDsp.bdf, { bdf: nicDsp.bdf, mask: virt ? acsMask('1x111x1') : MASK.off, role: `switch port toward NIC ${nic.bdf}` });
        rules.set(gpuDsp.bdf, { bdf: gpuDsp.bdf, mask: virt ? isolated(gpuDsp) : MASK.off, role: `switch port toward the GPU beside NIC ${nic.bdf}` });
        rules.set(rp.bdf, { bdf: rp.bdf, mask: virt ? isolated(rp) : MASK.off, role: `root port of NIC ${nic.bdf} and its GPU` });
      }
    } else return { kind: 'classic', note: null };
  } catch (e) {
    if (e instanceof Odd && !(e instanceof Untold)) e.topology = topology!;
    throw e;
  }
  // Every other ConnectX/BlueField switch port and Grace/Vera root port: the kernel's isolation, except on a bare-metal inline node.
  for (const d of devs) {
    const t = typeOf(d);
    if (rules.has(d.bdf) || !hasAcs(d) || !(t.endsWith('_switch') || t === 'grace_rp' || t === 'vera_rp')) continue;
    rules.set(d.bdf, { bdf: d.bdf, mask: topology === 'inline' && !virt ? MASK.off : isolated(d), role: `${named(t)} off the GPU↔NIC complexes` });
  }
  return { kind: 'direct-nic', topology: topology!, virt, rules, dma, inline, apart };
}

/** The node's ACS platform; rdma_topo's refusals become the classic rule (not this topology) or `unexpected`. */
export function acsPlatform(inv: Inventory): AcsPlatform {
  try {
    return detect(inv);
  } catch (e) {
    if (e instanceof NotThis) return { kind: 'classic', note: `not a Direct NIC topology (${e.message}): the classic rule` };
    if (e instanceof Odd) return { kind: 'unexpected', topology: e.topology, why: e.message };
    throw e;
  }
}
