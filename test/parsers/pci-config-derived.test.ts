// parsePciConfig on blobs derived from real ones: ACS Control patched on a PLX switch port, structure problems
// (loops, truncation, all ones), and never throwing on seeded corruptions; lspci decodes the same bytes as the oracle.
import { nul } from '../../src/model/fact.js';
import t from 'tap';
import type { AcsBits, PciConfig } from '../../src/model/pci.js';
import { formatAcs, parsePciConfig, redirectBits } from '../../src/parsers/pci-config.js';
import { lspciDecode, reassembleExtended } from './lspci-oracle.js';
import { acs, agreesWithLspci, corpus, gpu, oracle, patch } from './_pci-config-shared.js';

const [dsp8] = corpus('n1sdp_plx8749_downstream_ports_acs_enabled_reqredir.txt');
const [pex8747] = corpus('blog_pex8747_downstream_port_titanx_acs_disabled.txt');
if (dsp8 === undefined || pex8747 === undefined) throw new Error('corpus fixtures missing');

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
      if (oracle(t)) agreesWithLspci(t, cfg, lspciDecode(bytes), { bytes });
      t.end();
    });
  }
  t.equal(formatAcs(nul(parsePciConfig(plx).acs)?.cap ?? acs({})), pex8747.acsCap, 'ACSCap of both PLX ports');
  t.end();
});

/** Derived from the real H200 GPU blob by changing bytes in memory; each row says what no real blob shows. */
const derived: {
  name: string; bytes: Uint8Array; want: Partial<Record<keyof PciConfig, unknown>>;
  problem?: string; marker?: string; lspci?: { ext?: boolean } | false;
}[] = [
  {
    name: 'standard capability loop (MSI-X at 0xb0 points back to 0x40)',
    bytes: patch(gpu, (_v, b) => { b[0xb1] = 0x40; }),
    want: { pcie: { state: 'present', value: { offset: 0x60 } } }, problem: 'capability list loops back to 0x40', marker: '<chain looped>',
  },
  {
    name: 'capability ID 0xff at 0xb0',
    bytes: patch(gpu, (_v, b) => { b[0xb0] = 0xff; }),
    want: { pcie: { state: 'present', value: { offset: 0x60 } } }, problem: 'capability at 0xb0 has ID 0xff: the list is broken', marker: '<chain broken>',
  },
  {
    name: 'extended capability loop (DSN at 0x2f0 points back to 0x100)',
    bytes: patch(gpu, (v) => v.setUint32(0x2f0, v.getUint32(0x2f0, true) | (0x100 << 20), true)),
    want: { acs: { state: 'unknown', why: /loops back to 0x100/ }, ats: { state: 'unknown' } }, problem: 'extended capability list loops back to 0x100', marker: '<chain looped>',
  },
  {
    name: 'extended next pointer below 0x100 (lspci follows it; the spec forbids it)',
    bytes: patch(gpu, (v) => v.setUint32(0x2f0, v.getUint32(0x2f0, true) | (0x0fc << 20), true)),
    want: { acs: { state: 'unknown', why: /points back/ } }, problem: 'extended capability at 0x2f0 points back into standard space (0xfc)', lspci: { ext: false },
  },
  {
    name: 'cut to 0xb0 bytes: MSI-X pointer past the end',
    bytes: gpu.slice(0, 0xb0),
    want: { capsReadable: true, extReadable: false, pcie: { state: 'present', value: { linkStatus: { speed: 32, width: 16 } } } },
    problem: 'capability pointer 0xb0 is past the end of the 176-byte blob', marker: '<access denied>',
  },
  {
    name: 'cut to 0x250 bytes: extended next pointer past the end',
    bytes: gpu.slice(0, 0x250),
    want: { extReadable: true }, problem: 'extended capability pointer 0x250 is past the end of the 592-byte blob',
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
  { name: 'shorter than the header', bytes: gpu.slice(0, 32), want: { capsReadable: false, pcie: { state: 'unknown', why: /32 bytes/ } }, problem: 'config blob is 32 bytes, shorter than the 64-byte header', lspci: false },
  { name: 'empty blob', bytes: new Uint8Array(0), want: { vendorId: 0xffff, length: 0 }, problem: 'config blob is 0 bytes, shorter than the 64-byte header', lspci: false },
  {
    name: 'extended space all ones from 0x100, header and standard list intact: ACS, ATS and AER unknown, never absent',
    bytes: patch(gpu, (_v, b) => void b.fill(0xff, 0x100)),
    want: { pcie: { state: 'present' }, acs: { state: 'unknown', why: /^extended capability header at 0x100 reads all ones: the function does not answer$/ }, ats: { state: 'unknown' }, aer: { state: 'unknown' }, extCapabilities: [] },
    problem: 'extended capability header at 0x100 reads all ones: the function does not answer',
    lspci: false,
  },
  {
    name: 'an SR-IOV Virtual Function: both IDs FFFFh by definition, its class code answers: said as a VF, never "no function answered"',
    bytes: patch(gpu, (v) => v.setUint32(0, 0xffffffff, true)),
    want: { vendorId: 0xffff, pcie: { state: 'unknown', why: /^vendor ID reads 0xffff: an SR-IOV Virtual Function's header \(IDs read FFFFh by definition\): not judged from it, its Physical Function holds these settings$/ } },
    problem: "vendor ID reads 0xffff: an SR-IOV Virtual Function's header (IDs read FFFFh by definition): not judged from it, its Physical Function holds these settings",
    lspci: false,
  },
  { name: 'all ones: no function answered', bytes: new Uint8Array(4096).fill(0xff), want: { pcie: { state: 'unknown', why: /^vendor ID reads 0xffff: no function answered the configuration read$/ }, extCapabilities: [] }, problem: 'vendor ID reads 0xffff: no function answered the configuration read', lspci: false },
];
t.test('derived blobs: structure problems and readability', (t) => {
  for (const c of derived) {
    t.test(c.name, (t) => {
      const cfg = parsePciConfig(c.bytes);
      // A list in `want` is compared whole: t.match would take it as a prefix ([] passes for any list).
      t.match(cfg, Object.fromEntries(Object.entries(c.want).filter(([, v]) => !Array.isArray(v))));
      for (const [k, v] of Object.entries(c.want)) if (Array.isArray(v)) t.same(cfg[k as keyof PciConfig], v, `${k}, exactly`);
      t.same(cfg.problems, c.problem ? [c.problem] : []);
      if (c.lspci !== false && oracle(t)) {
        const ls = lspciDecode(c.bytes);
        agreesWithLspci(t, cfg, ls, { ...c.lspci, bytes: c.bytes });
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

