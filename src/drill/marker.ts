// The drill marker on a drain reason: ` drill=<marker>` at the end, inside the 255 bytes buildReason keeps.
import { MAX_REASON_BYTES, sanitize } from '../slurm/reason.js';

export const markerSuffix = (marker: string): string => ` drill=${marker}`;

/** What hasMarker finds, and all a drill file may hold (drill/file.ts): never a space, never a second word. */
const MARKER_RE = /^[0-9a-f]{4,32}$/;

/**
 * Appends the marker to a reason from buildReason/reasonFor. If it would pass 255 bytes, the text before the
 * `; +N more job=<id>` tail gives way (as buildReason itself cuts), so the check name, the job and the marker all stay.
 * A marker hasMarker could not find is not appended: the drill then sees an unmarked drain, never a mangled reason.
 */
export function markReason(reason: string, marker: string): string {
  if (!MARKER_RE.test(marker)) return reason;
  const suffix = markerSuffix(marker);
  if (reason.length + suffix.length <= MAX_REASON_BYTES && reason === sanitize(reason)) return reason + suffix;
  // The tail is at most ~45 characters: look for it in the last 64 only (linear whatever the reason's length).
  const tail = /(?:; \+\d+ more)?(?: job=\S{1,32})?$/.exec(reason.slice(-64))![0];
  const body = sanitize(reason.slice(0, reason.length - tail.length)).replace(/\.\.\.$/, '');
  const room = MAX_REASON_BYTES - suffix.length - tail.length;
  return (body.length <= room ? body : body.slice(0, room - 3) + '...') + tail + suffix;
}

/** The marker a reason ends with (` drill=<marker>`), or null. */
export function markerOf(reason: string | null): string | null {
  return reason === null ? null : (/ drill=([0-9a-f]{4,32})$/.exec(reason)?.[1] ?? null);
}

/** A reason written while drill `marker` was active. */
export function hasMarker(reason: string | null, marker?: string): boolean {
  const m = markerOf(reason);
  return m !== null && (marker === undefined || m === marker);
}
