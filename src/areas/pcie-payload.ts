// Payload sizes and ASPM on the GPU↔NIC paths (pcie-payload): MPS/MRRS in Device Control (shared inventory pass) and
// the kernel's policy. A drill sets one device's MPS or MRRS.
import { payload } from '../compare/payload.js';
import { capRegister16 } from './stage.js';
import { defineArea } from './types.js';

export type PayloadFault = { readonly kind: 'pcie-payload'; readonly bdf: string; readonly field: 'mps' | 'mrrs'; readonly bytes: number };

export default defineArea<'pcie-payload', PayloadFault>({
  id: 'pcie-payload',
  title: 'max payload and read request sizes (MPS/MRRS) and ASPM on the GPU↔NIC paths',
  compare: payload,
  fault: {
    syntax: 'pcie-payload:<bdf>=mps512',
    subject: 'a PCI address on a GPU↔NIC path (0000:17:00.0)',
    parse(bdf, value) {
      const m = /^(mps|mrrs)(128|256|512|1024|2048|4096)$/.exec(value);
      if (!m) return { ok: false, error: 'value must be mps or mrrs and a size in bytes from 128 to 4096 (mps512, mrrs256)' };
      return { ok: true, value: { kind: 'pcie-payload', bdf, field: m[1] as 'mps' | 'mrrs', bytes: Number(m[2]) } };
    },
    format: (f) => `pcie-payload:${f.bdf}=${f.field}${f.bytes}`,
    stage: {
      // Device Control, PCIe capability +0x08: MPS bits 7:5, MRRS bits 14:12, 128 << code bytes (PCIe Base 6.3 §7.5.3.4).
      rewrite: capRegister16('pcie', 0x08, (f, v) => {
        const [shift, code] = [f.field === 'mps' ? 5 : 12, Math.log2(f.bytes / 128)];
        return (v & ~(7 << shift)) | (code << shift);
      }),
    },
  },
});
