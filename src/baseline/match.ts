// NHC-style host patterns: glob (`gpu*`), `/regex/`, Slurm ranges (`gpu[001-064,100]`), `!` negation.

export interface HostPattern {
  readonly source: string;
  readonly negated: boolean;
  test(host: string): boolean;
}

const RANGE_RE = /^\d+(-\d+)?(,\d+(-\d+)?)*$/;

function escape(c: string): string {
  return /[\\^$.*+?()[\]{}|/-]/.test(c) ? '\\' + c : c;
}

/** Throws Error with a message naming the pattern when it cannot be compiled. */
export function compilePattern(source: string): HostPattern {
  const negated = source.startsWith('!');
  const body = negated ? source.slice(1) : source;
  if (body === '') throw new Error(`empty host pattern ${JSON.stringify(source)}`);
  if (body.length > 2 && body.startsWith('/') && body.endsWith('/')) {
    let re: RegExp;
    try {
      re = new RegExp(body.slice(1, -1));
    } catch (e) {
      throw new Error(`invalid regex in host pattern ${JSON.stringify(source)}: ${(e as Error).message}`);
    }
    return { source, negated, test: (h) => re.test(h) };
  }
  let src = '^';
  const ranges: { width: number | null; spans: [number, number][] }[] = [];
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c === '*') src += '.*';
    else if (c === '?') src += '.';
    else if (c === '[') {
      const end = body.indexOf(']', i);
      if (end < 0) throw new Error(`unclosed [ in host pattern ${JSON.stringify(source)}`);
      const inner = body.slice(i + 1, end);
      if (RANGE_RE.test(inner)) {
        // Slurm hostlist: zero-padded bounds fix the width (gpu[001-064] matches gpu007, not gpu7).
        const spans = inner.split(',').map((p) => p.split('-')) as [string, string?][];
        const padded = spans.some(([lo]) => lo.length > 1 && lo.startsWith('0'));
        ranges.push({ width: padded ? spans[0]![0].length : null, spans: spans.map(([lo, hi]) => [Number(lo), Number(hi ?? lo)]) });
        src += '(\\d+)';
      } else {
        if (inner === '' || inner === '!') throw new Error(`empty [] in host pattern ${JSON.stringify(source)}`);
        src += '[' + inner.replace(/^!/, '^').replace(/\\/g, '\\\\') + ']';
      }
      i = end;
    } else src += escape(c);
  }
  const re = new RegExp(src + '$');
  return {
    source,
    negated,
    test(h) {
      const m = re.exec(h);
      if (!m) return false;
      return ranges.every((r, k) => {
        const digits = m[k + 1]!;
        if (r.width !== null && digits.length !== r.width) return false;
        const n = Number(digits);
        return r.spans.some(([lo, hi]) => n >= lo && n <= hi);
      });
    },
  };
}

/** A host matches a list when some positive pattern matches and no negated one does. */
export function matchesAll(patterns: readonly HostPattern[], host: string): boolean {
  return patterns.some((p) => !p.negated && p.test(host)) && !patterns.some((p) => p.negated && p.test(host));
}
