// Tests parsePciConfig on real config blobs and lspci hex dumps, with the real lspci as the oracle.
import { nul } from '../../src/model/fact.js';
import t from 'tap';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { formatAcs, parsePciConfig, redirectBits } from '../../src/parsers/pci-config.js';
import { hexDumpBytes, lspciDecode, reassembleExtended, type LspciDevice } from './lspci-oracle.js';
import { aspmCtlText } from '../../src/parsers/aspm.js';
import { decodeDevCtl, devCtlText, payloadSize } from '../../src/parsers/pci-devctl.js';
import { acs, agreesWithLspci, corpus, gpu, H200, h200, oracle, path } from './_pci-config-shared.js';
import { shared } from '../helpers/paths.js';

const BLOB_FIX = path('../fixtures/pci-config/');
const REFERENCE = shared('corpus-reference/lspci/');
const n1sdp = corpus('n1sdp_plx8749_downstream_ports_acs_enabled_reqredir.txt');
const blog = corpus('blog_pex8747_downstream_port_titanx_acs_disabled.txt');
const [dsp8, dsp10] = n1sdp;
if (dsp8 === undefined || dsp10 === undefined || blog[0] === undefined) throw new Error('corpus fixtures missing');
const pex8747 = blog[0];

t.test('real H200 VM blobs decode as lspci decodes them', (t) => {
  const slots = readdirSync(H200).filter((d) => existsSync(`${H200}${d}/config`));
  t.same(slots, ['0000:00:00.0', '0000:00:01.0', '0000:00:02.0', '0000:00:03.0', '0000:00:04.0', '0000:00:05.0', '0000:00:06.0']);
  for (const slot of slots) {
    t.test(slot, (t) => {
      const bytes = h200(slot.slice(5));
      const cfg = parsePciConfig(bytes);
      t.same(cfg.problems, []);
      t.equal(cfg.capsReadable, true);
      t.equal(cfg.extReadable, bytes.length === 4096);
      if (oracle(t)) agreesWithLspci(t, cfg, lspciDecode(bytes, slot), { bytes });
      t.end();
    });
  }
  t.end();
});

t.test('H200 GPU 00:06.0: Gen5 x16 endpoint, no ACS, no ATS (lspci: LnkSta Speed 32GT/s, Width x16)', (t) => {
  const cfg = parsePciConfig(gpu);
  t.match(cfg, { length: 4096, vendorId: 0x10de, deviceId: 0x2335, classCode: 0x030200, headerType: 0 });
  t.same(cfg.capabilities.map((c) => [c.id, c.offset]), [[0x01, 0x40], [0x05, 0x48], [0x10, 0x60], [0x11, 0xb0]]);
  // lspci: DevCtl CorrErr- NonFatalErr- FatalErr+ UnsupReq- / RlxdOrd+ ExtTag+ NoSnoop- / MaxPayload 256 bytes, MaxReadReq 4096 bytes.
  const devCtl = { corrErr: false, nonFatalErr: false, fatalErr: true, unsupReq: false, relaxedOrdering: true, extTag: true, noSnoop: false, mps: 256, mrrs: 4096 };
  // lspci: DevCap MaxPayload 256 bytes; LnkCtl ASPM Disabled, ClockPM- (LnkCap offers ASPM L1).
  t.same(nul(cfg.pcie), { offset: 0x60, portType: 0, linkCap: { speed: 32, width: 16 }, linkStatus: { speed: 32, width: 16 }, devCtl, mpsSupported: 256, lnkCtl: { aspm: 0, clockPm: false }, version: 2 });
  // The VMM hides some extended capabilities by zeroing their ID (lspci: "Null"); the walk goes through them.
  t.same(cfg.extCapabilities.map((c) => [c.id, c.offset]),
    [[0, 0x100], [0x18, 0x12c], [0, 0x134], [0x01, 0x1b8], [0, 0x248], [0, 0x250], [0x0b, 0x2a4], [0x04, 0x2b8], [0x03, 0x2f0]]);
  t.equal(cfg.acs.state, 'absent', 'extended space was read and holds no ACS');
  t.equal(cfg.ats.state, 'absent');
  t.equal(devCtlText(devCtl), 'RlxdOrd+ MaxPayload 256 bytes, MaxReadReq 4096 bytes', "lspci's words for the part a report shows");
  t.end();
});

