// NHC's rules of ownership: write a drain only on a node we may touch, resume only our own drains.
import { isDrainedOrDown, type NodeState } from '../parsers/scontrol.js';
import { markerOf } from '../drill/marker.js';
import { REASON_LABELS } from '../checks/index.js';
import { notOurWriting } from './drain-record.js';
import { isOurs, labelOf, reasonLabel, reasonSubject, sanitize } from './reason.js';
import type { AnyFinding } from '../model/finding.js';

export type DrainAction =
  | { readonly act: 'drain' }
  | { readonly act: 'keep'; readonly why: string };

/** A label the health check may resume (a check's); the Epilog's `bw-*` and a drill's wait for a person. */
const healthResumes = (label: string | null): boolean => label !== null && (Object.values(REASON_LABELS) as string[]).includes(label);

/**
 * `current` null: the state could not be read, so nothing is written (DESIGN §5). `reason`: ours to write. A drain of
 * ours that the health check would resume is replaced by one it would not (a bandwidth failure found under a link drain
 * must not be resumed with it once the link is back), only while it is the very text we wrote (`written`: an admin's
 * note added to it is kept); otherwise the first drain of ours stays.
 */
export function drainAction(current: NodeState | null, reason?: string, written?: (reason: string | null) => boolean): DrainAction {
  if (current === null) return { act: 'keep', why: 'node state unknown: not writing a reason' };
  if (!isDrainedOrDown(current.state)) return { act: 'drain' };
  if (isOurs(current.reason) && reason !== undefined && healthResumes(reasonLabel(current.reason)) && !healthResumes(reasonLabel(reason)) && markerOf(current.reason) === null && (written?.(current.reason) ?? false)) return { act: 'drain' };
  if (isOurs(current.reason)) return { act: 'keep', why: `already drained by gdrgate: ${current.reason}` };
  return { act: 'keep', why: `node is ${current.state} for a reason that is not ours (${current.reason ?? 'none'}): left as it is` };
}

export type ResumeAction =
  | { readonly act: 'resume' }
  | { readonly act: 'none'; readonly why: string }
  | { readonly act: 'refuse'; readonly why: string };

export function resumeAction(current: NodeState | null): ResumeAction {
  if (current === null) return { act: 'refuse', why: 'node state unknown: not resuming' };
  if (!isDrainedOrDown(current.state)) return { act: 'none', why: `node is ${current.state}: nothing to resume` };
  if (!isOurs(current.reason)) return { act: 'refuse', why: `drained for a reason that is not ours (${current.reason ?? 'none'}): left drained` };
  // DOWN is Slurm's (a node that stopped answering; ReturnToService says when it comes back), FAIL an admin's: our
  // reason under them is not ours to lift. Once Slurm lifts DOWN, the drain alone is ours again.
  if (/(^|\+)(DOWN|FAIL|FAILING)\*?(\+|$)/.test(current.state) || current.state.startsWith('DOWN')) return { act: 'refuse', why: `node is ${current.state}: its DOWN or FAIL is not ours to lift (our reason kept: ${current.reason ?? 'none'}); left as it is` };
  // A reboot or power down an admin asked for (`scontrol reboot ASAP nextstate=resume`, which keeps our reason and its
  // time when it names none) waits for the node's jobs to end; Slurm's resume clears it (node_mgr.c update_node,
  // NODE_RESUME: REBOOT_REQUESTED, REBOOT_ISSUED, POWERING_DOWN), so the reboot would silently never come.
  const pending = /(?:^|\+)(REBOOT_REQUESTED|REBOOT_ISSUED|POWER_DOWN|POWERING_DOWN|POWERED_DOWN)(?:\+|$)/.exec(current.state);
  if (pending) return { act: 'refuse', why: `node is ${current.state}: a ${pending[1]!.startsWith('REBOOT') ? 'reboot' : 'power down'} is pending, which resuming would cancel (our reason kept: ${current.reason ?? 'none'}); left as it is` };
  return { act: 'resume' };
}

/**
 * The health check resumes only a drain it has just judged: a reason of ours whose label is one of `judged` (the
 * reason labels of the checks it ran). Others (the Epilog's `bw-*`, a drill's drain, a check left out of the config)
 * wait for `gdrgate resume`; the refusal's text, or null to go on.
 */
export function notJudgedByHealth(reason: string | null, judged: readonly string[]): string | null {
  const marker = markerOf(reason);
  if (marker !== null) return `left drained: a drill's drain (drill=${marker}) is not judged by the health check`;
  const label = reasonLabel(reason);
  if (label !== null && judged.includes(label)) return null;
  return `left drained: ${label ?? 'its reason'} is not judged by the health check`;
}

/**
 * Why the health check leaves this drain to a person (a check it did not run, a drill's, a text it did not write as it
 * stands: drain-record.ts), or null to resume it once judged healthy.
 */
export function healthLeaves(reason: string | null, judged: readonly string[], spool: string, node: string): string | null {
  return notJudgedByHealth(reason, judged) ?? notOurWriting(reason, spool, node);
}

/**
 * A run judged healthy leaves a drain whose check could not tell of the reason's subject now (a skip or an error
 * there: its link unread, its driver's files gone): "could not tell" is never a pass, so never a reason to resume.
 * Null to go on.
 */
export function notToldNow(reason: string | null, findings: readonly AnyFinding[]): string | null {
  const label = reasonLabel(reason);
  const subject = reasonSubject(reason);
  if (label === null || subject === null) return null;
  const f = findings.find((x) => (x.status === 'skip' || x.status === 'error') && labelOf(x) === label && sanitize(x.subject).replace(/ /g, '') === subject);
  return f ? `left drained: ${label} could not tell of ${subject} now (${f.status} ${f.code}): not resumed on a judgement not made` : null;
}
