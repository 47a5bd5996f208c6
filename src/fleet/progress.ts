// One status line while a fleet is read (stderr, on a terminal only): nodes read of total, the slowest pending.
import type { FleetProgress } from './read.js';

export function progressLine(p: FleetProgress): string {
  const slow = p.slowest && p.slowest.ms >= 1000 ? `; slowest pending ${p.slowest.node} (${(p.slowest.ms / 1000).toFixed(1)} s)` : '';
  return `gdrgate fleet: ${p.done}/${p.total} nodes read${slow}`;
}

/** A redrawn line, at most every `everyMs`, the last state always; cleared by done(). */
export function progressWriter(write: (s: string) => void, everyMs = 100, now: () => number = Date.now): { update(p: FleetProgress): void; done(): void } {
  let last = -Infinity;
  let shown = false;
  return {
    update(p) {
      const t = now();
      if (t - last < everyMs && p.done < p.total) return;
      last = t;
      shown = true;
      write(`\r\u001b[2K${progressLine(p)}`);
    },
    done() {
      if (shown) write('\r\u001b[2K');
    },
  };
}
