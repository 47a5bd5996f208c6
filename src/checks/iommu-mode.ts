// iommu-mode: the IOMMU domain of each GPU and NIC matches the class's architecture (off/passthrough on bare metal).
import { nul, type Fact } from '../model/fact.js';
import type { IommuMode } from '../model/baseline.js';
import type { Inventory } from '../model/inventory.js';
import { acsPlatform } from '../pcie/acs-platform.js';
import type { Finding } from '../model/finding.js';
import { dmaGroups, groupOf, groupRules, requiredDomain } from './iommu/direct-nic.js';
import { defineCheck, finder } from './types.js';
import WORDING from './iommu-mode.json' with { type: 'json' };

const f = finder('iommu-mode', WORDING.codes);

/** Group type → mode: identity is passthrough; DMA and DMA-FQ translate every access (drivers/iommu/iommu.c). */
function modeOf(type: string | undefined): IommuMode | 'unknown' {
  if (type === undefined) return 'unknown';
  if (type === 'identity') return 'passthrough';
  if (type === 'DMA' || type === 'DMA-FQ') return 'translated';
  return 'unknown';
}

function subjects(inv: Inventory): { subject: string; group: Fact<string> }[] {
  const gpu = inv.gpus.map((g) => ({ subject: g.bdf, group: groupOf(inv, g.bdf) }));
  // A software RDMA device (rxe, siw) has no PCI function and no IOMMU domain of its own: not judged here.
  const nic = inv.nics.flatMap((n) => (n.bdf.state === 'present' ? [{ subject: n.bdf.value, group: groupOf(inv, n.bdf.value) }] : []));
  return [...gpu, ...nic];
}

export default defineCheck('iommu-mode', WORDING, {
  run({ inv, baseline }): Finding[] {
    const want = baseline?.iommu ?? null;
    const cmd = Object.entries(nul(inv.iommu.cmdline) ?? {}).map(([k, v]) => `${k}=${v}`).join(' ');
    const devs = subjects(inv);
    if (devs.length === 0) return [f('iommu-na', 'skip', 'node', 'not applicable: no GPU or RDMA adapter with a PCI function')];
    // No IOMMU only when every device's group link is known to be absent: one that could not be read is no answer.
    if (inv.iommu.units.length === 0 && devs.every((d) => d.group.state === 'absent')) {
      const ok = want === null || want === 'off' || want === 'any';
      const msg = `no IOMMU (no /sys/class/iommu units, no groups)${cmd ? `; ${cmd}` : ''}`;
      return [f(ok ? 'iommu-ok' : 'iommu-mode-changed', ok ? 'pass' : 'fail', 'node', msg, want ?? 'off', 'off')];
    }
    const platform = acsPlatform(inv);
    const required = requiredDomain(inv, platform);
    const shared = dmaGroups(inv, platform).map(({ gpu, dma, gpuGroup, dmaGroup, unknown }) =>
      unknown !== null
        ? f('iommu-unknown', 'skip', dma, `whether DMA function ${dma} shares GPU ${gpu}'s IOMMU group cannot be told: ${unknown}`)
        : gpuGroup !== null && gpuGroup === dmaGroup
        ? f('iommu-ok', 'pass', dma, `DMA function ${dma} shares IOMMU group ${dmaGroup} with GPU ${gpu}`, `group of ${gpu}`, `group ${dmaGroup}`)
        : f('iommu-group-split', 'fail', dma, `DMA function ${dma} is in IOMMU group ${dmaGroup ?? 'none'}, GPU ${gpu} in ${gpuGroup ?? 'none'}`, `group of ${gpu}`, `group ${dmaGroup ?? 'none'}`));
    // A Direct NIC class whose platform cannot be told (acs-platform-unexpected): its group rules are not judged, said.
    const untold = platform.kind === 'unexpected' && (baseline?.acsPolicy ?? 'direct-nic') === 'direct-nic'
      ? [f('iommu-unknown', 'skip', 'node', `the Direct NIC platform's IOMMU group rules cannot be judged: ${platform.why}`)] : [];
    const rules = groupRules(inv, platform).map((v) =>
      v.unknown !== null ? f('iommu-unknown', 'skip', v.subject, `IOMMU group rule cannot be judged: ${v.unknown}`) : f(v.ok ? 'iommu-ok' : 'iommu-group-shared', v.ok ? 'pass' : 'fail', v.subject, v.why, v.expected, v.actual),
    );
    return [...shared, ...untold, ...rules, ...devs.map(({ subject, group: g }) => {
      if (g.state === 'unknown') return f('iommu-unknown', 'skip', subject, `IOMMU group link not readable: ${g.why}`);
      const group = nul(g);
      const type = group === null ? undefined : inv.iommu.groupTypes[group];
      const mode = group === null ? 'off' : modeOf(type);
      const got = `${mode}${type ? ` (group ${group}: ${type})` : ''}`;
      if (mode === 'unknown') return f('iommu-unknown', 'skip', subject, `IOMMU group ${group} type not readable`);
      if (required) {
        const why = `kernel ${nul(inv.kernelRelease) ?? '?'} predates 6.11 on a Data Direct node${cmd ? `; ${cmd}` : ''}`;
        return mode === required ? f('iommu-ok', 'pass', subject, `IOMMU ${got}: ${why}`, required, got) : f('iommu-kernel-domain', 'fail', subject, `IOMMU ${got}, want translated: ${why}`, required, got);
      }
      if (want === null) {
        // Without a baseline the platform is unknown: translated mode is flagged, not failed (a VM may need it).
        return mode === 'translated'
          ? f('iommu-translated', 'warn', subject, `IOMMU ${got}`, 'passthrough or off', got)
          : f('iommu-ok', 'pass', subject, `IOMMU ${got}`, 'passthrough or off', got);
      }
      const ok = want === 'any' || want === mode;
      const code = ok ? 'iommu-ok' : mode === 'translated' ? 'iommu-translated' : 'iommu-mode-changed';
      return f(code, ok ? 'pass' : 'fail', subject, `IOMMU ${got}`, want, got);
    })];
  },
});
