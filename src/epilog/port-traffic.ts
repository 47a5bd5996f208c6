// The probed adapters' port data counters, read twice a short window apart, just before the Epilog probes (the rule
// and its words: port-traffic-rule.ts). Every port of each probed adapter: a second port's traffic crosses the same
// adapter and PCIe link as the probe's. Nothing is started; a read is a PMA query the driver answers.
import type { Host } from '../host/host.js';
import type { Inventory } from '../model/inventory.js';
import { parsePortCounter } from '../parsers/ib-counter.js';
import type { Parsed } from '../parsers/sysfs.js';
import type { ProbeSpec } from '../probes/types.js';
import type { QuietSettings } from '../probes/config.js';
import { type PortReading, trafficVerdict, type TrafficVerdict } from './port-traffic-rule.js';

const CLASS = '/sys/class/infiniband';

export interface TrafficOptions {
  /** How the window passes (tests give one that moves the counters meanwhile). */
  readonly wait?: (ms: number) => Promise<void>;
  readonly now?: () => number;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function counter(host: Host, file: string): Promise<Parsed<bigint>> {
  const r = await host.readText(file);
  if (!r.ok) return { ok: false, error: r.missing ? 'no such file (the driver keeps no counters for this port)' : r.reason };
  return parsePortCounter(r.value);
}

type Port = { readonly nic: string; readonly port: number | null };

async function readAll(host: Host, ports: readonly Port[]): Promise<(readonly [Parsed<bigint>, Parsed<bigint>])[]> {
  return Promise.all(
    ports.map(async (p) => {
      if (p.port === null) {
        const none: Parsed<bigint> = { ok: false, error: 'not read' };
        return [none, none] as const;
      }
      const dir = `${CLASS}/${p.nic}/ports/${p.port}/counters`;
      return Promise.all([counter(host, `${dir}/port_xmit_data`), counter(host, `${dir}/port_rcv_data`)]);
    }),
  );
}

/** The ports of the adapters `units` probe with ib_write_bw, as the inventory lists them. */
export function probedPorts(inv: Inventory, units: readonly (readonly ProbeSpec[])[]): Port[] {
  const nics = [...new Set(units.flat().flatMap((s) => (s.kind === 'ib_write_bw' ? [s.nic] : [])))];
  return nics.flatMap((name): Port[] => {
    const ports = inv.nics.find((n) => n.name === name)?.ports ?? [];
    return ports.length ? ports.map((p) => ({ nic: name, port: p.port })) : [{ nic: name, port: null }];
  });
}

/** The verdict over the probed adapters' ports; null where the look is off (window 0) or no adapter is probed. */
export async function portTraffic(host: Host, inv: Inventory, units: readonly (readonly ProbeSpec[])[], q: QuietSettings, o: TrafficOptions = {}): Promise<TrafficVerdict | null> {
  const ports = probedPorts(inv, units);
  if (q.windowMs <= 0 || !ports.length) return null;
  const now = o.now ?? ((): number => performance.now());
  const t0 = now();
  const before = await readAll(host, ports);
  await (o.wait ?? sleep)(q.windowMs);
  const t1 = now();
  const after = await readAll(host, ports);
  const readings: PortReading[] = ports.map((p, i) => ({
    ...p,
    sent: { before: before[i]![0], after: after[i]![0] },
    received: { before: before[i]![1], after: after[i]![1] },
  }));
  return trafficVerdict(readings, t1 - t0, q);
}
