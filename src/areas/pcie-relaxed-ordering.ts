// Relaxed Ordering of each RDMA adapter (pcie-relaxed-ordering): Device Control bit 4, from config space (shared
// inventory pass). A drill clears it on one adapter.
import { relaxedOrdering } from '../compare/devctl.js';
import { capRegister16, keepFromCap } from './stage.js';
import { defineArea } from './types.js';

export type RelaxedOrderingFault = { readonly kind: 'pcie-relaxed-ordering'; readonly bdf: string };

export default defineArea<'pcie-relaxed-ordering', RelaxedOrderingFault>({
  id: 'pcie-relaxed-ordering',
  title: 'Relaxed Ordering enabled in each RDMA adapter\'s Device Control',
  compare: relaxedOrdering,
  captureDevice: keepFromCap('nic', 'pcie', (pcie) => ({ relaxedOrdering: pcie.devCtl.relaxedOrdering })),
  fault: {
    syntax: 'pcie-relaxed-ordering:<nic bdf>=off',
    subject: 'an RDMA adapter PCI address (0000:19:00.0)',
    parse(bdf, value) {
      if (value !== 'off') return { ok: false, error: 'the only pcie-relaxed-ordering fault is off' };
      return { ok: true, value: { kind: 'pcie-relaxed-ordering', bdf } };
    },
    format: (f) => `pcie-relaxed-ordering:${f.bdf}=off`,
    // Device Control, PCIe capability +0x08, bit 4 Enable Relaxed Ordering (PCIe Base 6.3 §7.5.3.4).
    stage: { rewrite: capRegister16('pcie', 0x08, (_f, v) => v & ~0x0010) },
  },
});