t.test('Device Control: payload sizes 128 << n for 0-5, the reserved 6 and 7 no size (PCIe Base 6.3 §7.5.3.4)', (t) => {
  t.same([0, 1, 2, 3, 4, 5, 6, 7].map(payloadSize), [128, 256, 512, 1024, 2048, 4096, null, null]);
  // A register whose Max Payload and Max Read Request hold the reserved 6 and 7: read as no size, never 8192.
  const reg = (6 << 5) | (7 << 12) | (1 << 4);
  t.same(decodeDevCtl(reg), { corrErr: false, nonFatalErr: false, fatalErr: false, unsupReq: false, relaxedOrdering: true, extTag: false, noSnoop: false, mps: null, mrrs: null });
  t.equal(devCtlText(decodeDevCtl(reg & ~(1 << 4))), 'RlxdOrd- MaxPayload ? bytes, MaxReadReq ? bytes');
  t.end();
});

t.test('H200 host bridge 00:00.0 and virtio 00:01.0: no PCIe capability', (t) => {
  const host = parsePciConfig(h200('00:00.0'));
  t.match(host, { length: 4096, classCode: 0x060000, pcie: { state: /^absent$/ } });
  t.same([host.capabilities, host.extCapabilities], [[], []], 'no capability in either list');
  const virtio = parsePciConfig(h200('00:01.0'));
  t.match(virtio, { length: 256, vendorId: 0x1af4, extReadable: false, pcie: { state: /^absent$/ }, acs: { state: /^unknown$/ } });
  t.same(virtio.capabilities.map((c) => c.id), [0x09, 0x09, 0x09, 0x09, 0x09, 0x11]);
  t.end();
});

t.test('n1sdp PLX 8749 `lspci -vvxxx` dumps: 256 bytes, so ACS is unreadable, not absent', (t) => {
  for (const dev of n1sdp) {
    t.test(dev.slot, (t) => {
      const bytes = hexDumpBytes(dev.text);
      t.equal(bytes.length, 256);
      const cfg = parsePciConfig(bytes);
      t.match(cfg, { vendorId: 0x10b5, deviceId: 0x8749, headerType: 1, capsReadable: true, extReadable: false });
      t.equal(nul(cfg.pcie)?.portType, 6, 'Express (v2) Downstream Port');
      t.same(nul(cfg.pcie)?.linkStatus, dev.lnkSta, `text LnkSta: ${JSON.stringify(dev.lnkSta)}`);
      t.same(nul(cfg.pcie)?.linkCap, dev.lnkCap, `text LnkCap: ${JSON.stringify(dev.lnkCap)}`);
      // The corpus text itself: DevCtl MaxPayload 128 bytes, MaxReadReq 128 bytes; DevCap MaxPayload 256; LnkCtl ASPM Disabled.
      t.same([nul(cfg.pcie)?.devCtl.mps, nul(cfg.pcie)?.devCtl.mrrs, nul(cfg.pcie)?.mpsSupported], [dev.devCtl?.mps, dev.devCtl?.mrrs, dev.devCapMps], 'MPS, MRRS, MPS supported as the text');
      t.equal(aspmCtlText(nul(cfg.pcie)?.lnkCtl?.aspm ?? -1), dev.lnkCtl?.aspm, 'LnkCtl ASPM as the text');
      t.not(dev.acsCtl, null, 'the text shows ACSCtl...');
      t.equal(cfg.acs.state, 'unknown', '...but it is beyond the dump: unknown, not absent');
      t.same(cfg.problems, []);
      if (oracle(t)) agreesWithLspci(t, cfg, lspciDecode(bytes, dev.slot), { bytes });
      t.end();
    });
  }
  t.end();
});

