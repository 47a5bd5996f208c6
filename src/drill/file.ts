// The drill file: `<stateDir>/drill.json`, root's, 0600, written atomically, always with an expiry.
import { randomBytes } from 'node:crypto';
import { makeDirs } from '../host/dirs.js';
import { exists, removeFile } from '../host/entries.js';
import { assertSafeAbove, readSmall, writeAtomic } from '../host/files.js';
import { unsafeDirWhy } from '../host/safe-dir.js';
import { formatFault, parseFault, type Fault } from './fault.js';
import { drillFile } from './path.js';

export interface DrillSpec {
  readonly version: 1;
  readonly node: string;
  readonly fault: string;
  readonly createdAt: string;
  readonly expiresAt: string;
  /** Ends every drain reason written while the drill is active (` drill=<marker>`), so `drill stop` finds its own. */
  readonly marker: string;
  /** Slurm reservation the probe job runs in, when the node was reserved for the drill. */
  readonly reservation?: string | undefined;
}

export type Loaded = { readonly ok: true; readonly spec: DrillSpec; readonly fault: Fault } | { readonly ok: false; readonly why: string };

export const DEFAULT_MINUTES = 30;
export const MAX_MINUTES = 24 * 60;
const MAX_DRILL_BYTES = 64 * 1024;
/** How far createdAt may lie ahead of now and the drill still be in force (one node's clock, read twice). */
const CLOCK_SLACK_MS = 60_000;
const iso = (ms: number): string => new Date(ms).toISOString();

export function newDrill(node: string, fault: Fault, minutes: number, now = Date.now(), reservation?: string): DrillSpec {
  return {
    version: 1,
    node,
    fault: formatFault(fault),
    createdAt: new Date(now).toISOString(),
    expiresAt: new Date(now + Math.round(minutes * 60_000)).toISOString(),
    marker: randomBytes(4).toString('hex'),
    ...(reservation ? { reservation } : {}),
  };
}

/** The gate's one atomic write (fresh temp file, fsync, rename): a prolog reading meanwhile sees the old file or the new one. */
export function writeDrill(stateDir: string, spec: DrillSpec): string {
  assertSafeAbove(stateDir); // nothing made where another user could re-point the path
  makeDirs(stateDir, 0o711);
  const file = drillFile(stateDir);
  writeAtomic(file, JSON.stringify(spec, null, 2) + '\n', { mode: 0o600, sync: true });
  return file;
}

export function removeDrill(stateDir: string): boolean {
  const file = drillFile(stateDir);
  const had = exists(file);
  removeFile(file);
  return had;
}

function isSpec(v: unknown): v is DrillSpec {
  if (v === null || typeof v !== 'object') return false;
  const o = v as Record<string, unknown>;
  const str = (k: string): boolean => typeof o[k] === 'string' && o[k] !== '';
  return o.version === 1 && ['node', 'fault', 'createdAt', 'expiresAt', 'marker'].every(str) && /^[0-9a-f]{4,32}$/.test(String(o.marker)) && (o.reservation === undefined || str('reservation'));
}

/** The drill file as written, even expired or for another node (drill stop still wants its marker); null if unusable. */
export function readSpec(stateDir: string): DrillSpec | null {
  const r = readSmall(drillFile(stateDir), { max: MAX_DRILL_BYTES });
  if (!r.ok) return null;
  try {
    const data: unknown = JSON.parse(r.value.toString('utf8'));
    return isSpec(data) ? data : null;
  } catch {
    return null;
  }
}

/**
 * The drill in force for `node` at `now`, or why there is none. Ignored unless root-owned (`owner`), writable by its
 * owner only, well formed, for this node and unexpired: a stray or stale file never injects a fault.
 */
export function loadDrill(stateDir: string, node: string, now = Date.now(), owner = 0): Loaded {
  const file = drillFile(stateDir);
  // In a directory another user can write, root's file may be one they kept aside and put back after `drill stop`.
  const dir = unsafeDirWhy(stateDir);
  if (dir !== null && dir !== 'missing') return { ok: false, why: `${dir}: a drill file there may not be the one root left (not in force)` };
  // Opened once, checked on the descriptor: a link, a FIFO or a file someone else could write never injects a fault.
  const r = readSmall(file, { max: MAX_DRILL_BYTES, owner, mode: 'no-other-write' });
  if (!r.ok) return { ok: false, why: r.why };
  const text = r.value.toString('utf8');
  let data: unknown;
  try {
    data = JSON.parse(text) as unknown;
  } catch (e) {
    return { ok: false, why: `${file}: not JSON: ${(e as Error).message}` };
  }
  if (!isSpec(data)) return { ok: false, why: `${file}: not a drill file (version, node, fault, createdAt, expiresAt, marker)` };
  const expires = Date.parse(data.expiresAt);
  if (!Number.isFinite(expires)) return { ok: false, why: `${file}: expiresAt ${JSON.stringify(data.expiresAt)} is not a time` };
  if (expires <= now) return { ok: false, why: `drill ${data.marker} expired at ${data.expiresAt}` };
  // In force only between createdAt and expiresAt, at most MAX_MINUTES apart: a file that says longer (edited by hand),
  // or one made after now (the clock set back since drill start), would outlive the bound it was armed with.
  const created = Date.parse(data.createdAt);
  if (!Number.isFinite(created)) return { ok: false, why: `${file}: createdAt ${JSON.stringify(data.createdAt)} is not a time` };
  if (expires - created > MAX_MINUTES * 60_000) return { ok: false, why: `drill ${data.marker} lasts from ${iso(created)} to ${iso(expires)}, more than ${MAX_MINUTES} minutes: not in force` };
  if (created > now + CLOCK_SLACK_MS) return { ok: false, why: `drill ${data.marker} was created at ${iso(created)}, after now (${iso(now)}: the clock was set back?): not in force` };
  if (data.node !== node) return { ok: false, why: `drill ${data.marker} is for node ${data.node}, not ${node}` };
  const f = parseFault(data.fault);
  return f.ok ? { ok: true, spec: data, fault: f.value } : { ok: false, why: `${file}: ${f.error}` };
}
