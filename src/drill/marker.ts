// The drill marker on a drain reason: ` drill=<marker>` at the end, inside the 255 bytes buildReason keeps.
import { MAX_REASON_BYTES } from '../slurm/reason.js';

export const markerSuffix = (marker: string): string => ` drill=${marker}`;

/**
 * Appends the marker to a reason from buildReason/reasonFor. If it would pass 255 bytes, the text before the
 * `; +N more job=<id>` tail gives way (as buildReason itself cuts), so the check name, the job and the marker all stay.
 */
export function markReason(reason: string, marker: string): string {
  const suffix = markerSuffix(marker);
  if (reason.length + suffix.length <= MAX_REASON_BYTES) return reason + suffix;
  const tail = /(?:; \+\d+ more)?(?: job=\S+)?$/.exec(reason)![0];
  const body = reason.slice(0, reason.length - tail.length).replace(/\.\.\.$/, '');
  return body.slice(0, MAX_REASON_BYTES - suffix.length - tail.length - 3) + '...' + tail + suffix;
}

/** A reason written while drill `marker` was active. */
export function hasMarker(reason: string | null, marker?: string): boolean {
  if (reason === null) return false;
  const m = / drill=([0-9a-f]{4,32})$/.exec(reason);
  return m !== null && (marker === undefined || m[1] === marker);
}
