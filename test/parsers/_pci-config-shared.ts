// Shared by the pci-config parser tests (not a test): the real H200 GPU blob, byte patching, ACS bit sets, and the
// real lspci as the oracle (fails in CI, skips elsewhere when it is not installed).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Test } from 'tap';
import { nul } from '../../src/model/fact.js';
import type { AcsBits, PciConfig } from '../../src/model/pci.js';
import { formatAcs, targetLinkSpeed } from '../../src/parsers/pci-config.js';
import { aspmCtlText } from '../../src/parsers/aspm.js';
import { aerSeen, haveLspci, splitDevices, type LspciDevice } from './lspci-oracle.js';

export const path = (rel: string): string => fileURLToPath(new URL(rel, import.meta.url));
export const H200 = path('../../examples/h200-vm/sys/devices/pci0000:00/');
export const LSPCI_FIX = path('../fixtures/lspci/');
export const h200 = (slot: string): Uint8Array => new Uint8Array(readFileSync(`${H200}0000:${slot}/config`));
export const gpu = h200('00:06.0');
export const corpus = (file: string): LspciDevice[] => splitDevices(readFileSync(LSPCI_FIX + file, 'utf8'));

/** Fails in CI, skips elsewhere, when the oracle is not installed. */
export function oracle(t: Test): boolean {
  if (haveLspci()) return true;
  if (process.env.CI) t.fail('/usr/bin/lspci is required in CI (apt-get install pciutils)');
  else t.pass('lspci oracle', { skip: '/usr/bin/lspci not installed (apt-get install pciutils)' });
  return false;
}

/** Everything lspci decodes from the same bytes must match the parse, absence included. */
export function agreesWithLspci(t: Test, cfg: PciConfig, ls: LspciDevice, opts: { ext?: boolean; bytes?: Uint8Array } = {}): void {
  const walked = <C extends { name: string }>(caps: readonly C[]): C[] => caps.filter((c) => !c.name.startsWith('<chain'));
  t.same(cfg.capabilities.map((c) => c.offset), walked(ls.stdCaps).map((c) => c.offset), 'capability offsets');
  t.same(nul(cfg.pcie)?.linkStatus ?? null, ls.lnkSta, 'LnkSta speed/width');
  t.same(nul(cfg.pcie)?.linkCap ?? null, ls.lnkCap, 'LnkCap speed/width');
  // Link Control 2 (read by the inventory only where a cooling state asks): the decode of the blob's register.
  const pc = nul(cfg.pcie);
  const b = opts.bytes;
  if (b && pc && pc.version >= 2 && ls.targetSpeed !== null) t.equal(targetLinkSpeed(b[pc.offset + 0x30]! | (b[pc.offset + 0x31]! << 8)), ls.targetSpeed, 'LnkCtl2 Target Link Speed');
  t.same([nul(cfg.pcie)?.devCtl ?? null, aerSeen(nul(cfg.pcie) && nul(cfg.aer))], [ls.devCtl, ls.aer], 'DevCtl; AER UESta/CESta (lspci shows extended space only below a PCIe cap)');
  const p = nul(cfg.pcie);
  t.same([p?.mpsSupported ?? null, p?.lnkCtl ? { aspm: aspmCtlText(p.lnkCtl.aspm), clockPm: p.lnkCtl.clockPm } : null], [ls.devCapMps, ls.lnkCtl], 'DevCap MaxPayload; LnkCtl ASPM and ClockPM');
  t.equal(nul(cfg.acs) === null ? null : formatAcs(nul(cfg.acs)!.ctl), ls.acsCtl, 'ACSCtl');
  t.equal(nul(cfg.acs) === null ? null : formatAcs(nul(cfg.acs)!.cap), ls.acsCap, 'ACSCap');
  t.same(nul(cfg.ats) === null ? null : { enabled: nul(cfg.ats)!.enabled, stu: nul(cfg.ats)!.stu }, ls.atsCtl, 'ATSCtl');
  if (opts.ext === false) return;
  const ext = walked(ls.extCaps).map((c) => [c.offset, c.version]);
  t.same(cfg.extCapabilities.map((c) => [c.offset, c.version]), ext, 'extended capability offsets/versions');
}

export const patch = (src: Uint8Array, edit: (v: DataView, b: Uint8Array) => void): Uint8Array => {
  const b = Uint8Array.from(src);
  edit(new DataView(b.buffer), b);
  return b;
};
export const acs = (bits: Partial<AcsBits>): AcsBits => ({
  srcValid: false, transBlk: false, reqRedir: false, cmpltRedir: false,
  upstreamFwd: false, egressCtrl: false, directTrans: false, ...bits,
});

