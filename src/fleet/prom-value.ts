// Pure: one sample value as Prometheus writes it (Go's strconv float formatting: `1.2e+10`, `NaN`, `+Inf`, `-Inf`).
const NUMBER_RE = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/** The value, NaN or ±Infinity for Prometheus's own spellings, null for anything else (hex, blanks, `1,5`). */
export function parsePromFloat(text: string): number | null {
  if (text === 'NaN') return NaN;
  if (text === '+Inf' || text === 'Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  if (text.length > 64 || !NUMBER_RE.test(text)) return null;
  return Number(text);
}

/** A label name as Prometheus allows it (data model: `[a-zA-Z_][a-zA-Z0-9_]*`). */
export const LABEL_NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** A metric name (data model: `[a-zA-Z_:][a-zA-Z0-9_:]*`). */
export const METRIC_NAME_RE = /^[A-Za-z_:][A-Za-z0-9_:]*$/;