t.test('n1sdp with extended space re-assembled from its own lspci listing: ACSCtl ReqRedir+ CmpltRedir+', (t) => {
  for (const dev of n1sdp) {
    t.test(dev.slot, (t) => {
      const bytes = reassembleExtended(dev);
      const cfg = parsePciConfig(bytes);
      t.equal(nul(cfg.acs)?.offset, 0xf24);
      t.equal(nul(cfg.acs) === null ? null : formatAcs(nul(cfg.acs)!.ctl), dev.acsCtl, 'parser ACSCtl = corpus text');
      t.equal(nul(cfg.acs) === null ? null : formatAcs(nul(cfg.acs)!.cap), dev.acsCap, 'parser ACSCap = corpus text');
      t.same(nul(cfg.acs) && redirectBits(nul(cfg.acs)!.ctl), ['ReqRedir', 'CmpltRedir']);
      t.same(cfg.extCapabilities.map((c) => [c.offset, c.version]), dev.extCaps.map((c) => [c.offset, c.version]));
      t.same(cfg.problems, []);
      if (oracle(t)) {
        const ls = lspciDecode(bytes, dev.slot);
        agreesWithLspci(t, cfg, ls, { bytes });
        const kept = (d: LspciDevice) => d.extCaps.filter((c) => /^(Device Serial|Vendor Specific|Access Control)/.test(c.name));
        t.same(kept(ls), kept(dev), 'lspci re-decodes DSN, VSEC and ACS headers exactly as in the corpus text');
      }
      t.end();
    });
  }
  t.end();
});

t.test('binary fixtures are exactly what the corpus text yields', (t) => {
  const blobs: [string, Uint8Array][] = [
    ['n1sdp_plx8749_02_08_0_dsp_256.bin', hexDumpBytes(dsp8.text)],
    ['n1sdp_plx8749_02_10_0_dsp_256.bin', hexDumpBytes(dsp10.text)],
    ['n1sdp_plx8749_02_08_0_dsp_ext_reassembled_acs_reqredir.bin', reassembleExtended(dsp8)],
  ];
  for (const [name, want] of blobs) {
    if (process.env.GDRGATE_WRITE_FIXTURES === '1') writeFileSync(BLOB_FIX + name, want);
    t.same(new Uint8Array(readFileSync(BLOB_FIX + name)), want, `${name} (regenerate: GDRGATE_WRITE_FIXTURES=1)`);
  }
  t.end();
});

t.test('formatAcs and redirectBits', (t) => {
  t.equal(formatAcs(acs({ srcValid: true, reqRedir: true, cmpltRedir: true, upstreamFwd: true })),
    'SrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-');
  t.same(redirectBits(acs({})), []);
  t.same(redirectBits(acs({ egressCtrl: true, transBlk: true, directTrans: true })), ['EgressCtrl']);
  t.end();
});

t.test('formatAcs round-trips every ACSCap/ACSCtl line of the reference lspci captures', { skip: !existsSync(REFERENCE) && `corpus-reference absent (${REFERENCE})` }, (t) => {
  const lines = readdirSync(REFERENCE).flatMap((f) =>
    readFileSync(REFERENCE + f, 'utf8').split('\n').flatMap((l) => /ACSC(?:ap|tl):\s+(.*\S)/.exec(l)?.[1] ?? []));
  t.ok(lines.length > 40, `${lines.length} lines`);
  for (const line of lines) {
    const flags = line.split(/\s+/).map((f) => f.endsWith('+'));
    const [srcValid, transBlk, reqRedir, cmpltRedir, upstreamFwd, egressCtrl, directTrans] = flags;
    t.equal(formatAcs(acs({ srcValid, transBlk, reqRedir, cmpltRedir, upstreamFwd, egressCtrl, directTrans })), line);
  }
  t.end();
});

t.test("the header type's bit 7 (multi-function) is read apart from the type", (t) => {
  t.equal(parsePciConfig(gpu).multiFunction, false, 'the H200 GPU: a single-function device');
  const marked = Uint8Array.from(gpu);
  marked[0x0e] = marked[0x0e]! | 0x80;
  const cfg = parsePciConfig(marked);
  t.same([cfg.headerType, cfg.multiFunction, cfg.problems], [0, true, []]);
  t.end();
});
