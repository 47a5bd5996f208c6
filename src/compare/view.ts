// What `compare` reads of one node, extracted once per node as plain JSON values: every comparison is made between
// two views, so compare A B, the fleet judge reading snapshots, and the fleet judge reading the summaries the nodes
// wrote (fleet/summary.ts) give the same differences by construction. Texts are those compare shows.
import { aerEnablesText, aerErrorsText } from './aer.js';
import { bar1View, type Bar1View } from './bar1.js';
import { roOf } from './devctl.js';
import { acsText, what, type AcsView } from './devices.js';
import { atsState, driverText, iommuCmdline, iommuModes, limitText, mechanisms, mechanismsUnknown, PATH_MODULES } from './node.js';
import { linkOf, payloadOf, policies, type PayloadView } from './payload.js';
import { coolingStates } from './throttle.js';
import { factText, nul, valueOf } from '../model/fact.js';
import type { Inventory, RdmaNic } from '../model/inventory.js';
import { AREAS } from '../areas/index.js';
import { linkText } from '../model/names.js';
import { topoMatrix } from '../topo/matrix.js';
import { judgeUniversal } from '../engine/evaluate.js';

/** Bump when a field's meaning changes: a view of another version is not compared (a summary of it is stale). */
export const VIEW_VERSION = 3;

export interface DeviceView {
  readonly bdf: string;
  /** `GPU H100 SXM5`, `mlx5_0 ConnectX-7`, or `bridge`. */
  readonly what: string;
  readonly vendor: number | null;
  readonly device: number | null;
  readonly hostBridge: string;
  readonly numa: { readonly state: 'present' | 'absent' | 'unknown'; readonly value: number | null; readonly text: string };
  /** Current link: `Gen5 x16`, and its parts when read. */
  readonly link: string;
  readonly width: number | null;
  readonly speed: number | null;
  readonly acs: AcsView | null;
  /** Uncorrectable errors as pcie-aer words them; empty when none. */
  readonly aerErrors: string;
  readonly aerEnables: string | null;
  /** State of the kernel's aer_dev_* counters (present, absent, unknown). */
  readonly aerCounters: string;
  /** Device Control Relaxed Ordering; null when not readable. */
  readonly ro: boolean | null;
  readonly payload: PayloadView;
  readonly linkAspm: string;
  /** ATS: enabled, disabled, `no ATS capability`, or null when not readable. */
  readonly ats: string | null;
}

export interface NicView {
  readonly name: string;
  /** Its PCI function; null when it has none (soft RDMA) or its `device` link could not be read (then `bdfUnknown`). */
  readonly bdf: string | null;
  /** Why the `device` link could not be read; absent when it was (and in summaries written before it was recorded). */
  readonly bdfUnknown?: string;
  readonly what: string;
  readonly fw: string;
  readonly fwUnknown: boolean;
}

export interface CompareView {
  readonly version: typeof VIEW_VERSION;
  /** Every PCI device of the inventory, in its order. */
  readonly pci: readonly DeviceView[];
  readonly gpus: readonly { readonly bdf: string; readonly what: string; readonly bar1: Bar1View }[];
  readonly nics: readonly NicView[];
  /**
   * nvidia-smi's class of each GPU (by address) and NIC (by name, and by address where it has one: `nicBdfs`, absent
   * in views written before it), in the matrix's order.
   */
  readonly topo: { readonly gpus: readonly string[]; readonly nics: readonly string[]; readonly nicBdfs?: readonly (string | null)[]; readonly cells: readonly (readonly string[])[] };
  /** Bridges a GPU↔NIC peer transfer crosses, in first-met order. */
  readonly peerBridges: readonly string[];
  /** Ports a PCIe link-speed cooling device holds below their top speed (Target Link Speed lowered), at its state. */
  readonly cooling: readonly (readonly [string, number])[];
  readonly payloadPolicy: string | null;
  readonly iommuModes: readonly (readonly [string, string])[];
  readonly iommuCmdline: string;
  readonly mechanisms: readonly string[];
  /** Why the mechanisms could not be told (a peer-memory file or the driver unreadable); null when they could. */
  readonly mechanismsUnknown: string | null;
  /** null: could not be told. */
  readonly ibUverbs: boolean | null;
  /** The path modules (node.ts PATH_MODULES) loaded. */
  readonly modules: readonly string[];
  readonly memlock: readonly { readonly who: string; readonly known: boolean; readonly text: string; readonly soft: number | 'unlimited' | null; readonly hard: number | 'unlimited' | null }[];
  readonly driver: string;
  /** The driver's version could not be read (a difference on it is then a could-not-tell, not a mismatch). */
  readonly driverUnknown: boolean;
  readonly kernel: string | null;
  /** Each area record's own part (areas/types.ts `view`), by its id; JSON values only. */
  readonly areas: Readonly<Record<string, unknown>>;
  /** A few facts read without comparing (devices, firmware, links, versions): views alike here are likely alike. */
  readonly fingerprint: string;
  /**
   * What the universal rules (every check, no baseline) fail or warn of on this node, in their order: a fault no
   * dimension above shows (an IOMMU group split from its GPU's, a device that stopped answering) still differs
   * (flagged.ts). Since view 3.
   */
  readonly flagged: readonly FlaggedView[];
}

