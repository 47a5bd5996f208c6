// pcie-aer's judgement of one device, pure: the kernel's counters where it keeps them and reporting is on, the AER
// capability's sticky status registers always (they record whatever the enables and the masks say), and the growth
// of the correctable counters since a reference run (the previous Prolog, or the job's Prolog in the Epilog).
import type { AerHistory, AerReference, AerSample } from '../model/aer.js';
import type { BaselineAer } from '../model/baseline.js';
import { factText, nul } from '../model/fact.js';
import type { Inventory, PciDevice } from '../model/inventory.js';
import type { AerCap, DevCtl } from '../model/pci.js';
import { nonZero } from '../parsers/aer-counters.js';

/** Default rate: a correctable count grown at all during one interval warns; more than 100 fails (drivers retry, links degrade). */
export const AER_DEFAULTS: BaselineAer = { correctableWarnAbove: 0, correctableFailAbove: 100 };

/** lspci's names (pciutils ls-ecaps.c cap_aer), PCIe Base 6.3 §7.8.4.2 and §7.8.4.5. */
const UE_NAMES: readonly (readonly [number, string])[] = [[4, 'DLP'], [5, 'SDES'], [12, 'TLP'], [13, 'FCP'], [14, 'CmpltTO'], [15, 'CmpltAbrt'], [16, 'UnxCmplt'], [17, 'RxOF'], [18, 'MalfTLP'], [19, 'ECRC'], [20, 'UnsupReq'], [21, 'ACSViol'], [22, 'UncorrIntErr'], [23, 'BlockedTLP'], [24, 'AtomicOpBlocked'], [25, 'TLPBlockedErr'], [26, 'PoisonTLPBlocked']];
const CE_NAMES: readonly (readonly [number, string])[] = [[0, 'RxErr'], [6, 'BadTLP'], [7, 'BadDLLP'], [8, 'Rollover'], [12, 'Timeout'], [13, 'AdvNonFatalErr'], [14, 'CorrIntErr'], [15, 'HeaderOF']];
const ADV_NONFATAL = 1 << 13;
/** Non-fatal errors a requester or completer may handle as advisory (§6.2.3.2.4): with AdvNonFatalErr set, correctable. */
const ADVISORY = (1 << 12) | (1 << 14) | (1 << 15) | (1 << 16) | (1 << 20);
/** The correctable file's label of CESta bit 13 (aer.c aer_correctable_error_string: 5.x on, and 4.19). */
const ANFE_LABELS: ReadonlySet<string> = new Set(['NonFatalErr', 'Advisory Non-Fatal']);

/**
 * Advisory non-fatal errors the kernel handled: it takes one as correctable (aer.c pci_aer_handle_error clears
 * COR_STATUS alone), counting it under the correctable file's bit 13, and leaves the error's UESta bit set. That
 * bit is advisory only where the kernel counted such errors and no non-fatal one while it would have: a real
 * non-fatal error with NonFatalErr+ is counted in aer_dev_nonfatal (and its status cleared by pcie_do_recovery).
 * The count, or null where the counters do not show it.
 */
function anfeCounted(d: PciDevice, on: DevCtl | null): number | null {
  const { correctable, nonfatal } = d.aer;
  if (correctable.state !== 'present' || nonfatal.state !== 'present' || nonfatal.value.total !== 0 || on?.nonFatalErr !== true) return null;
  const n = correctable.value.bits.filter((b) => ANFE_LABELS.has(b.label)).reduce((m, b) => m + b.count, 0);
  return n > 0 ? n : null;
}

export function bitNames(reg: number, names: readonly (readonly [number, string])[]): string {
  const out = names.filter(([b]) => (reg >>> b) & 1).map(([, n]) => n);
  const known = names.reduce((m, [b]) => m | (1 << b), 0);
  const other = (reg & ~known) >>> 0;
  return [...out, ...(other ? [`0x${other.toString(16)}`] : [])].join(' ');
}
export const ueNames = (reg: number): string => bitNames(reg, UE_NAMES);
export const ceNames = (reg: number): string => bitNames(reg, CE_NAMES);

