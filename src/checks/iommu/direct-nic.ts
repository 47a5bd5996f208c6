// iommu-mode on a ConnectX-8 Data Direct platform: the GPU and its DMA function share one IOMMU group (rdma_topo's
// check; the GPU driver otherwise needs NVreg_GrdmaPciTopoCheckOverride), and before Linux 6.11 (no
// pci=config_acs=, no per-port ACS at boot) the platform runs translated domains for ACS with DMA-BUF.
import { ABSENT, nul, type Fact } from '../../model/fact.js';
import type { Inventory } from '../../model/inventory.js';
import type { AcsPlatform } from '../../pcie/acs-platform.js';

/** The first kernel release whose command line can set ACS per port (pci=config_acs=). */
export const CONFIG_ACS_KERNEL: readonly [number, number] = [6, 11];

/** "6.8.0-1014-nvidia-64k" → [6, 8]; null when the release does not start with two numbers. */
export function releaseOf(rel: string | null): [number, number] | null {
  const m = rel === null ? null : /^(\d+)\.(\d+)/.exec(rel);
  return m ? [Number(m[1]), Number(m[2])] : null;
}

export const before = (r: readonly [number, number], than: readonly [number, number]): boolean => r[0] < than[0] || (r[0] === than[0] && r[1] < than[1]);

/** A device's IOMMU group: absent without one (no IOMMU, or not read on a bridge), unknown when its link could not be read. */
export const groupOf = (inv: Inventory, bdf: string): Fact<string> => inv.pci.get(bdf)?.iommuGroup ?? ABSENT;

/** Why a judgement over these groups cannot be made: the first that could not be read; null when all could. */
export function unreadGroup(inv: Inventory, bdfs: readonly string[]): string | null {
  for (const b of bdfs) {
    const g = groupOf(inv, b);
    if (g.state === 'unknown') return `the IOMMU group of ${b} could not be read (${g.why})`;
  }
  return null;
}

export interface GroupPair { readonly gpu: string; readonly dma: string; readonly gpuGroup: string | null; readonly dmaGroup: string | null; readonly unknown: string | null }

/** The GPU / DMA function pairs of the platform with their groups; empty off a Data Direct node. */
export function dmaGroups(inv: Inventory, p: AcsPlatform): GroupPair[] {
  if (p.kind !== 'direct-nic') return [];
  return p.dma.map(({ gpu, dma }) => ({ gpu, dma, gpuGroup: nul(groupOf(inv, gpu)), dmaGroup: nul(groupOf(inv, dma)), unknown: unreadGroup(inv, [gpu, dma]) }));
}

/** "translated" where the Data Direct platform's kernel predates per-port ACS at boot; null where any mode will do. */
export function requiredDomain(inv: Inventory, p: AcsPlatform): 'translated' | null {
  const rel = releaseOf(nul(inv.kernelRelease));
  return p.kind === 'direct-nic' && p.topology === 'dma' && rel !== null && before(rel, CONFIG_ACS_KERNEL) ? 'translated' : null;
}

/** `unknown`: a group it needs could not be read, so `ok` says nothing (a skip, never a verdict). */
export interface GroupVerdict { readonly subject: string; readonly ok: boolean; readonly why: string; readonly expected: string; readonly actual: string; readonly unknown: string | null }

/**
 * rdma_topo's group rules beyond the DMA function: an inline NIC shares its GPU's group on bare metal (or neither has
 * one) and has its own under virtualization; on Grace root ports every GPU and NIC of a NUMA node has its own group.
 */
export function groupRules(inv: Inventory, p: AcsPlatform): GroupVerdict[] {
  if (p.kind !== 'direct-nic') return [];
  const g = (b: string): string | null => nul(groupOf(inv, b));
  const inline = p.inline.map(({ nic, gpu }): GroupVerdict => {
    const [n, d] = [g(nic), g(gpu)];
    const ok = p.virt ? n !== null && d !== null && n !== d : n === d;
    const expected = p.virt ? `a group apart from ${gpu}` : `group of ${gpu}`;
    return { subject: nic, ok, why: `NIC ${nic} in IOMMU group ${n ?? 'none'}, GPU ${gpu} in ${d ?? 'none'} (inline ConnectX, ${p.virt ? 'virtualized' : 'bare metal'})`, expected, actual: `group ${n ?? 'none'}`, unknown: unreadGroup(inv, [nic, gpu]) };
  });
  const apart = p.apart.flatMap(({ node, devs }) => devs.map((b): GroupVerdict => {
    const mine = g(b);
    const twins = devs.filter((o) => o !== b && mine !== null && g(o) === mine);
    return { subject: b, ok: mine !== null && twins.length === 0, why: `IOMMU group ${mine ?? 'none'} on NUMA node ${node}${twins.length ? `, shared with ${twins.join(', ')}` : ''} (Grace/Vera root ports)`, expected: 'a group of its own', actual: `group ${mine ?? 'none'}`, unknown: unreadGroup(inv, devs) };
  }));
  return [...inline, ...apart];
}
