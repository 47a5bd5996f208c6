// Tests parsePciConfig on real config blobs and lspci hex dumps, with the real lspci as the oracle.
import { nul } from '../../src/model/fact.js';
import t, { type Test } from 'tap';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { AcsBits, PciConfig } from '../../src/model/pci.js';
import { formatAcs, parsePciConfig, redirectBits } from '../../src/parsers/pci-config.js';
import { aspmCtlText } from '../../src/parsers/aspm.js';
import { aerSeen, haveLspci, hexDumpBytes, lspciDecode, reassembleExtended, splitDevices, type LspciDevice } from './lspci-oracle.js';

const path = (rel: string): string => fileURLToPath(new URL(rel, import.meta.url));
const H200 = path('../../examples/h200-vm/sys/devices/pci0000:00/');
const LSPCI_FIX = path('../fixtures/lspci/');
const BLOB_FIX = path('../fixtures/pci-config/');
const REFERENCE = path('../../../shared/corpus-reference/lspci/');

const h200 = (slot: string): Uint8Array => new Uint8Array(readFileSync(`${H200}0000:${slot}/config`));
const gpu = h200('00:06.0');
const corpus = (file: string): LspciDevice[] => splitDevices(readFileSync(LSPCI_FIX + file, 'utf8'));
const n1sdp = corpus('n1sdp_plx8749_downstream_ports_acs_enabled_reqredir.txt');
const blog = corpus('blog_pex8747_downstream_port_titanx_acs_disabled.txt');
const [dsp8, dsp10] = n1sdp;
if (dsp8 === undefined || dsp10 === undefined || blog[0] === undefined) throw new Error('corpus fixtures missing');
const pex8747 = blog[0];

/** Fails in CI, skips elsewhere, when the oracle is not installed. */
function oracle(t: Test): boolean {
  if (haveLspci()) return true;
  if (process.env.CI) t.fail('/usr/bin/lspci is required in CI (apt-get install pciutils)');
  else t.pass('lspci oracle', { skip: '/usr/bin/lspci not installed (apt-get install pciutils)' });
  return false;
}

/** Everything lspci decodes from the same bytes must match the parse, absence included. */
function agreesWithLspci(t: Test, cfg: PciConfig, ls: LspciDevice, opts: { ext?: boolean } = {}): void {
  const walked = <C extends { name: string }>(caps: readonly C[]): C[] => caps.filter((c) => !c.name.startsWith('<chain'));
  t.same(cfg.capabilities.map((c) => c.offset), walked(ls.stdCaps).map((c) => c.offset), 'capability offsets');
  t.same(nul(cfg.pcie)?.linkStatus ?? null, ls.lnkSta, 'LnkSta speed/width');
  t.same(nul(cfg.pcie)?.linkCap ?? null, ls.lnkCap, 'LnkCap speed/width');
  t.same([nul(cfg.pcie)?.devCtl ?? null, aerSeen(nul(cfg.pcie) && nul(cfg.aer))], [ls.devCtl, ls.aer], 'DevCtl; AER UESta/CESta (lspci shows extended space only below a PCIe cap)');
  const p = nul(cfg.pcie);
  t.same([p?.mpsSupported ?? null, p ? { aspm: aspmCtlText(p.lnkCtl.aspm), clockPm: p.lnkCtl.clockPm } : null], [ls.devCapMps, ls.lnkCtl], 'DevCap MaxPayload; LnkCtl ASPM and ClockPM');
  t.equal(nul(cfg.acs) === null ? null : formatAcs(nul(cfg.acs)!.ctl), ls.acsCtl, 'ACSCtl');
  t.equal(nul(cfg.acs) === null ? null : formatAcs(nul(cfg.acs)!.cap), ls.acsCap, 'ACSCap');
  t.same(nul(cfg.ats) === null ? null : { enabled: nul(cfg.ats)!.enabled, stu: nul(cfg.ats)!.stu }, ls.atsCtl, 'ATSCtl');
  if (opts.ext === false) return;
  const ext = walked(ls.extCaps).map((c) => [c.offset, c.version]);
  t.same(cfg.extCapabilities.map((c) => [c.offset, c.version]), ext, 'extended capability offsets/versions');
}