/** Error reporting enables (Device Control bits 0-3) as lspci prints them. */
export function enablesText(c: Pick<DevCtl, 'corrErr' | 'nonFatalErr' | 'fatalErr' | 'unsupReq'>): string {
  const s = (on: boolean): string => (on ? '+' : '-');
  return `CorrErr${s(c.corrErr)} NonFatalErr${s(c.nonFatalErr)} FatalErr${s(c.fatalErr)} UnsupReq${s(c.unsupReq)}`;
}

/** Enables on in `ref` and off in `now` (both as enablesText writes them), by whole flag. */
export function lostEnables(ref: string, now: string): string[] {
  const off = new Set(now.split(' ').filter((w) => w.endsWith('-')).map((w) => w.slice(0, -1)));
  return ref.split(' ').filter((w) => w.endsWith('+') && off.has(w.slice(0, -1))).map((w) => w.slice(0, -1));
}

export interface DeviceAer {
  readonly devCtl: DevCtl | null;
  readonly cap: AerCap | null;
  /** Why the status registers are not known (not root, no capability); null when cap is there. */
  readonly capWhy: string | null;
}

export function deviceAer(d: PciDevice): DeviceAer {
  const cfg = d.config;
  if (cfg.state !== 'present') return { devCtl: null, cap: null, capWhy: `config space ${factText(cfg)}` };
  const devCtl = cfg.value.pcie.state === 'present' ? cfg.value.pcie.value.devCtl : null;
  const aer = cfg.value.aer;
  if (aer.state === 'present') return { devCtl, cap: aer.value, capWhy: null };
  return { devCtl, cap: null, capWhy: aer.state === 'absent' ? 'no AER capability' : `AER capability unknown (${aer.why})` };
}

/** What the next run keeps of a device: the counters as read (whatever the enables), and CESta. `x`: deviceAer(d), when the caller has it. */
export function aerSample(d: PciDevice, x: DeviceAer = deviceAer(d)): AerSample {
  const a = d.aer;
  return {
    cor: a.correctable.state === 'present' ? a.correctable.value.total : null,
    rootCor: a.rootport.state === 'present' ? a.rootport.value.cor : null,
    ceSta: x.cap?.corStatus ?? null,
  };
}

/** The reference a run records: every device of the GPU↔NIC paths. */
export function aerReferenceOf(inv: Inventory, time: Date, job: string | null): AerReference {
  return { time: time.toISOString(), boot: nul(inv.bootId), job, devices: Object.fromEntries([...inv.pci.values()].map((d) => [d.bdf, aerSample(d)])) };
}

export interface Uncorrectable {
  /** Fail: what the counters or the unmasked status bits say; empty when none. */
  readonly errors: readonly string[];
  /** Said, never failed: masked status bits, advisory non-fatal errors. */
  readonly notes: readonly string[];
  /** What was judged from: "counters", "status registers". */
  readonly sources: readonly string[];
  /** What could not be judged and why. */
  readonly unknown: readonly string[];
  /**
   * Counters the kernel keeps for this device that could not be read or parsed. The kernel clears the status bits
   * of an error it handled (aer.c pci_aer_clear_*_status), so clean status registers are no evidence then: the
   * counter was the record, and the device's uncorrectable errors are unknown.
   */
  readonly unreadCounters: readonly string[];
  readonly actual: string;
}

