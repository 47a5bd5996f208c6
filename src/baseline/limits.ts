// What one baseline file may hold: the same numbers for `baseline capture` (never writes more), `validate` and
// every load (refuse more). The counts are the schema's maxItems (a test keeps them equal); the size is the cap
// every JSON file the gate reads has (host/json-file.ts).
import { ConfigError } from '../errors.js';
import { MAX_FILE_BYTES } from '../host/json-file.js';
import type { Baseline } from '../model/baseline.js';

export const BASELINE_LIMITS = {
  bytes: MAX_FILE_BYTES,
  classes: 256,
  devicesPerClass: 4096,
  pathsPerClass: 65536,
  probesPerClass: 4096,
  /** Host patterns a class may hold (`baseline capture --from-fleet` packs 10,000 names without numbers into ~400). */
  patternsPerClass: 4096,
  /**
   * Automaton states of every host pattern of the file together (one pattern holds at most MAX_PATTERN_STATES): every
   * Prolog compiles and runs them synchronously (the deadline is asked between patterns, never within one), so their
   * sum is bounded, not only each one (~25 ms to compile the most on this project's build machine).
   */
  patternStates: 200_000,
} as const;

/** A class of `gpus` × `nics` paths and at least `devices` devices, before it is built (a 1,000 × 1,000 node is a million paths). */
export function checkCaptureSize(gpus: number, nics: number, devices: number): void {
  const L = BASELINE_LIMITS;
  if (gpus * nics > L.pathsPerClass)
    throw new ConfigError(`${gpus} GPUs × ${nics} RDMA adapters = ${gpus * nics} GPU↔NIC paths, more than the ${L.pathsPerClass} a baseline class may hold: baseline validate and every prolog would refuse the file`);
  if (devices > L.devicesPerClass)
    throw new ConfigError(`${devices} devices, more than the ${L.devicesPerClass} a baseline class may hold: baseline validate and every prolog would refuse the file`);
}

/** What is over the limits in a parsed baseline and its text, worded for the file `name`; empty when nothing is. */
export function overLimits(b: Baseline, bytes: number): string[] {
  const L = BASELINE_LIMITS;
  const out: string[] = [];
  if (bytes > L.bytes) out.push(`${bytes} bytes, more than ${L.bytes}`);
  if (b.classes.length > L.classes) out.push(`${b.classes.length} classes, more than ${L.classes}`);
  b.classes.forEach((c, i) => {
    if (c.devices.length > L.devicesPerClass) out.push(`/classes/${i}/devices: ${c.devices.length}, more than ${L.devicesPerClass}`);
    if (c.paths.length > L.pathsPerClass) out.push(`/classes/${i}/paths: ${c.paths.length}, more than ${L.pathsPerClass}`);
    if ((c.probes?.length ?? 0) > L.probesPerClass) out.push(`/classes/${i}/probes: ${c.probes?.length}, more than ${L.probesPerClass}`);
    if (c.match.length > L.patternsPerClass) out.push(`/classes/${i}/match: ${c.match.length} host patterns, more than ${L.patternsPerClass}`);
  });
  return out;
}
