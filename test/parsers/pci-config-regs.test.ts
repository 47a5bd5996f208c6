// parsePciConfig's AER registers, error-reporting enables, MPS, MRRS and ASPM on generated and real H200 configs,
// each held to lspci's decode of the same bytes (pcie-aer's and pcie-payload's inputs).
import { nul } from '../../src/model/fact.js';
import t from 'tap';
import { readFileSync } from 'node:fs';
import { parsePciConfig } from '../../src/parsers/pci-config.js';
import { aspmCtlText } from '../../src/parsers/aspm.js';
import { aerSeen, lspciDecode, splitDevices } from './lspci-oracle.js';
import { agreesWithLspci, gpu, oracle, path } from './_pci-config-shared.js';

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
    agreesWithLspci(t, cfg, ls, { bytes });
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
    t.same(p && { mps: p.devCtl.mps, mrrs: p.devCtl.mrrs, cap: p.mpsSupported, lnk: p.lnkCtl && { aspm: aspmCtlText(p.lnkCtl.aspm), clockPm: p.lnkCtl.clockPm } },
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
      t.same([p?.devCtl.mps, p?.devCtl.mrrs, p?.mpsSupported, p?.lnkCtl && aspmCtlText(p.lnkCtl.aspm)], [mps, mrrs, mpsSupported, aspmCtlText(aspm)], `${kind} ${mps}/${mrrs}/${aspm}`);
      if (oracle(t)) agreesWithLspci(t, parsePciConfig(bytes), lspciDecode(bytes), { bytes });
    }
  }
});
