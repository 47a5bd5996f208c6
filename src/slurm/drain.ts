// Acting on Slurm with NHC's etiquette, for every command: drain with our reason under the node's drain lock, and
// resume only a drain we own, after the node judged healthy again (DESIGN §5).
import { setTimeout as sleep } from 'node:timers/promises';
import { takeDrainLock, type Lock } from '../host/drain-lock.js';
import { log } from '../log.js';
import type { Result } from '../runner/exit.js';
import type { Outcome } from '../runner/policy.js';
import { notOurWriting, writeDrainRecord } from './drain-record.js';
import { drainAction, resumeAction } from './ownership.js';
import { buildReason, isOurs, sanitize } from './reason.js';
import type { NodeState } from '../parsers/scontrol.js';
import type { Scontrol } from './scontrol.js';

/**
 * Writes our drain reason under the node's drain lock, only where we may (never over a reason that is not ours,
 * nothing when the state cannot be read), and keeps what it wrote in `spool` (drain-record.ts). `ours`: the node now
 * carries a gdrgate reason.
 */
export async function drainOwned(scontrol: Scontrol, node: string, reason: string, stateDir: string, spool: string): Promise<{ action: string; ours: boolean }> {
  const logger = await log();
  const lock = await drainLockWithin(scontrol, stateDir);
  try {
    const cur = lock.ok ? await scontrol.show(node) : ({ ok: false, why: lock.why } as const);
    const act = lock.ok ? drainAction(cur.ok ? cur.node : null, reason, (r) => notOurWriting(r, spool, node) === null) : ({ act: 'keep', why: lock.why } as const);
    if (!cur.ok) logger.error({ node, why: cur.why }, 'cannot read node state; not writing a drain reason');
    if (act.act !== 'drain') return { action: `kept: ${act.why}`, ours: cur.ok && isOurs(cur.node.reason) };
    const w = await scontrol.drain(node, reason);
    if (!w.ok) logger.error({ node, why: w.why }, 'drain failed');
    else keepRecord(spool, node, reason, logger);
    return { action: w.ok ? 'drained' : `drain failed: ${w.why}`, ours: w.ok };
  } finally {
    if (lock.ok) lock.release();
  }
}

/**
 * The node's drain lock, waiting for a run that holds it as long as its read and its write can take: a Prolog leaving
 * at once made its exit 1 reach slurmd first, which then drained "Prolog error" over ours; a resume going on would lift
 * the drain being written.
 */
async function drainLockWithin(scontrol: Scontrol, stateDir: string): Promise<Lock> {
  let lock = takeDrainLock(stateDir);
  for (const until = performance.now() + scontrol.holderWaitMs(); !lock.ok && performance.now() < until; lock = takeDrainLock(stateDir)) await sleep(50);
  return lock;
}

/** The record of our writing (drain-record.ts): its failure is logged, the drain stands (and is left for a person). */
function keepRecord(spool: string, node: string, reason: string, logger: Awaited<ReturnType<typeof log>>): void {
  try {
    writeDrainRecord(spool, node, reason);
  } catch (e) {
    logger.error({ node, spool, why: (e as Error).message }, 'drain written, its record not kept: an earlier record of this node leaves it for gdrgate resume, none the prefix rule');
  }
}

/** The drain reason for an outcome that drains: the failing findings, or the tool's own trouble (fail-closed). */
export function reasonFor(o: Outcome, job: string | undefined): string {
  if (o.kind === 'unhealthy') return buildReason(o.failing, job);
  const label = o.kind === 'config-error' ? 'config' : 'internal';
  const msg = o.kind === 'healthy' ? '' : sanitize(o.message);
  return buildReason([{ check: label, code: `${label}-error`, status: 'fail', subject: '', message: msg, actual: msg }], job);
}

export interface ResumeOptions {
  /** Judges the node again before resuming (absent: already judged healthy by the caller, or --force). */
  readonly recheck?: (() => Promise<Outcome>) | undefined;
  /** A further condition on the current reason (a drill's marker): a refusal's text, or null to go on. */
  readonly refuse?: ((reason: string | null) => string | null) | undefined;
  /** After a healthy re-check: whether it could tell of the reason's subject (ownership.ts notToldNow on its findings); a refusal's text, or null to go on. */
  readonly untold?: ((reason: string | null) => string | null) | undefined;
  /** The node's drain lock's directory: held from the read that decides to the resume (absent: no lock, unit tests). */
  readonly stateDir?: string | undefined;
}

export interface Resumed {
  readonly resumed: boolean;
  /** scontrol update was run (and failed, when not resumed). */
  readonly tried: boolean;
  readonly result: Result;
  readonly why: string;
  /** The re-check kept the drain (still unhealthy, or the reason changed meanwhile): `why` says which. */
  readonly rechecked?: true;
  /** The reason lifted, when resumed. */
  readonly was?: string | null;
}

