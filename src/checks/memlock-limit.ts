// memlock-limit: RLIMIT_MEMLOCK of this process and slurmd at or above the class minimum (unlimited by default).
import { formatBytes } from '../parsers/limits.js';
import type { Finding } from '../model/finding.js';
import { defineCheck, finder } from './types.js';
import WORDING from './memlock-limit.json' with { type: 'json' };

const f = finder('memlock-limit', WORDING.codes);

const atLeast = (v: number | 'unlimited', min: number | 'unlimited'): boolean =>
  v === 'unlimited' || (min !== 'unlimited' && v >= min);

export default defineCheck('memlock-limit', WORDING, {
  run({ inv, baseline }): Finding[] {
    const min = baseline?.memlockMin ?? 'unlimited';
    const want = `>= ${formatBytes(min)}`;
    return inv.memlock.map((p) => {
      const subject = typeof p.pid === 'number' ? `${p.who}[${p.pid}]` : p.who;
      if (p.limit.state === 'unknown') return f('memlock-unknown', 'skip', subject, `memlock not readable: ${p.limit.why}`);
      const { soft, hard } = p.limit.value;
      const got = soft === hard ? formatBytes(soft) : `${formatBytes(soft)} (hard ${formatBytes(hard)})`;
      // The soft limit is what registration meets; a low hard limit caps what a job can raise it to.
      if (!atLeast(soft, min) || !atLeast(hard, min)) return f('memlock-low', 'fail', subject, `memlock ${got}`, want, got);
      return f('memlock-ok', 'pass', subject, `memlock ${got}`, want, got);
    });
  },
});