export function uncorrectable(d: PciDevice, x: DeviceAer): Uncorrectable {
  const errors: string[] = [];
  const notes: string[] = [];
  const sources: string[] = [];
  const unknown: string[] = [];
  const unreadCounters: string[] = [];
  const actual: string[] = [];
  const { nonfatal, fatal, rootport } = d.aer;
  const on = x.devCtl;
  // The kernel counts what the device reports: a zero says nothing where reporting of that severity is off.
  for (const [what, f, enabled] of [['fatal', fatal, on?.fatalErr], ['non-fatal', nonfatal, on?.nonFatalErr]] as const) {
    if (f.state === 'present' && f.value.total > 0) {
      errors.push(`aer_dev_${what === 'fatal' ? 'fatal' : 'nonfatal'} ${f.value.total}${nonZero(f.value) ? ` (${nonZero(f.value)})` : ''}`);
      actual.push(`${what} ${f.value.total}`);
    } else if (f.state === 'present' && enabled === true) sources.push(`${what} counter`);
    else if (f.state === 'present') unknown.push(`${what} counter 0 with ${on ? `${what === 'fatal' ? 'FatalErr' : 'NonFatalErr'}- (reporting off)` : 'reporting enables unreadable'}`);
    else if (f.state === 'absent') unknown.push(`${what} counter absent (no aer_dev_* file)`);
    else {
      unknown.push(`${what} counter ${factText(f)}`);
      unreadCounters.push(`${what} counter ${factText(f)}`);
    }
  }
  if (rootport.state === 'present') {
    if (rootport.value.fatal + rootport.value.nonfatal > 0) {
      errors.push(`reported to this root port from below: fatal ${rootport.value.fatal}, non-fatal ${rootport.value.nonfatal}`);
      actual.push(`below: fatal ${rootport.value.fatal}, non-fatal ${rootport.value.nonfatal}`);
    }
    // Zero totals are no evidence by themselves: what reaches the root port depends on the enables below it.
  } else if (rootport.state === 'unknown') {
    unknown.push(`root port totals ${rootport.why}`);
    unreadCounters.push(`root port totals ${rootport.why}`);
  }
  const cap = x.cap;
  if (cap) {
    sources.push('UESta');
    const seen = cap.uncorStatus >>> 0;
    const masked = (seen & cap.uncorMask) >>> 0;
    let open = (seen & ~cap.uncorMask) >>> 0;
    const counted = cap.corStatus & ADV_NONFATAL ? null : anfeCounted(d, on);
    const advisory = cap.corStatus & ADV_NONFATAL || counted !== null ? (open & ~cap.uncorSeverity & ADVISORY) >>> 0 : 0;
    open = (open & ~advisory) >>> 0;
    const fatalBits = (open & cap.uncorSeverity) >>> 0;
    const nonFatalBits = (open & ~cap.uncorSeverity) >>> 0;
    if (fatalBits) {
      errors.push(`UESta ${ueNames(fatalBits)} (severity fatal)`);
      actual.push(`UESta ${ueNames(fatalBits)}`);
    }
    if (nonFatalBits) {
      errors.push(`UESta ${ueNames(nonFatalBits)} (severity non-fatal)`);
      actual.push(`UESta ${ueNames(nonFatalBits)}`);
    }
    if (advisory && counted === null) notes.push(`UESta ${ueNames(advisory)} with AdvNonFatalErr+ (advisory: handled as correctable)`);
    else if (advisory) notes.push(`UESta ${ueNames(advisory)} with ${counted} advisory non-fatal error(s) counted as correctable and no non-fatal one (advisory: handled as correctable)`);
    if (masked) notes.push(`UESta ${ueNames(masked)} masked (UEMsk): recorded, never reported`);
  } else unknown.push(`status registers: ${x.capWhy}`);
  return { errors, notes, sources, unknown, unreadCounters, actual: actual.join(', ') };
}

export type Growth =
  | { readonly kind: 'unknown'; readonly why: string }
  | { readonly kind: 'first'; readonly why: string }
  | { readonly kind: 'reset'; readonly why: string }
  | { readonly kind: 'growth'; readonly n: number; readonly exact: boolean; readonly detail: string; readonly seconds: number | null };

/** The reference's time, parsed once per reference (every device of a run asks for it). */
const refTimes = new WeakMap<AerReference, number>();
const interval = (ref: AerReference, now: Date): number | null => {
  let t = refTimes.get(ref);
  if (t === undefined) refTimes.set(ref, (t = Date.parse(ref.time)));
  return Number.isFinite(t) ? Math.max(0, Math.round((now.getTime() - t) / 1000)) : null;
};

/**
 * Correctable growth of one device against the reference. A counter that went down (another boot, a driver reload,
 * a clear) resets the reference and says so; a device the reference lacks is a first run for it.
 */