const patch = (src: Uint8Array, edit: (v: DataView, b: Uint8Array) => void): Uint8Array => {
  const b = Uint8Array.from(src);
  edit(new DataView(b.buffer), b);
  return b;
};
const acs = (bits: Partial<AcsBits>): AcsBits => ({
  srcValid: false, transBlk: false, reqRedir: false, cmpltRedir: false,
  upstreamFwd: false, egressCtrl: false, directTrans: false, ...bits,
});

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
      if (oracle(t)) agreesWithLspci(t, cfg, lspciDecode(bytes, slot));
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
  t.same(nul(cfg.pcie), { offset: 0x60, portType: 0, linkCap: { speed: 32, width: 16 }, linkStatus: { speed: 32, width: 16 }, devCtl, mpsSupported: 256, lnkCtl: { aspm: 0, clockPm: false } });
  // The VMM hides some extended capabilities by zeroing their ID (lspci: "Null"); the walk goes through them.
  t.same(cfg.extCapabilities.map((c) => [c.id, c.offset]),
    [[0, 0x100], [0x18, 0x12c], [0, 0x134], [0x01, 0x1b8], [0, 0x248], [0, 0x250], [0x0b, 0x2a4], [0x04, 0x2b8], [0x03, 0x2f0]]);
  t.equal(cfg.acs.state, 'absent', 'extended space was read and holds no ACS');
  t.equal(cfg.ats.state, 'absent');
  t.end();
});

