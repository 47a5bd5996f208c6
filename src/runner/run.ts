// Runs the selected checks over one inventory; a check that throws becomes an `error` finding, never a crash.
import { CHECK_IDS, CHECKS } from '../checks/index.js';
import type { CheckContext } from '../checks/types.js';
import type { CheckId, Finding } from '../model/finding.js';
import { UsageError } from '../errors.js';
import { requireDeviceLists } from '../inventory/pci-known.js';
import type { Deadline } from './deadline.js';

export function selectChecks(only: readonly string[] | undefined): CheckId[] {
  if (!only || only.length === 0) return [...CHECK_IDS];
  const bad = only.filter((id) => !(CHECK_IDS as readonly string[]).includes(id));
  if (bad.length) throw new UsageError(`unknown check id ${bad.join(', ')} (known: ${CHECK_IDS.join(', ')})`);
  return only as CheckId[];
}

/**
 * An inventory whose device lists could not be read is not judged (Unreadable: could not tell, inventory/pci-known.ts).
 * Checks are synchronous: a timer cannot stop one, so the deadline is asked between them (a run past it throws
 * DeadlineError, an internal error the policy handles) and each check gets it for its own long loops.
 */
export function runChecks(ctx: CheckContext, ids: readonly CheckId[], deadline?: Deadline): Finding[] {
  requireDeviceLists(ctx.inv);
  const out: Finding[] = [];
  for (const c of CHECKS.filter((x) => ids.includes(x.id))) {
    deadline?.check(`before check ${c.id}`);
    out.push(...runOne(c, ctx));
  }
  return out;
}

/**
 * runChecks for a run under a deadline: a turn of the event loop before each check, so that the deadline's timer
 * can fire between checks (no check's work outlives the inventory's limits, inventory/limits.ts), and the deadline
 * asked after it. Without a deadline, as runChecks.
 */
export async function runChecksPaced(ctx: CheckContext, ids: readonly CheckId[], deadline?: Deadline): Promise<Finding[]> {
  if (!deadline) return runChecks(ctx, ids);
  requireDeviceLists(ctx.inv);
  const out: Finding[] = [];
  for (const c of CHECKS.filter((x) => ids.includes(x.id))) {
    await new Promise<void>((r) => setImmediate(r));
    deadline.check(`before check ${c.id}`);
    out.push(...runOne(c, ctx));
  }
  return out;
}

function runOne(c: (typeof CHECKS)[number], ctx: CheckContext): readonly Finding[] {
  try {
    return c.run(ctx);
  } catch (e) {
    return [{ check: c.id, code: 'internal-error', status: 'error', subject: 'check', message: `check threw: ${(e as Error).message}` }];
  }
}

/** The one order of findings (checks/catalog.ts), kept here for the engine's callers. */
export { sortFindings } from '../checks/catalog.js';
