// The kernel's AER counters of one PCI function (drivers/pci/pcie/aer.c): three files per device, three more on a
// root port. Absent files are absent (no AER driver above the device), never zero errors.
//
// Read as few as the kernel allows. aer_stats_attrs_are_visible shows every one of these files only when the device
// has pdev->aer_stats, which pci_aer_init allocates only when pci_find_ext_capability found the AER capability
// (pdev->aer_cap): config space read whole (as root) that shows no AER capability means no file, and none is opened.
// The files come and go as one group: when aer_dev_correctable is absent the others are too (one read, not three);
// the root-port totals likewise, by aer_rootport_total_err_cor. Config space that cannot say (not root, 256 bytes,
// a broken list) reads the files: unknown stays unknown, never zero.
import type { Host } from '../host/host.js';
import type { AerCounterFile, AerCounters, AerRootTotals } from '../model/aer.js';
import { ABSENT, type Fact, present, unknown } from '../model/fact.js';
import { type AerKind, parseAerCounterFile, parseAerTotal } from '../parsers/aer-counters.js';
import type { Parsed } from '../parsers/sysfs.js';
import { BoundedMemo } from './memo.js';
import { type Notes, readWhy } from './read.js';

const FILES: Readonly<Record<AerKind, string>> = { correctable: 'aer_dev_correctable', nonfatal: 'aer_dev_nonfatal', fatal: 'aer_dev_fatal' };
/** Files a device adds: the three aer_dev_*, and on a root port the three aer_rootport_total_err_*; none without AER. */
export const AER_READS = { device: 3, rootPort: 6, noCounters: 1, noCapability: 0 } as const;

async function text(host: Host, path: string, notes: Notes): Promise<Fact<string>> {
  const r = await host.readText(path);
  if (r.ok) return present(r.value);
  if (r.missing) return ABSENT;
  notes.add(path, r.reason);
  return unknown(readWhy(path, r.reason));
}

/**
 * parseAerCounterFile, pure, memoized by text: a healthy node's path devices hold the same few texts (every count 0,
 * one label set per kernel), so 48 devices' 144 files parse as about three. Bounded: short texts only, and the memo
 * starts again when full, so a hostile or noisy tree costs a parse per file as before, never memory.
 */
const MEMO_TEXT = 2048;
const parsed = new BoundedMemo<string, Parsed<AerCounterFile>>(64);
const parseMemo = (text: string, kind: AerKind): Parsed<AerCounterFile> =>
  text.length > MEMO_TEXT ? parseAerCounterFile(text, kind) : parsed.get(`${kind}\n${text}`, () => parseAerCounterFile(text, kind));

async function file(host: Host, dir: string, kind: AerKind, notes: Notes) {
  const path = `${dir}/${FILES[kind]}`;
  const t = await text(host, path, notes);
  if (t.state !== 'present') return t;
  const p = parseMemo(t.value, kind);
  if (p.ok) return present(p.value);
  notes.add(path, p.error);
  return unknown(`${path}: ${p.error}`);
}

async function total(host: Host, dir: string, k: 'cor' | 'nonfatal' | 'fatal', notes: Notes): Promise<Fact<number>> {
  const path = `${dir}/aer_rootport_total_err_${k}`;
  const t = await text(host, path, notes);
  if (t.state !== 'present') return t;
  const p = parseAerTotal(t.value);
  if (p.ok) return present(p.value);
  notes.add(path, p.error);
  return unknown(`${path}: ${p.error}`);
}

async function rootTotals(host: Host, dir: string, notes: Notes): Promise<Fact<AerRootTotals>> {
  const cor = await total(host, dir, 'cor', notes);
  // The group is there or not as a whole: no _cor, no totals.
  if (cor.state === 'absent') return ABSENT;
  const nonfatal = await total(host, dir, 'nonfatal', notes);
  const fatal = await total(host, dir, 'fatal', notes);
  const parts = [cor, nonfatal, fatal];
  if (cor.state === 'present' && nonfatal.state === 'present' && fatal.state === 'present') return present({ cor: cor.value, nonfatal: nonfatal.value, fatal: fatal.value });
  const bad = parts.find((p) => p.state === 'unknown');
  if (bad?.state === 'unknown') return bad;
  return unknown(`${dir}: only some aer_rootport_total_err_* files`);
}

const NONE: AerCounters = { correctable: ABSENT, nonfatal: ABSENT, fatal: ABSENT, rootport: ABSENT };

/**
 * `rootPort`: the device is a root port (PCIe port type 4), or may be one (its config could not say). `noAerCap`:
 * its config space was read whole and holds no AER capability, so the kernel shows none of these files.
 */
export async function readAerCounters(host: Host, dir: string, rootPort: boolean, notes: Notes, noAerCap = false): Promise<AerCounters> {
  if (noAerCap) return NONE;
  const correctable = await file(host, dir, 'correctable', notes);
  if (correctable.state === 'absent') return NONE;
  const nonfatal = await file(host, dir, 'nonfatal', notes);
  const fatal = await file(host, dir, 'fatal', notes);
  const rootport = rootPort ? await rootTotals(host, dir, notes) : ABSENT;
  return { correctable, nonfatal, fatal, rootport };
}
