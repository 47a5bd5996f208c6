// memlock-limit: RLIMIT_MEMLOCK of this process and slurmd at or above the class minimum (unlimited by default).
import { formatBytes } from '../parsers/limits.js';
import { type Check, type Codes, defineCheck, finder } from './types.js';

/** Every code this check makes: what it tells, what to do, the layer that owns it (the field matrix). */
const CODES = {
  'memlock-ok': { tells: 'Locked-memory limit is high enough to register RDMA buffers.', do: 'None.', layer: 'scheduler' },
  'memlock-low': { tells: 'RLIMIT_MEMLOCK too low: RDMA memory registration fails or NCCL falls back to slow paths.', do: 'Set LimitMEMLOCK=infinity for slurmd and PropagateResourceLimitsExcept=MEMLOCK in slurm.conf; check /etc/security/limits.conf.', layer: 'scheduler' },
  'memlock-unknown': { tells: 'The locked-memory limit could not be read.', do: 'Run on the node with access to /proc.', layer: 'scheduler' },
} as const satisfies Codes;

const f = finder('memlock-limit', CODES);

const atLeast = (v: number | 'unlimited', min: number | 'unlimited'): boolean =>
  v === 'unlimited' || (min !== 'unlimited' && v >= min);

const check: Check<'memlock-limit', typeof CODES> = defineCheck({
  id: 'memlock-limit',
  title: 'Locked-memory limit (RLIMIT_MEMLOCK)',
  reasonLabel: 'memlock',
  codes: CODES,
  docs: 'docs/checks/memlock-limit.md',
  run({ inv, baseline }) {
    const min = baseline?.memlockMin ?? 'unlimited';
    const want = `>= ${formatBytes(min)}`;
    return inv.memlock.map((p) => {
      const subject = p.pid !== 'self' ? `${p.who}[${p.pid}]` : p.who;
      if (p.limit.state === 'unknown') return f('memlock-unknown', 'skip', subject, `memlock not readable: ${p.limit.why}`);
      const { soft, hard } = p.limit.value;
      const got = soft === hard ? formatBytes(soft) : `${formatBytes(soft)} (hard ${formatBytes(hard)})`;
      // The soft limit is what registration meets; a low hard limit caps what a job can raise it to.
      if (!atLeast(soft, min) || !atLeast(hard, min)) return f('memlock-low', 'fail', subject, `memlock ${got}`, want, got);
      return f('memlock-ok', 'pass', subject, `memlock ${got}`, want, got);
    });
  },
});

export default check;