export function correctableGrowth(d: PciDevice, x: DeviceAer, bootId: string | null, h: AerHistory | null, now: Date): Growth {
  const cur = aerSample(d, x);
  const counted = cur.cor !== null && x.devCtl?.corrErr === true;
  if (!counted && cur.ceSta === null)
    return { kind: 'unknown', why: cur.cor === null ? `correctable counter ${d.aer.correctable.state === 'absent' ? 'absent' : factText(d.aer.correctable)} and CESta unreadable` : `correctable counter ${cur.cor} with ${x.devCtl ? 'CorrErr- (reporting off)' : 'reporting enables unreadable'} and CESta unreadable` };
  if (!h || !h.ref) return { kind: 'first', why: h ? `no growth known: ${h.why}` : 'no growth known (no reference run: a run by hand)' };
  const ref = h.ref;
  // Counters count from boot: growth is known only within one boot, so both boot ids must be read (a boot_id that
  // could not be read is no proof of the same boot: a new boot's counters would be taken from the last one's).
  if (ref.boot === null || bootId === null) return { kind: 'first', why: `no growth known: ${bootId === null ? 'this boot' : `the boot of ${h.against}`} not known (no boot_id read)` };
  if (ref.boot !== bootId) return { kind: 'reset', why: `another boot since ${h.against} (${ref.time}): reference reset` };
  const was = ref.devices[d.bdf];
  if (!was) return { kind: 'first', why: `no growth known: ${h.against} did not record ${d.bdf}` };
  const seconds = interval(ref, now);
  // Counted now, not then: the kernel clears CESta for every error it handles with reporting on, so CESta unchanged
  // is no evidence, and the errors since the reference are unknown (the reference this run writes counts from now).
  if (counted) {
    if (was.cor === null) return { kind: 'first', why: `no growth known: ${h.against} could not read the correctable counter of ${d.bdf}` };
    if (cur.cor! < was.cor || (cur.rootCor !== null && was.rootCor !== null && cur.rootCor < was.rootCor))
      return { kind: 'reset', why: `correctable counter went down since ${h.against} (${was.cor} → ${cur.cor}: a reboot, driver reload or clear): reference reset` };
    const dev = cur.cor! - was.cor;
    const below = cur.rootCor !== null && was.rootCor !== null ? cur.rootCor - was.rootCor : 0;
    const n = Math.max(dev, below);
    const bits = d.aer.correctable.state === 'present' ? nonZero(d.aer.correctable.value) : '';
    return { kind: 'growth', n, exact: true, detail: `TOTAL_ERR_COR ${was.cor} → ${cur.cor}${below > dev ? `, from below ${was.rootCor} → ${cur.rootCor}` : ''}${n && bits ? ` (since boot: ${bits})` : ''}`, seconds };
  }
  // No counter to go by: new sticky CESta bits since the reference are at least one error each.
  if (cur.ceSta !== null && was.ceSta !== null) {
    const fresh = (cur.ceSta & ~was.ceSta & ~ADV_NONFATAL) >>> 0;
    if ((was.ceSta & ~cur.ceSta) >>> 0) return { kind: 'reset', why: `CESta bits cleared since ${h.against} (${ceNames(was.ceSta)} → ${ceNames(cur.ceSta) || 'none'}): reference reset` };
    return { kind: 'growth', n: fresh ? bitCount(fresh) : 0, exact: false, detail: fresh ? `CESta new ${ceNames(fresh)} (no counter: at least one error each)` : `CESta unchanged (${ceNames(cur.ceSta) || 'none'})`, seconds };
  }
  return { kind: 'first', why: `no growth known: ${h.against} recorded no counter or CESta for ${d.bdf}` };
}

function bitCount(n: number): number {
  let c = 0;
  for (let v = n >>> 0; v; v &= v - 1) c++;
  return c;
}

export const duration = (s: number | null): string => (s === null ? 'an unknown time' : s < 120 ? `${s} s` : s < 7200 ? `${Math.round(s / 60)} min` : `${(s / 3600).toFixed(1)} h`);
