// AER error counters (drivers/pci/pcie/aer.c, Documentation/ABI/testing/sysfs-bus-pci-devices-aer_stats) and the
// per-node record the next run compares them with. Types only.
import type { Fact } from './fact.js';

/** One `aer_dev_*` file: a `label count` line per status bit the kernel names, and its TOTAL_ERR_* line. */
export interface AerCounterFile {
  /** As the kernel wrote them: labels changed between kernels ("Receiver Error" → "RxErr"), so never matched by name. */
  readonly bits: readonly { readonly label: string; readonly count: number }[];
  /** TOTAL_ERR_COR / TOTAL_ERR_NONFATAL / TOTAL_ERR_FATAL: error messages, which may not equal the bits' sum. */
  readonly total: number;
}

/** `aer_rootport_total_err_{cor,nonfatal,fatal}` of a root port: messages received from everything below it. */
export interface AerRootTotals {
  readonly cor: number;
  readonly nonfatal: number;
  readonly fatal: number;
}

export interface AerCounters {
  /** Absent: the kernel gives the device no counters (no AER driver above it: a VM, firmware-first, pci=noaer). */
  readonly correctable: Fact<AerCounterFile>;
  readonly nonfatal: Fact<AerCounterFile>;
  readonly fatal: Fact<AerCounterFile>;
  /** Root ports only; absent on every other device. */
  readonly rootport: Fact<AerRootTotals>;
}

/** What one run keeps of a device for the next run's growth judgement; null: not known at that run. */
export interface AerSample {
  readonly cor: number | null;
  readonly rootCor: number | null;
  /** Correctable Error Status (sticky bits): growth where no counter is kept (new bits since the reference). */
  readonly ceSta: number | null;
}

/** The counters a run recorded (state directory): the previous Prolog's, or this job's Prolog's. */
export interface AerReference {
  readonly time: string;
  /** /proc/sys/kernel/random/boot_id at that run: another boot resets every counter. */
  readonly boot: string | null;
  readonly job: string | null;
  readonly devices: Readonly<Record<string, AerSample>>;
}

/** What the growth judgement compares with: the reference, or why there is none (first run, unreadable file). */
export interface AerHistory {
  /** 'the previous Prolog' / "the job's Prolog": shown in every growth message. */
  readonly against: string;
  readonly ref: AerReference | null;
  /** Why ref is null; or a note about it (reset). */
  readonly why: string;
}
