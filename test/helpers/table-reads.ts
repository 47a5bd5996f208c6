// Counts this process's reads of its mount table (/proc/self/mountinfo): every read goes through node:fs's
// readFileSync (src/host/mounts.ts), each counted, then done as it would be; put back at the test's end.
import fs from 'node:fs';
import type { Test } from 'tap';

export const MOUNT_TABLE = '/proc/self/mountinfo';

/** From now until `t` ends: () => how many times the mount table was read. */
export function countTableReads(t: Test): () => number {
  let reads = 0;
  const real = fs.readFileSync;
  fs.readFileSync = function (this: unknown, ...a: Parameters<typeof real>) {
    if (a[0] === MOUNT_TABLE) reads++;
    return real.apply(this, a);
  } as typeof real;
  t.teardown(() => {
    fs.readFileSync = real;
  });
  return () => reads;
}
