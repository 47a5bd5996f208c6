// Pure: the body of a Prometheus instant query (`GET /api/v1/query`) as series, or a clear error. The documented
// envelope: {"status":"success","data":{"resultType":"vector","result":[{"metric":{...},"value":[ts,"v"]}]}};
// on failure {"status":"error","errorType":"...","error":"..."}. Anything else is refused, never guessed at.
import { LABEL_NAME_RE, METRIC_NAME_RE, parsePromFloat } from './prom-value.js';
import type { Series } from './series.js';

/** More series than every fleet of ours exports for one query (1,000 nodes x 16 paths x 2 windows x 5 stats). */
export const MAX_SERIES = 1_000_000;
/** Labels on one series: ours carry 9, node_exporter and relabelling add a few. */
export const MAX_LABELS = 64;
const MAX_LABEL_CHARS = 4096;

/** The answer is not what Prometheus's query API returns. */
export class PromAnswerError extends Error {
  override readonly name = 'PromAnswerError';
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const clip = (s: string): string => JSON.stringify(s.length > 200 ? `${s.slice(0, 200)}…` : s);

function labelsOf(metric: unknown, i: number): Map<string, string> {
  if (!isObj(metric)) throw new PromAnswerError(`result[${i}].metric is not an object`);
  const keys = Object.keys(metric);
  if (keys.length > MAX_LABELS) throw new PromAnswerError(`result[${i}].metric has ${keys.length} labels (at most ${MAX_LABELS})`);
  const m = new Map<string, string>();
  for (const k of keys) {
    const v = metric[k];
    if (!LABEL_NAME_RE.test(k)) throw new PromAnswerError(`result[${i}].metric: label name ${clip(k)} is not a Prometheus label name`);
    if (typeof v !== 'string') throw new PromAnswerError(`result[${i}].metric.${k} is not a string`);
    if (v.length > MAX_LABEL_CHARS) throw new PromAnswerError(`result[${i}].metric.${k} is ${v.length} characters long (at most ${MAX_LABEL_CHARS})`);
    m.set(k, v);
  }
  return m;
}

/** `source` is put on every series (where it came from, for the report). */
export function parseQueryAnswer(body: string, source: string): Series[] {
  let doc: unknown;
  try {
    doc = JSON.parse(body);
  } catch (e) {
    throw new PromAnswerError(`not JSON (${(e as Error).message}): ${clip(body.slice(0, 120))}`);
  }
  if (!isObj(doc)) throw new PromAnswerError('the answer is not a JSON object');
  if (doc.status === 'error') {
    const [t, e] = [doc.errorType, doc.error];
    throw new PromAnswerError(`Prometheus answered an error${typeof t === 'string' ? ` (${clip(t)})` : ''}: ${typeof e === 'string' ? clip(e) : 'no message'}`);
  }
  if (doc.status !== 'success') throw new PromAnswerError(`status is ${clip(String(doc.status))}, not "success"`);
  const data = doc.data;
  if (!isObj(data)) throw new PromAnswerError('data is not an object');
  if (data.resultType !== 'vector') throw new PromAnswerError(`resultType is ${clip(String(data.resultType))}, not "vector" (an instant query of a selector)`);
  const result = data.result;
  if (!Array.isArray(result)) throw new PromAnswerError('data.result is not an array');
  if (result.length > MAX_SERIES) throw new PromAnswerError(`${result.length} series (at most ${MAX_SERIES})`);
  return result.map((r: unknown, i): Series => {
    if (!isObj(r)) throw new PromAnswerError(`result[${i}] is not an object`);
    const labels = labelsOf(r.metric, i);
    const name = labels.get('__name__');
    if (name === undefined || !METRIC_NAME_RE.test(name)) throw new PromAnswerError(`result[${i}] has no valid __name__`);
    const v = r.value;
    if (!Array.isArray(v) || v.length !== 2) throw new PromAnswerError(`result[${i}].value is not [time, "value"]`);
    const [ts, text] = v as [unknown, unknown];
    if (typeof ts !== 'number' || !Number.isFinite(ts)) throw new PromAnswerError(`result[${i}].value[0] is not a Unix time`);
    if (typeof text !== 'string') throw new PromAnswerError(`result[${i}].value[1] is not a string`);
    const value = parsePromFloat(text);
    if (value === null) throw new PromAnswerError(`result[${i}].value[1] ${clip(text)} is not a number`);
    labels.delete('__name__');
    return { name, labels, value, source };
  });
}
