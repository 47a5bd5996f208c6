// Whether the probed adapters' ports carry traffic just before the Epilog probes: traffic that no process holds a
// verbs device node for (the kernel's own users of the adapter: IPoIB, NFS over RDMA, Lustre's o2ib, a page cache
// written back to a parallel file system after the job; a peer's RDMA to this node) reads as a slow path, and the
// holders' look (holders-rule.ts) cannot see it. Each port's data counters, read twice a short window apart
// (port-traffic.ts), tell how much moved. Pure: the readings in, the verdict and its words out.
import type { Parsed } from '../parsers/sysfs.js';
import type { QuietSettings } from '../probes/config.js';

/** One counter read at the window's start and end; a read that failed is the reason why. */
export interface CounterPair {
  readonly before: Parsed<bigint>;
  readonly after: Parsed<bigint>;
}

export interface PortReading {
  readonly nic: string;
  /** null: the adapter's ports could not be listed. */
  readonly port: number | null;
  readonly sent: CounterPair;
  readonly received: CounterPair;
}

export type PortRate =
  | { readonly nic: string; readonly port: number | null; readonly sentGbps: number; readonly receivedGbps: number }
  | { readonly nic: string; readonly port: number | null; readonly untold: string };

const portName = (r: { nic: string; port: number | null }): string => (r.port === null ? r.nic : `${r.nic} port ${r.port}`);

export interface TrafficVerdict {
  readonly probe: boolean;
  /** Ports that moved more than the threshold, in the order read. */
  readonly busy: readonly PortRate[];
  /** Ports whose traffic could not be told, and why. */
  readonly untold: readonly PortRate[];
  readonly windowMs: number;
}

/** Counters count 4-octet units: Gb/s over `ms`. */
function gbps(units: bigint, ms: number): number {
  return (Number(units) * 32) / (ms * 1e6);
}

function delta(what: string, c: CounterPair, ms: number): Parsed<number> {
  if (!c.before.ok) return { ok: false, error: `${what}: ${c.before.error}` };
  if (!c.after.ok) return { ok: false, error: `${what}: ${c.after.error}` };
  // A counter reset meanwhile (perfquery -R, a driver reload): how much moved cannot be told.
  if (c.after.value < c.before.value) return { ok: false, error: `${what}: went back from ${c.before.value} to ${c.after.value} (reset meanwhile)` };
  return { ok: true, value: gbps(c.after.value - c.before.value, ms) };
}

/** Each port's rate over `elapsedMs` (the time between the two reads' starts), or why it cannot be told. */
export function portRate(r: PortReading, elapsedMs: number): PortRate {
  if (r.port === null) return { nic: r.nic, port: null, untold: 'its ports could not be listed' };
  if (!(elapsedMs > 0)) return { nic: r.nic, port: r.port, untold: 'no time passed between the two reads' };
  const s = delta('port_xmit_data', r.sent, elapsedMs);
  const v = delta('port_rcv_data', r.received, elapsedMs);
  if (!s.ok) return { nic: r.nic, port: r.port, untold: s.error };
  if (!v.ok) return { nic: r.nic, port: r.port, untold: v.error };
  return { nic: r.nic, port: r.port, sentGbps: s.value, receivedGbps: v.value };
}

/**
 * Busy ports keep the Epilog from probing. A port whose traffic cannot be told (a driver without port counters, a PMA
 * that does not answer, a stopped 32-bit counter) does not: the probe runs as it did before this look, and the result
 * says which ports were not told (a node without counters would otherwise never be probed again).
 */
export function trafficVerdict(readings: readonly PortReading[], elapsedMs: number, q: QuietSettings): TrafficVerdict {
  const rates = readings.map((r) => portRate(r, elapsedMs));
  const busy = rates.filter((r) => !('untold' in r) && r.sentGbps + r.receivedGbps > q.belowGbps);
  const untold = rates.filter((r) => 'untold' in r);
  return { probe: busy.length === 0, busy, untold, windowMs: q.windowMs };
}

const fixed = (x: number): string => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));

function busyText(r: PortRate): string {
  if ('untold' in r) return portName(r);
  return `${portName(r)} moved ${fixed(r.sentGbps + r.receivedGbps)} Gb/s (${fixed(r.sentGbps)} sent, ${fixed(r.receivedGbps)} received)`;
}

/** The busy ports and what they moved, the first two named. */
export function busyPorts(v: TrafficVerdict): string {
  const named = v.busy.slice(0, 2).map(busyText).join(', ');
  const more = v.busy.length > 2 ? `, +${v.busy.length - 2} more` : '';
  return `${named}${more} in the ${v.windowMs} ms before probing, traffic no process here holds a verbs device for (IPoIB, NFS over RDMA, Lustre, a peer's RDMA)`;
}

/** Why not probed (`dry`: a run by hand that probes anyway, said as what an Epilog would do). */
export function trafficReason(v: TrafficVerdict, dry: boolean): string {
  return `${busyPorts(v)}: ${dry ? 'an Epilog would not probe' : 'not probed, it would read as a slow path'}`;
}

/** The ports not told, for the result's words; null when every port was. */
export function untoldText(v: TrafficVerdict): string | null {
  if (!v.untold.length) return null;
  const each = v.untold.slice(0, 2).map((r) => `${portName(r)} (${'untold' in r ? r.untold : ''})`);
  return `traffic not told on ${each.join(', ')}${v.untold.length > 2 ? `, +${v.untold.length - 2} more` : ''}: probed as without the look`;
}
