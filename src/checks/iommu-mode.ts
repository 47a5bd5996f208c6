// iommu-mode: the IOMMU domain of each GPU and NIC matches the class's architecture (off/passthrough on bare metal).
import type { IommuMode } from '../model/baseline.js';
import type { Inventory } from '../model/inventory.js';
import { type Check, type Codes, defineCheck, finder } from './types.js';

/** Every code this check makes: what it tells, what to do, the layer that owns it (the field matrix). */
const CODES = {
  'iommu-ok': { tells: 'IOMMU mode matches the design for GPU/NIC peer traffic.', do: 'None.', layer: 'security' },
  'iommu-na': { tells: 'No GPU or RDMA adapter with a PCI function, so no IOMMU domain to judge.', do: 'None.', layer: 'security' },
  'iommu-unknown': { tells: 'The IOMMU group type of the device could not be read.', do: 'Run the gate as root; check /sys/kernel/iommu_groups/<n>/type.', layer: 'security' },
  'iommu-translated': { tells: 'The GPU or NIC sits in a translated IOMMU domain: peer-to-peer DMA is remapped or blocked.', do: 'Use iommu=pt (or identity domains for GPU/NIC) on bare metal, as the baseline states; get security sign-off for the mode.', layer: 'security' },
  'iommu-mode-changed': { tells: 'The IOMMU mode differs from the approved architecture of this class.', do: 'Restore the kernel command line of the reference node (iommu=, intel_iommu=, amd_iommu=).', layer: 'security' },
} as const satisfies Codes;

const f = finder('iommu-mode', CODES);

/** Group type → mode: identity is passthrough; DMA and DMA-FQ translate every access (drivers/iommu/iommu.c). */
function modeOf(type: string | undefined): IommuMode | 'unknown' {
  if (type === undefined) return 'unknown';
  if (type === 'identity') return 'passthrough';
  if (type === 'DMA' || type === 'DMA-FQ') return 'translated';
  return 'unknown';
}

function subjects(inv: Inventory): { subject: string; group: string | null }[] {
  const gpu = inv.gpus.map((g) => ({ subject: g.bdf, group: inv.pci.get(g.bdf)?.iommuGroup ?? null }));
  // A software RDMA device (rxe, siw) has no PCI function and no IOMMU domain of its own: not judged here.
  const nic = inv.nics.flatMap((n) => (n.bdf ? [{ subject: n.bdf, group: inv.pci.get(n.bdf)?.iommuGroup ?? null }] : []));
  return [...gpu, ...nic];
}

const check: Check<'iommu-mode', typeof CODES> = defineCheck({
  id: 'iommu-mode',
  title: 'IOMMU mode for GPUs and RDMA adapters',
  reasonLabel: 'iommu-mode',
  codes: CODES,
  docs: 'docs/checks/iommu-mode.md',
  run({ inv, baseline }) {
    const want = baseline?.iommu ?? null;
    const cmd = Object.entries(inv.iommu.cmdline).map(([k, v]) => `${k}=${v}`).join(' ');
    const devs = subjects(inv);
    if (devs.length === 0) return [f('iommu-na', 'skip', 'node', 'not applicable: no GPU or RDMA adapter with a PCI function')];
    if (inv.iommu.units.length === 0 && devs.every((d) => d.group === null)) {
      const ok = want === null || want === 'off' || want === 'any';
      const msg = `no IOMMU (no /sys/class/iommu units, no groups)${cmd ? `; ${cmd}` : ''}`;
      return [f(ok ? 'iommu-ok' : 'iommu-mode-changed', ok ? 'pass' : 'fail', 'node', msg, want ?? 'off', 'off')];
    }
    return devs.map(({ subject, group }) => {
      const type = group === null ? undefined : inv.iommu.groupTypes[group];
      const mode = group === null ? 'off' : modeOf(type);
      const got = `${mode}${type ? ` (group ${group}: ${type})` : ''}`;
      if (mode === 'unknown') return f('iommu-unknown', 'skip', subject, `IOMMU group ${group} type not readable`);
      if (want === null) {
        // Without a baseline the platform is unknown: translated mode is flagged, not failed (a VM may need it).
        return mode === 'translated'
          ? f('iommu-translated', 'warn', subject, `translated IOMMU domain ${got}`, 'passthrough or off', got)
          : f('iommu-ok', 'pass', subject, `IOMMU ${got}`, 'passthrough or off', got);
      }
      const ok = want === 'any' || want === mode;
      const code = ok ? 'iommu-ok' : mode === 'translated' ? 'iommu-translated' : 'iommu-mode-changed';
      return f(code, ok ? 'pass' : 'fail', subject, `IOMMU ${got}`, want, got);
    });
  },
});

export default check;
