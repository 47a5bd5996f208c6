// A Root Complex Integrated Endpoint or Event Collector (PCIe Device/Port Type 9, 10) has no Link registers: the
// parse decodes none from the live H200 GPU's config with only its type changed, as lspci prints none for it.
import t from 'tap';
import { nul } from '../../src/model/fact.js';
import { parsePciConfig } from '../../src/parsers/pci-config.js';
import { agreesWithLspci, gpu, oracle, patch } from './_pci-config-shared.js';
import { lspciDecode } from './lspci-oracle.js';

/** The PCIe capability of the H200 GPU is at 0x60; Device/Port Type is bits 7:4 of the byte at +0x02. */
const typed = (type: number): Uint8Array => patch(gpu, (_, b) => void (b[0x62] = (b[0x62]! & 0x0f) | (type << 4)));

t.test('the capture as taken (Endpoint, type 0): Gen5 x16 in Link Capabilities and Status', async (t) => {
  const p = nul(parsePciConfig(gpu).pcie)!;
  t.same([p.portType, p.linkCap, p.linkStatus, p.lnkCtl], [0, { speed: 32, width: 16 }, { speed: 32, width: 16 }, { aspm: 0, clockPm: false }]);
});

for (const [type, name] of [[9, 'Root Complex Integrated Endpoint'], [10, 'Root Complex Event Collector']] as const) {
  t.test(`type ${type} (${name}), its reserved Link registers still holding Gen5 x16: no link decoded`, async (t) => {
    const bytes = typed(type);
    const p = nul(parsePciConfig(bytes).pcie)!;
    t.same([p.portType, p.linkCap, p.linkStatus, p.lnkCtl], [type, null, null, null], 'no LnkCap, LnkSta, LnkCtl');
    t.same([p.devCtl.mps, p.devCtl.mrrs, p.mpsSupported], [256, 4096, 256], 'Device Capabilities and Control are still read');
    if (oracle(t)) {
      const ls = lspciDecode(bytes);
      t.same([ls.lnkCap, ls.lnkSta, ls.lnkCtl], [null, null, null], 'lspci prints no LnkCap, LnkSta, LnkCtl for it');
      agreesWithLspci(t, parsePciConfig(bytes), ls, { bytes });
    }
  });
}