/**
 * Resumes `node` only if it is drained for a reason of ours (and `refuse` says nothing) and the recheck passes. From
 * the read that decides to the resume the node's drain lock is held (the re-check, seconds, is outside it): a drain of
 * ours another run writes meanwhile (an Epilog's bw-* over a link drain) waits, and lands on the resumed node.
 */
export async function resumeOwned(scontrol: Scontrol, node: string, o: ResumeOptions = {}): Promise<Resumed> {
  // Without a re-check the first read decides: locked from before it.
  const lock = o.recheck || o.stateDir === undefined ? null : await drainLockWithin(scontrol, o.stateDir);
  if (lock && !lock.ok) return { resumed: false, tried: false, result: 'usage', why: `left drained: ${lock.why}` };
  try {
    return await resumeRead(scontrol, node, o);
  } finally {
    if (lock?.ok) lock.release();
  }
}

async function resumeRead(scontrol: Scontrol, node: string, o: ResumeOptions): Promise<Resumed> {
  const cur = await scontrol.show(node);
  if (!cur.ok) return { resumed: false, tried: false, result: 'internal', why: `${cur.why}: not resuming` };
  const act = resumeAction(cur.node);
  if (act.act === 'none') return { resumed: false, tried: false, result: 'ok', why: act.why };
  if (act.act === 'refuse') return { resumed: false, tried: false, result: 'usage', why: act.why };
  const refusal = o.refuse?.(cur.node.reason) ?? null;
  if (refusal !== null) return { resumed: false, tried: false, result: 'usage', why: refusal };
  if (!o.recheck) return resumeNow(scontrol, node, cur.node, cur.node);
  const outcome = await o.recheck();
  if (outcome.kind !== 'healthy') {
    const why = outcome.kind === 'unhealthy' ? outcome.failing.map((f) => `${f.check} ${f.subject}: ${f.message}`).join('; ') : outcome.message;
    return { resumed: false, tried: false, result: outcome.kind === 'unhealthy' ? 'unhealthy' : outcome.kind === 'config-error' ? 'usage' : 'internal', why: `still unhealthy, left drained: ${why}`, rechecked: true };
  }
  // No fail is not a pass: a re-check that could not tell of what the drain was for never resumes it.
  const untold = o.untold?.(cur.node.reason) ?? null;
  if (untold !== null) return { resumed: false, tried: false, result: 'unhealthy', why: untold, rechecked: true };
  const lock = o.stateDir === undefined ? null : await drainLockWithin(scontrol, o.stateDir);
  if (lock && !lock.ok) return { resumed: false, tried: false, result: 'usage', why: `left drained: ${lock.why}`, rechecked: true };
  try {
    // The re-check took seconds: an admin may have drained over ours meanwhile. Read again, and resume only the very
    // reason judged (text and [user@time]); Slurm has no compare-and-set: an admin's write can still come in the one
    // round trip left, a run of ours' cannot (it waits for the lock).
    const now = await scontrol.show(node);
    if (!now.ok) return { resumed: false, tried: false, result: 'internal', why: `${now.why}: not resuming` };
    return await resumeNow(scontrol, node, cur.node, now.node, true);
  } finally {
    if (lock?.ok) lock.release();
  }
}

/** The resume itself, when the reason read `now` is still the one judged (`was`). */
async function resumeNow(scontrol: Scontrol, node: string, was: NodeState, now: NodeState, rechecked = false): Promise<Resumed> {
  const after = resumeAction(now);
  if (after.act === 'none') return { resumed: false, tried: false, result: 'ok', why: after.why };
  const changed = reasonChange(was, now);
  if (changed !== null) return { resumed: false, tried: false, result: 'usage', why: `left drained: the reason changed during the re-check: ${changed}`, rechecked: true };
  // A refusal that came during the re-check with the reason as it was (a reboot asked for keeps it and its [user@time]).
  if (after.act === 'refuse') return { resumed: false, tried: false, result: 'usage', why: after.why, ...(rechecked ? { rechecked } : {}) };
  const w = await scontrol.resume(node);
  return w.ok ? { resumed: true, tried: true, result: 'ok', why: `resumed (was: ${was.reason ?? 'none'})`, was: was.reason } : { resumed: false, tried: true, result: 'internal', why: w.why };
}

/** How the reason read after the re-check differs from the one judged (text, user, time), or null when it is the same. */
function reasonChange(was: NodeState, now: NodeState): string | null {
  const stamp = (n: NodeState): string => (n.reason === null ? 'none' : `${n.reason} [${n.reasonUser ?? ''}@${n.reasonTime ?? ''}]`);
  const same = now.reason === was.reason && now.reasonUser === was.reasonUser && now.reasonTime === was.reasonTime;
  return same ? null : `now ${stamp(now)} (was ${stamp(was)})`;
}
