// The limits of one baseline file (src/baseline/limits.ts) at their exact value and one past it: what capture
// refuses before it builds a class, and what overLimits says of a class built (capture, --from-fleet) or read.
import t from 'tap';
import { BASELINE_LIMITS, checkCaptureSize, overLimits } from '../../src/baseline/limits.js';
import type { Baseline } from '../../src/model/baseline.js';
import { exactly } from '../helpers/exactly.js';

const L = BASELINE_LIMITS;
type Counts = { devices?: number; paths?: number; probes?: number; match?: number };
/** A file of `classes` classes, the second (index 1) holding the counts given; the entries' contents are not read. */
const file = (classes: number, counts: Counts): Baseline => {
  const n = (k: number | undefined): object[] => Array.from({ length: k ?? 1 }, () => ({}));
  const one = (c: Counts) => ({ name: 'x', match: n(c.match), devices: n(c.devices), paths: n(c.paths), probes: n(c.probes) });
  return { version: 1, classes: Array.from({ length: classes }, (_, i) => one(i === 1 ? counts : {})) } as unknown as Baseline;
};

t.test('capture: exactly the devices and paths a class may hold are taken; one more is refused', async (t) => {
  t.doesNotThrow(() => checkCaptureSize(256, 256, L.devicesPerClass));
  t.throws(() => checkCaptureSize(0, 0, L.devicesPerClass + 1), exactly(`${L.devicesPerClass + 1} devices, more than the ${L.devicesPerClass} a baseline class may hold: baseline validate and every prolog would refuse the file`));
  t.throws(() => checkCaptureSize(257, 256, 0), exactly(`257 GPUs × 256 RDMA adapters = 65792 GPU↔NIC paths, more than the ${L.pathsPerClass} a baseline class may hold: baseline validate and every prolog would refuse the file`));
});

t.test('overLimits: every count at its limit is nothing to say; one past it is said, where', async (t) => {
  const at = { devices: L.devicesPerClass, paths: L.pathsPerClass, probes: L.probesPerClass, match: L.patternsPerClass };
  t.same(overLimits(file(L.classes, at), L.bytes), []);
  t.same(overLimits(file(L.classes + 1, { devices: at.devices + 1, paths: at.paths + 1, probes: at.probes + 1, match: at.match + 1 }), L.bytes + 1), [
    `${L.bytes + 1} bytes, more than ${L.bytes}`,
    `${L.classes + 1} classes, more than ${L.classes}`,
    `/classes/1/devices: ${L.devicesPerClass + 1}, more than ${L.devicesPerClass}`,
    `/classes/1/paths: ${L.pathsPerClass + 1}, more than ${L.pathsPerClass}`,
    `/classes/1/probes: ${L.probesPerClass + 1}, more than ${L.probesPerClass}`,
    `/classes/1/match: ${L.patternsPerClass + 1} host patterns, more than ${L.patternsPerClass}`,
  ]);
});
