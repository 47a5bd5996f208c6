// The gate's side of a drill (loaded only when a drill file exists): wrap the Host, mark the drain reason.
import type { Host } from '../host/host.js';
import { log } from '../log.js';
import { loadDrill } from './file.js';
import { markReason } from './marker.js';
import { DrillHost } from './overlay.js';

export interface ActiveDrill {
  readonly marker: string;
  readonly fault: string;
  wrap(host: Host): Host;
  mark(reason: string): string;
}

/** The drill in force for this node, or null (logged: a drill file that is ignored is worth a line). */
export async function activeDrill(stateDir: string, node: string): Promise<ActiveDrill | null> {
  const d = loadDrill(stateDir, node);
  const logger = await log();
  if (!d.ok) {
    logger.warn({ node, why: d.why }, 'drill file ignored');
    return null;
  }
  logger.warn({ node, drill: d.spec.marker, fault: d.spec.fault, expiresAt: d.spec.expiresAt }, 'drill active: the gate sees one staged fault');
  return { marker: d.spec.marker, fault: d.spec.fault, wrap: (h) => new DrillHost(h, d.fault), mark: (r) => markReason(r, d.spec.marker) };
}
