// RLIMIT_MEMLOCK of the gate and of slurmd (memlock-limit), read by the shared inventory pass from /proc/<pid>/limits.
// A drill lowers "Max locked memory" in every limits file.
import { memlock } from '../compare/node.js';
import { parseSize } from '../parsers/limits.js';
import { text } from './stage.js';
import { defineArea } from './types.js';

const LIMITS_RE = /^\/proc\/(?:self|\d+)\/limits$/;

export type MemlockFault = { readonly kind: 'memlock'; readonly bytes: number };

export default defineArea<'memlock', MemlockFault>({
  id: 'memlock',
  title: 'locked-memory limit of the gate and of slurmd (what a job inherits)',
  compare: memlock,
  fault: {
    syntax: 'memlock=64K',
    subject: null,
    parse(_subject, value) {
      const s = parseSize(value);
      if (!s.ok || s.value === 'unlimited') return { ok: false, error: 'value must be a size (64K, 8M, 65536)' };
      return { ok: true, value: { kind: 'memlock', bytes: s.value } };
    },
    format: (f) => `memlock=${f.bytes % 1024 === 0 ? `${f.bytes / 1024}K` : f.bytes}`,
    stage: {
      rewrite(f, p, b) {
        if (!LIMITS_RE.test(p)) return b;
        return Buffer.from(text(b).replace(/^(Max locked memory\s+)\S+(\s+)\S+/m, `$1${f.bytes}$2${f.bytes}`));
      },
    },
  },
});