/** One finding of the universal rules that is not a pass. */
export interface FlaggedView {
  readonly check: string;
  readonly code: string;
  readonly status: 'fail' | 'warn';
  readonly subject: string;
  readonly actual: string;
}

function nicView(inv: Inventory, n: RdmaNic): NicView {
  const bdf = valueOf(n.bdf) ?? null;
  return { name: n.name, bdf, ...(n.bdf.state === 'unknown' ? { bdfUnknown: n.bdf.why } : {}), what: what(inv, bdf ?? ''), fw: factText(n.fwVer), fwUnknown: n.fwVer.state === 'unknown' };
}

function fingerprint(inv: Inventory): string {
  const link = (bdf: string | null): string => {
    const d = bdf === null ? undefined : inv.pci.get(bdf);
    return d ? `${factText(d.current.speed)}/${factText(d.current.width)}` : '-';
  };
  return [
    nul(inv.kernelRelease) ?? '',
    valueOf(inv.gpudirect.driver)?.version ?? '',
    ...inv.gpus.map((g) => `${g.bdf}:${link(g.bdf)}`),
    ...inv.nics.map((n) => `${n.name}@${n.bdf.state === 'unknown' ? '?' : (valueOf(n.bdf) ?? '')}:${factText(n.fwVer)}:${link(valueOf(n.bdf) ?? null)}`),
  ].join('|');
}

export function compareView(inv: Inventory): CompareView {
  const m = topoMatrix(inv);
  const peer = new Set<string>();
  for (const g of m.gpus) for (const n of m.nics) for (const br of m.path(g.label, n.label)?.peerBridges ?? []) peer.add(br);
  const pci: DeviceView[] = [];
  for (const [bdf, d] of inv.pci) {
    pci.push({
      bdf,
      what: what(inv, bdf),
      vendor: nul(d.vendor),
      device: nul(d.device),
      hostBridge: d.hostBridge,
      numa: { state: d.numaNode.state, value: valueOf(d.numaNode) ?? null, text: factText(d.numaNode) },
      link: linkText(d.current.speed, d.current.width),
      width: valueOf(d.current.width) ?? null,
      speed: valueOf(d.current.speed) ?? null,
      acs: acsText(d),
      aerErrors: aerErrorsText(d),
      aerEnables: aerEnablesText(d),
      aerCounters: d.aer.correctable.state,
      ro: roOf(inv, bdf),
      payload: payloadOf(inv, bdf),
      linkAspm: linkOf(inv.payload.linkAspm.get(bdf)),
      ats: atsState(inv, bdf),
    });
  }
  return {
    version: VIEW_VERSION,
    pci,
    gpus: inv.gpus.map((g) => ({ bdf: g.bdf, what: what(inv, g.bdf), bar1: bar1View(inv, g.bdf) })),
    nics: inv.nics.map((n) => nicView(inv, n)),
    topo: { gpus: m.gpus.map((g) => g.bdf), nics: m.nics.map((n) => n.name), nicBdfs: m.nics.map((n) => n.bdf ?? null), cells: m.gpus.map((g) => m.nics.map((n) => m.cell(g.label, n.label))) },
    peerBridges: [...peer],
    cooling: [...coolingStates(inv)],
    payloadPolicy: policies(inv),
    iommuModes: [...iommuModes(inv)],
    iommuCmdline: iommuCmdline(inv),
    mechanisms: mechanisms(inv),
    mechanismsUnknown: mechanismsUnknown(inv),
    ibUverbs: nul(inv.gpudirect.ibUverbs),
    modules: PATH_MODULES.filter((x) => inv.modules.has(x)),
    memlock: inv.memlock.map((p) => ({
      who: p.who,
      known: p.limit.state === 'present',
      text: p.limit.state === 'present' ? limitText(p.limit.value) : 'not readable',
      soft: p.limit.state === 'present' ? p.limit.value.soft : null,
      hard: p.limit.state === 'present' ? p.limit.value.hard : null,
    })),
    driver: driverText(inv),
    driverUnknown: inv.gpudirect.driver.state === 'unknown',
    kernel: nul(inv.kernelRelease),
    areas: Object.fromEntries(AREAS.flatMap((r) => (r.view ? [[r.id, r.view(inv)]] : []))),
    fingerprint: fingerprint(inv),
    flagged: judgeUniversal(inv, null).flatMap((f) => (f.status === 'fail' || f.status === 'warn' ? [{ check: f.check, code: f.code, status: f.status, subject: f.subject.slice(0, 512), actual: (f.actual ?? f.message).slice(0, 4096) }] : [])),
  };
}
