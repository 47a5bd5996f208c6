// ACS on the bridges between each GPU and NIC (pcie-acs), from config space (shared inventory pass). A drill sets one
// redirect or egress bit in one bridge's ACS Control.
import { acs } from '../compare/devices.js';
import { valueOf } from '../model/fact.js';
import { formatAcs, parsePciConfig } from '../parsers/pci-config.js';
import { base, devOf, patch16, plus } from './stage.js';
import { defineArea } from './types.js';

/** ACS Control bits a drill may set, with their bit numbers (PCIe Base 6.3 §7.7.11.3). */
export const ACS_BITS = { ReqRedir: 2, CmpltRedir: 3, EgressCtrl: 5 } as const;
export type AcsBit = keyof typeof ACS_BITS;
const isAcsBit = (s: string): s is AcsBit => Object.hasOwn(ACS_BITS, s);

export type AcsFault = { readonly kind: 'pcie-acs'; readonly bdf: string; readonly bit: AcsBit };

export default defineArea<'pcie-acs', AcsFault>({
  id: 'pcie-acs',
  title: 'ACS control of each bridge between a GPU and an RDMA adapter (P2P redirect)',
  compare: acs,
  captureDevice(_inv, d, role) {
    const acs = role === 'bridge' ? valueOf(valueOf(d.config)?.acs ?? { state: 'absent' }) : undefined;
    return acs ? { acsCtl: formatAcs(acs.ctl) } : {};
  },
  fault: {
    syntax: 'pcie-acs:<bridge bdf>=ReqRedir',
    subject: 'a bridge PCI address (0000:16:02.0)',
    parse(bdf, value) {
      if (!isAcsBit(value)) return { ok: false, error: `value must be one of ${Object.keys(ACS_BITS).join(', ')}` };
      return { ok: true, value: { kind: 'pcie-acs', bdf, bit: value } };
    },
    format: (f) => `pcie-acs:${f.bdf}=${f.bit}`,
    stage: {
      rewrite(f, p, b) {
        if (devOf(p) !== f.bdf || base(p) !== 'config') return b;
        // ACS Control register, ACS capability +6 (PCIe Base 6.3 §7.7.11.3).
        return patch16(b, plus(valueOf(parsePciConfig(b).acs)?.offset, 6), (v) => v | (1 << ACS_BITS[f.bit]));
      },
    },
  },
});