t.test('H200 host bridge 00:00.0 and virtio 00:01.0: no PCIe capability', (t) => {
  const host = parsePciConfig(h200('00:00.0'));
  t.match(host, { length: 4096, classCode: 0x060000, capabilities: [], extCapabilities: [], pcie: { state: /^absent$/ } });
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
      t.equal(aspmCtlText(nul(cfg.pcie)?.lnkCtl.aspm ?? -1), dev.lnkCtl?.aspm, 'LnkCtl ASPM as the text');
      t.not(dev.acsCtl, null, 'the text shows ACSCtl...');
      t.equal(cfg.acs.state, 'unknown', '...but it is beyond the dump: unknown, not absent');
      t.same(cfg.problems, []);
      if (oracle(t)) agreesWithLspci(t, cfg, lspciDecode(bytes, dev.slot));
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
        agreesWithLspci(t, cfg, ls);
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

// ACS Control sits at 0xf24 + 6 in the re-assembled PLX 8749 downstream port (PCIe Base 6.3 §7.7.11.3).
const plx = reassembleExtended(dsp8);
const acsCases: { name: string; ctl: number; want: Partial<AcsBits>; redirect: string[]; text?: string | null }[] = [
  { name: 'all off, as on the PEX 8747 blog port', ctl: 0x0000, want: {}, redirect: [], text: pex8747.acsCtl },
  { name: 'ReqRedir only', ctl: 0x0004, want: { reqRedir: true }, redirect: ['ReqRedir'] },
  { name: 'EgressCtrl only', ctl: 0x0020, want: { egressCtrl: true }, redirect: ['EgressCtrl'] },
  { name: 'SrcValid + UpstreamFwd: isolation without redirect', ctl: 0x0011, want: { srcValid: true, upstreamFwd: true }, redirect: [] },
  {
    name: 'all seven', ctl: 0x007f, redirect: ['ReqRedir', 'CmpltRedir', 'EgressCtrl'],
    want: { srcValid: true, transBlk: true, reqRedir: true, cmpltRedir: true, upstreamFwd: true, egressCtrl: true, directTrans: true },
  },
];
t.test('ACS Control patched on the re-assembled PLX switch port', (t) => {
  for (const c of acsCases) {
    t.test(c.name, (t) => {
      const bytes = patch(plx, (v) => v.setUint16(0xf24 + 6, c.ctl, true));
      const cfg = parsePciConfig(bytes);
      t.same(nul(cfg.acs)?.ctl, acs(c.want));
      t.same(nul(cfg.acs) && redirectBits(nul(cfg.acs)!.ctl), c.redirect);
      if (c.text !== undefined) t.equal(nul(cfg.acs) && formatAcs(nul(cfg.acs)!.ctl), c.text, 'matches the real capture');
      if (oracle(t)) agreesWithLspci(t, cfg, lspciDecode(bytes));
      t.end();
    });
  }
  t.equal(formatAcs(nul(parsePciConfig(plx).acs)?.cap ?? acs({})), pex8747.acsCap, 'ACSCap of both PLX ports');
  t.end();
});

/** Derived from the real H200 GPU blob by changing bytes in memory; each row says what no real blob shows. */
const derived: {
  name: string; bytes: Uint8Array; want: Partial<Record<keyof PciConfig, unknown>>;
  problem?: RegExp; marker?: string; lspci?: { ext?: boolean } | false;
}[] = [
  {
    name: 'standard capability loop (MSI-X at 0xb0 points back to 0x40)',
    bytes: patch(gpu, (_v, b) => { b[0xb1] = 0x40; }),
    want: { pcie: { state: 'present', value: { offset: 0x60 } } }, problem: /capability list loops back to 0x40/, marker: '<chain looped>',
  },
  {
    name: 'capability ID 0xff at 0xb0',
    bytes: patch(gpu, (_v, b) => { b[0xb0] = 0xff; }),
    want: { pcie: { state: 'present', value: { offset: 0x60 } } }, problem: /ID 0xff/, marker: '<chain broken>',
  },
  {
    name: 'extended capability loop (DSN at 0x2f0 points back to 0x100)',
    bytes: patch(gpu, (v) => v.setUint32(0x2f0, v.getUint32(0x2f0, true) | (0x100 << 20), true)),
    want: { acs: { state: 'unknown', why: /loops back to 0x100/ }, ats: { state: 'unknown' } }, problem: /extended capability list loops back to 0x100/, marker: '<chain looped>',
  },
  {
    name: 'extended next pointer below 0x100 (lspci follows it; the spec forbids it)',
    bytes: patch(gpu, (v) => v.setUint32(0x2f0, v.getUint32(0x2f0, true) | (0x0fc << 20), true)),
    want: { acs: { state: 'unknown', why: /points back/ } }, problem: /points back into standard space \(0xfc\)/, lspci: { ext: false },
  },
  {
    name: 'cut to 0xb0 bytes: MSI-X pointer past the end',
    bytes: gpu.slice(0, 0xb0),
    want: { capsReadable: true, extReadable: false, pcie: { state: 'present', value: { linkStatus: { speed: 32, width: 16 } } } },
    problem: /capability pointer 0xb0 is past the end of the 176-byte blob/, marker: '<access denied>',
  },
  {
    name: 'cut to 0x250 bytes: extended next pointer past the end',
    bytes: gpu.slice(0, 0x250),
    want: { extReadable: true }, problem: /extended capability pointer 0x250 is past the end of the 592-byte blob/,
  },
  {
    name: 'cut to 64 bytes (unprivileged read): not readable, never "no ACS"',
    bytes: gpu.slice(0, 64),
    want: { capsReadable: false, extReadable: false, capabilities: [], pcie: { state: 'unknown' }, acs: { state: 'unknown' }, ats: { state: 'unknown' }, problems: [] },
    marker: '<access denied>',
  },
  {
    name: 'cut to 256 bytes: capabilities readable, extended space not',
    bytes: gpu.slice(0, 256),
    want: { capsReadable: true, extReadable: false, extCapabilities: [], acs: { state: 'unknown' }, problems: [], pcie: { state: 'present', value: { offset: 0x60 } } },
  },
  {
    name: 'Null at 0x248 turned into ATS, enabled, STU 2',
    bytes: patch(gpu, (v) => { v.setUint16(0x248, 0x000f, true); v.setUint16(0x24e, 0x8002, true); }),
    want: { ats: { state: 'present', value: { offset: 0x248, enabled: true, stu: 2 } }, problems: [] },
  },
  {
    name: 'Null at 0x248 turned into ATS, disabled',
    bytes: patch(gpu, (v) => v.setUint16(0x248, 0x000f, true)),
    want: { ats: { state: 'present', value: { offset: 0x248, enabled: false, stu: 0 } }, problems: [] },
  },
  {
    name: 'Status bit 4 clear: no standard list (extended space is still walked, as the kernel does)',
    bytes: patch(gpu, (_v, b) => { b[0x06] = (b[0x06] ?? 0) & ~0x10; }),
    want: { capabilities: [], pcie: { state: 'absent' }, problems: [] }, lspci: { ext: false },
  },
  { name: 'shorter than the header', bytes: gpu.slice(0, 32), want: { capsReadable: false, pcie: { state: 'unknown', why: /32 bytes/ } }, problem: /32 bytes/, lspci: false },
  { name: 'empty blob', bytes: new Uint8Array(0), want: { vendorId: 0xffff, length: 0 }, problem: /0 bytes/, lspci: false },
  { name: 'all ones: no function answered', bytes: new Uint8Array(4096).fill(0xff), want: { pcie: { state: 'unknown', why: /0xffff/ }, extCapabilities: [] }, problem: /0xffff/, lspci: false },
];
t.test('derived blobs: structure problems and readability', (t) => {
  for (const c of derived) {
    t.test(c.name, (t) => {
      const cfg = parsePciConfig(c.bytes);
      t.match(cfg, c.want);
      if (c.problem) t.match(cfg.problems, [c.problem]);
      else t.same(cfg.problems, []);
      if (c.lspci !== false && oracle(t)) {
        const ls = lspciDecode(c.bytes);
        agreesWithLspci(t, cfg, ls, c.lspci ?? {});
        if (c.marker) t.ok(ls.markers.includes(c.marker), `lspci says ${c.marker}`);
      }
      t.end();
    });
  }
  t.end();
});

t.test('never throws: every truncation and 2000 seeded byte corruptions of the GPU blob', (t) => {
  let seed = 0x9e3779b9;
  const rand = (n: number): number => ((seed = (Math.imul(seed ^ (seed >>> 15), 0x2c1b3c6d) + 1) >>> 0) % n);
  const inputs: Uint8Array[] = Array.from({ length: 300 }, (_, n) => gpu.slice(0, n));
  for (let i = 0; i < 2000; i++) {
    inputs.push(patch(gpu, (_v, b) => { for (let k = 0; k < 8; k++) b[[0x06, 0x34, 0xb1, 0x61, 0x100 + rand(0x200), rand(4096)][rand(6)] ?? 0] = rand(256); }));
  }
  for (const b of inputs) {
    const cfg = parsePciConfig(b);
    if (!Array.isArray(cfg.problems) || cfg.extCapabilities.length > 960) t.fail(`bad result for a ${b.length}-byte input`);
  }
  t.pass(`${inputs.length} inputs parsed without throwing`);
  t.end();
});

t.test('formatAcs and redirectBits', (t) => {
  t.equal(formatAcs(acs({ srcValid: true, reqRedir: true, cmpltRedir: true, upstreamFwd: true })),
    'SrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-');
  t.same(redirectBits(acs({})), []);
  t.same(redirectBits(acs({ egressCtrl: true, transBlk: true, directTrans: true })), ['EgressCtrl']);
  t.end();
});

t.test('formatAcs round-trips every ACSCap/ACSCtl line of the reference lspci captures', { skip: !existsSync(REFERENCE) && 'corpus-reference not present' }, (t) => {
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

// pcie-aer's inputs on generated configs (test/gen/pci-regs-gen.ts), held to lspci: UESta/CESta/UEMsk/UESvrt as
// registers, the flag names pcie-aer's messages use, and DevCtl's four error-reporting enables.
t.test('generated AER registers and error-reporting enables decode as lspci decodes them', async (t) => {
  const { configSpace } = await import('../gen/sysfs-tree.js');
  const { ceNames, enablesText, ueNames } = await import('../../src/checks/aer-judge.js');
  const { aerFlagsOf, aerMasksOf, LSPCI_UE_MASK } = await import('./lspci-oracle.js');
  const rows: { name: string; aer: { ueSta?: number; ueMsk?: number; ueSvrt?: number; ceSta?: number; ceMsk?: number }; errorEnables?: number }[] = [
    { name: 'clean, spec-default severity, all enables', aer: {} },
    { name: 'fatal MalfTLP', aer: { ueSta: 1 << 18 } },
    { name: 'non-fatal CmpltTO, UnsupReq masked and set, AdvNonFatalErr', aer: { ueSta: (1 << 14) | (1 << 20), ueMsk: 1 << 20, ceSta: 1 << 13 } },
    { name: 'correctable RxErr BadTLP BadDLLP Rollover Timeout', aer: { ceSta: 0x11c1 }, errorEnables: 0x4 },
    { name: 'every named UE bit, vendor severity', aer: { ueSta: LSPCI_UE_MASK, ueSvrt: 0x000e3030 }, errorEnables: 0x9 },
  ];
  if (!oracle(t)) return;
  for (const r of rows) {
    const bytes = new Uint8Array(configSpace({ bdf: '0000:18:00.0', kind: 'gpu', aer: r.aer, ...(r.errorEnables !== undefined ? { errorEnables: r.errorEnables } : {}) }));
    const cfg = parsePciConfig(bytes);
    const ls = lspciDecode(bytes, '18:00.0');
    const aer = nul(cfg.aer)!;
    agreesWithLspci(t, cfg, ls);
    t.same({ msk: aer.uncorMask & LSPCI_UE_MASK, svrt: aer.uncorSeverity & LSPCI_UE_MASK }, aerMasksOf(ls.text), `${r.name}: UEMsk/UESvrt`);
    t.same(ueNames(aer.uncorStatus).split(' ').filter(Boolean), aerFlagsOf(ls.text, 'UESta'), `${r.name}: UESta names as lspci's`);
    t.same(ceNames(aer.corStatus).split(' ').filter(Boolean), aerFlagsOf(ls.text, 'CESta'), `${r.name}: CESta names as lspci's`);
    const dc = nul(cfg.pcie)!.devCtl;
    t.equal(enablesText(dc), `CorrErr${ls.devCtl!.corrErr ? '+' : '-'} NonFatalErr${ls.devCtl!.nonFatalErr ? '+' : '-'} FatalErr${ls.devCtl!.fatalErr ? '+' : '-'} UnsupReq${ls.devCtl!.unsupReq ? '+' : '-'}`, `${r.name}: DevCtl enables`);
  }
});

t.test('H200 GPU (real blob): AER registers and enables as lspci shows them live (FatalErr+ only, UESta/CESta clean)', async (t) => {
  const { enablesText } = await import('../../src/checks/aer-judge.js');
  const cfg = parsePciConfig(gpu);
  t.equal(enablesText(nul(cfg.pcie)!.devCtl), 'CorrErr- NonFatalErr- FatalErr+ UnsupReq-');
  t.same(aerSeen(nul(cfg.aer)), { ue: 0, ce: 0 });
  const live = readFileSync(path('../fixtures/device-h200-live/raw-2026-12-01/lspci-vvv.txt'), 'utf8');
  const dev = splitDevices(live).find((d) => d.slot.endsWith('00:06.0'));
  if (dev?.aer) t.same(aerSeen(nul(cfg.aer)), dev.aer, 'equal to the live lspci -vvv');
  else t.pass('the live lspci shows no AER lines for 00:06.0', { skip: 'no AER lines in the live lspci output' });
});
const LIVE = path('../fixtures/device-h200-live/raw-2026-12-01/');
t.test('the live H200\'s own lspci -vvv (its pciutils 3.9.0) agrees with the decode of each function\'s config blob: MPS, MRRS, DevCap, LnkCtl', (t) => {
  const listed = splitDevices(readFileSync(`${LIVE}lspci-vvv.txt`, 'utf8'));
  t.ok(listed.length >= 7, `${listed.length} functions listed`);
  for (const dev of listed) {
    const cfg = parsePciConfig(new Uint8Array(readFileSync(`${LIVE}cfg/${dev.slot}.config`)));
    const p = nul(cfg.pcie);
    t.same(p && { mps: p.devCtl.mps, mrrs: p.devCtl.mrrs, cap: p.mpsSupported, lnk: { aspm: aspmCtlText(p.lnkCtl.aspm), clockPm: p.lnkCtl.clockPm } },
      dev.devCtl && { mps: dev.devCtl.mps, mrrs: dev.devCtl.mrrs, cap: dev.devCapMps, lnk: dev.lnkCtl }, dev.slot);
  }
  t.end();
});

t.test('generated configs (test/gen) for each MPS, MRRS and ASPM setting decode as lspci decodes them', async (t) => {
  const { configSpace } = await import('../gen/sysfs-tree.js');
  const kinds = ['rootport', 'switch-up', 'switch-down', 'gpu', 'nic'] as const;
  for (const [i, kind] of kinds.entries()) {
    for (const [mps, mrrs, aspm, mpsSupported] of [[128, 128, 0, 256], [256, 4096, 2, 512], [512, 512, 3, 4096], [4096, 1024, 1, 1024]] as const) {
      const bytes = new Uint8Array(configSpace({ bdf: `0000:1${i}:00.0`, kind, mps, mrrs, aspm, mpsSupported }));
      const p = nul(parsePciConfig(bytes).pcie);
      t.same([p?.devCtl.mps, p?.devCtl.mrrs, p?.mpsSupported, p && aspmCtlText(p.lnkCtl.aspm)], [mps, mrrs, mpsSupported, aspmCtlText(aspm)], `${kind} ${mps}/${mrrs}/${aspm}`);
      if (oracle(t)) agreesWithLspci(t, parsePciConfig(bytes), lspciDecode(bytes));
    }
  }
});
