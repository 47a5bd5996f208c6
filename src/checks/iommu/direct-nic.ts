// iommu-mode on a ConnectX-8 Data Direct platform: the GPU and its DMA function share one IOMMU group (rdma_topo's
// check; the GPU driver otherwise needs NVreg_GrdmaPciTopoCheckOverride), and before Linux 6.11 (no
// pci=config_acs=, no per-port ACS at boot) the platform runs translated domains for ACS with DMA-BUF.
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

export interface GroupPair { readonly gpu: string; readonly dma: string; readonly gpuGroup: string | null; readonly dmaGroup: string | null }

/** The GPU / DMA function pairs of the platform with their groups; empty off a Data Direct node. */
export function dmaGroups(inv: Inventory, p: AcsPlatform): GroupPair[] {
  if (p.kind !== 'direct-nic') return [];
  return p.dma.map(({ gpu, dma }) => ({ gpu, dma, gpuGroup: inv.pci.get(gpu)?.iommuGroup ?? null, dmaGroup: inv.pci.get(dma)?.iommuGroup ?? null }));
}

/** "translated" where the Data Direct platform's kernel predates per-port ACS at boot; null where any mode will do. */
export function requiredDomain(inv: Inventory, p: AcsPlatform): 'translated' | null {
  const rel = releaseOf(inv.kernelRelease);
  return p.kind === 'direct-nic' && p.topology === 'dma' && rel !== null && before(rel, CONFIG_ACS_KERNEL) ? 'translated' : null;
}
