// ACS on the bridges between each GPU and NIC (pcie-acs), from config space (shared inventory pass). A drill sets one
// redirect or egress bit in one bridge's ACS Control.
import { acs } from '../compare/devices.js';
import { formatAcs } from '../parsers/pci-config.js';
import { capRegister16, keepFromCap } from './stage.js';
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
  captureDevice: keepFromCap('bridge', 'acs', (acs) => ({ acsCtl: formatAcs(acs.ctl) })),
  fault: {
    syntax: 'pcie-acs:<bridge bdf>=ReqRedir',
    subject: 'a bridge PCI address (0000:16:02.0)',
    parse(bdf, value) {
      if (!isAcsBit(value)) return { ok: false, error: `value must be one of ${Object.keys(ACS_BITS).join(', ')}` };
      return { ok: true, value: { kind: 'pcie-acs', bdf, bit: value } };
    },
    format: (f) => `pcie-acs:${f.bdf}=${f.bit}`,
    // ACS Control register, ACS capability +6 (PCIe Base 6.3 §7.7.11.3).
    stage: { rewrite: capRegister16('acs', 6, (f, v) => v | (1 << ACS_BITS[f.bit])) },
  },
});
