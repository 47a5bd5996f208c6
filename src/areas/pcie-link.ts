// PCIe link training (pcie-link): speed and width of every GPU, NIC and bridge on their paths, read by the shared
// inventory pass (Link Status/Capabilities as root, else sysfs *_link_*). A drill narrows one device's link.
import { links } from '../compare/devices.js';
import { valueOf } from '../model/fact.js';
import { parsePciConfig } from '../parsers/pci-config.js';
import { base, devOf, patch16, plus } from './stage.js';
import { defineArea } from './types.js';

const WIDTHS = new Set([1, 2, 4, 8, 12, 16, 32]);

export type LinkFault = { readonly kind: 'pcie-link'; readonly bdf: string; readonly width: number };

export default defineArea<'pcie-link', LinkFault>({
  id: 'pcie-link',
  title: 'link speed and width of each GPU, RDMA adapter and bridge on their paths',
  compare: links,
  fault: {
    syntax: 'pcie-link:<bdf>=x8',
    subject: 'a PCI address (0000:17:00.0)',
    parse(bdf, value) {
      const w = /^x(\d+)$/.exec(value);
      if (!w || !WIDTHS.has(Number(w[1]))) return { ok: false, error: 'value must be a link width: x1, x2, x4, x8, x12, x16, x32' };
      return { ok: true, value: { kind: 'pcie-link', bdf, width: Number(w[1]) } };
    },
    format: (f) => `pcie-link:${f.bdf}=x${f.width}`,
    stage: {
      rewrite(f, p, b) {
        if (devOf(p) !== f.bdf) return b;
        if (base(p) === 'current_link_width') return Buffer.from(`${f.width}\n`);
        // Link Status, PCIe capability +0x12, bits 9:4 (PCIe Base 6.3 §7.5.3.8): sysfs and config agree, as on a node.
        if (base(p) === 'config') return patch16(b, plus(valueOf(parsePciConfig(b).pcie)?.offset, 0x12), (v) => (v & ~0x03f0) | (f.width << 4));
        return b;
      },
    },
  },
});
