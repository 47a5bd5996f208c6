// A path asked of a Host every way it can be (not a test): the answers by method, so that a test compares them all
// with one expected answer.
import type { Host } from '../../src/host/host.js';

export const READS = ['readText', 'readBytes', 'list', 'lstat', 'stat', 'readLink', 'realPath'] as const;

/** Each of READS asked of `p`: method → its answer. */
export async function answers(h: Host, p: string): Promise<Record<(typeof READS)[number], unknown>> {
  const got = await Promise.all(READS.map((m) => h[m](p)));
  return Object.fromEntries(READS.map((m, i) => [m, got[i]])) as Record<(typeof READS)[number], unknown>;
}

/** What answers() should be when every method gives `one`. */
export const every = (one: unknown): Record<(typeof READS)[number], unknown> => Object.fromEntries(READS.map((m) => [m, one])) as Record<(typeof READS)[number], unknown>;
