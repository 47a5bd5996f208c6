// Relaxed Ordering of each RDMA adapter (pcie-relaxed-ordering): Device Control bit 4, from config space (shared
// inventory pass). A drill clears it on one adapter.
import { relaxedOrdering } from '../compare/devctl.js';
import { valueOf } from '../model/fact.js';
import { parsePciConfig } from '../parsers/pci-config.js';
import { base, devOf, patch16, plus } from './stage.js';
import { defineArea } from './types.js';

export type RelaxedOrderingFault = { readonly kind: 'pcie-relaxed-ordering'; readonly bdf: string };

export default defineArea<'pcie-relaxed-ordering', RelaxedOrderingFault>({
  id: 'pcie-relaxed-ordering',
  title: 'Relaxed Ordering enabled in each RDMA adapter\'s Device Control',
  compare: relaxedOrdering,
  captureDevice(_inv, d, role) {
    const pcie = role === 'nic' ? valueOf(valueOf(d.config)?.pcie ?? { state: 'absent' }) : undefined;
    return pcie ? { relaxedOrdering: pcie.devCtl.relaxedOrdering } : {};
  },
  fault: {
    syntax: 'pcie-relaxed-ordering:<nic bdf>=off',
    subject: 'an RDMA adapter PCI address (0000:19:00.0)',
    parse(bdf, value) {
      if (value !== 'off') return { ok: false, error: 'the only pcie-relaxed-ordering fault is off' };
      return { ok: true, value: { kind: 'pcie-relaxed-ordering', bdf } };
    },
    format: (f) => `pcie-relaxed-ordering:${f.bdf}=off`,
    stage: {
      rewrite(f, p, b) {
        if (devOf(p) !== f.bdf || base(p) !== 'config') return b;
        // Device Control, PCIe capability +0x08, bit 4 Enable Relaxed Ordering (PCIe Base 6.3 §7.5.3.4).
        return patch16(b, plus(valueOf(parsePciConfig(b).pcie)?.offset, 0x08), (v) => v & ~0x0010);
      },
    },
  },
});
