// NHC's rules of ownership: write a drain only on a node we may touch, resume only our own drains.
import { isDrainedOrDown, type NodeState } from '../parsers/scontrol.js';
import { markerOf } from '../drill/marker.js';
import { isOurs, reasonLabel } from './reason.js';

export type DrainAction =
  | { readonly act: 'drain' }
  | { readonly act: 'keep'; readonly why: string };

/** `current` null: the state could not be read, so nothing is written (DESIGN §5). */
export function drainAction(current: NodeState | null): DrainAction {
  if (current === null) return { act: 'keep', why: 'node state unknown: not writing a reason' };
  if (!isDrainedOrDown(current.state)) return { act: 'drain' };
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
