// The kernel's AER counters of one PCI function (drivers/pci/pcie/aer.c): three files per device, three more on a
// root port. Absent files are absent (no AER driver above the device), never zero errors.
import type { Host } from '../host/host.js';
import type { AerCounters, AerRootTotals } from '../model/aer.js';
import { ABSENT, type Fact, present, unknown } from '../model/fact.js';
import { type AerKind, parseAerCounterFile, parseAerTotal } from '../parsers/aer-counters.js';
import { type Notes, readWhy } from './read.js';

const FILES: Readonly<Record<AerKind, string>> = { correctable: 'aer_dev_correctable', nonfatal: 'aer_dev_nonfatal', fatal: 'aer_dev_fatal' };
/** Files a device adds: the three aer_dev_*, and on a root port the three aer_rootport_total_err_*. */
export const AER_READS = { device: 3, rootPort: 6 } as const;

async function text(host: Host, path: string, notes: Notes): Promise<Fact<string>> {
  const r = await host.readText(path);
  if (r.ok) return present(r.value);
  if (r.missing) return ABSENT;
  notes.add(path, r.reason);
  return unknown(readWhy(path, r.reason));
}

async function file(host: Host, dir: string, kind: AerKind, notes: Notes) {
  const path = `${dir}/${FILES[kind]}`;
  const t = await text(host, path, notes);
  if (t.state !== 'present') return t;
  const p = parseAerCounterFile(t.value, kind);
  if (p.ok) return present(p.value);
  notes.add(path, p.error);
  return unknown(`${path}: ${p.error}`);
}

async function rootTotals(host: Host, dir: string, notes: Notes): Promise<Fact<AerRootTotals>> {
  const parts = await Promise.all((['cor', 'nonfatal', 'fatal'] as const).map(async (k) => {
    const path = `${dir}/aer_rootport_total_err_${k}`;
    const t = await text(host, path, notes);
    if (t.state !== 'present') return t;
    const p = parseAerTotal(t.value);
    if (p.ok) return present(p.value);
    notes.add(path, p.error);
    return unknown(`${path}: ${p.error}`);
  }));
  const [cor, nonfatal, fatal] = parts as [Fact<number>, Fact<number>, Fact<number>];
  if (cor.state === 'present' && nonfatal.state === 'present' && fatal.state === 'present') return present({ cor: cor.value, nonfatal: nonfatal.value, fatal: fatal.value });
  const bad = parts.find((p) => p.state === 'unknown');
  if (bad?.state === 'unknown') return bad;
  return parts.every((p) => p.state === 'absent') ? ABSENT : unknown(`${dir}: only some aer_rootport_total_err_* files`);
}

/** `rootPort`: the device is a root port (PCIe port type 4), or may be one (its config could not say). */
export async function readAerCounters(host: Host, dir: string, rootPort: boolean, notes: Notes): Promise<AerCounters> {
  const [correctable, nonfatal, fatal, rootport] = await Promise.all([
    file(host, dir, 'correctable', notes),
    file(host, dir, 'nonfatal', notes),
    file(host, dir, 'fatal', notes),
    rootPort ? rootTotals(host, dir, notes) : ABSENT,
  ]);
  return { correctable, nonfatal, fatal, rootport };
}
