// The registry: every fact family as one record, by hand, in help order (as checks/index.ts lists the checks). The
// inventory's `areas`, compare, the fleet's majority, the drill grammar and `drill start --help` derive from it.
import type { Host } from '../host/host.js';
import gpuBar1 from './gpu-bar1.js';
import gpuRebar from './gpu-rebar/index.js';
import gpudirectMechanism from './gpudirect-mechanism.js';
import memlock from './memlock.js';
import pcieAcs from './pcie-acs.js';
import pcieAer from './pcie-aer.js';
import pcieLink from './pcie-link.js';
import pciePayload from './pcie-payload.js';
import pcieRelaxedOrdering from './pcie-relaxed-ordering.js';
import pcieThrottle from './pcie-throttle.js';
import type { AreaInput, FactsOf, FaultOf } from './types.js';

export const AREAS = [pcieLink, pcieAcs, pcieRelaxedOrdering, pcieThrottle, pcieAer, pciePayload, gpuBar1, gpuRebar, memlock, gpudirectMechanism] as const;

type Record_ = (typeof AREAS)[number];
export type AreaId = Record_['id'];
/** A drill fault: one of the records' own. */
export type Fault = FaultOf<Record_>;

/** What the records that read their own files hold, by id: `Inventory.areas`. */
export type AreaFacts = { readonly [R in Record_ as [FactsOf<R>] extends [never] ? never : R['id']]: FactsOf<R> };

/** Every record that reads its own files, read in parallel after the shared pass. */
export async function readAreas(host: Host, input: AreaInput): Promise<AreaFacts> {
  const entries = await Promise.all(AREAS.flatMap((a) => (a.read ? [a.read(host, input).then((v) => [a.id, v] as const)] : [])));
  return Object.fromEntries(entries) as unknown as AreaFacts;
}
