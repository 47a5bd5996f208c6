// Bandwidth across the fleet from the Prometheus that scrapes every node's epilog textfile through node_exporter:
// three instant queries on the HTTP API (GET /api/v1/query), read under one deadline and a size cap, parsed strictly.
import { HttpError, httpGet, redact } from '../host/http.js';
import { SourceError } from './source-error.js';
import { UsageError } from '../errors.js';
import { parseQueryAnswer, PromAnswerError } from './prom-answer.js';
import type { AgeRule } from './age.js';
import { BW_METRIC, COUNT_METRIC, TS_METRIC, SeriesError, statsFromSeries, type FleetStats, type StatWindow } from './series.js';

/** Largest answer read per query: 1,000 nodes x 16 paths x 2 stats come to about 8 MB of JSON. */
export const MAX_ANSWER_BYTES = 64 << 20;

export interface PrometheusOptions {
  readonly timeoutMs: number;
  /** Evaluation time of the queries, ms since the epoch (the API's `time`); default: Prometheus's now. */
  readonly now?: number;
  readonly window?: StatWindow;
  readonly maxBytes?: number;
  /** false: take a series for the node it names whatever its instance (series.ts foreignInstance). */
  readonly checkInstance?: boolean;
  /** Judge each path's age by its newest sample's time (series.ts); without it, no age is judged. */
  readonly age?: AgeRule;
  /** The node a `node` label is filed under (the directory's name for that host: report-command's hostNamer). */
  readonly nodeName?: (label: string) => string;
}

/** The server could not be asked, or its answer is not one Prometheus gives. The message says which. */
export class PrometheusError extends SourceError {
  override readonly name = 'PrometheusError';
}

/** The PromQL selectors, one per metric: only the p50 and min stats, only the window asked for; each path's newest sample time. */
export function queries(window: StatWindow): readonly string[] {
  return [`${BW_METRIC}{window="${window}",stat=~"p50|min"}`, `${COUNT_METRIC}{window="${window}"}`, `${TS_METRIC}{recipe!=""}`];
}

/** The query endpoint under `base`, which may carry a path prefix (`http://host/prometheus/`). */
export function queryUrl(base: string, query: string, now?: number): URL {
  let u: URL;
  try {
    u = new URL(base);
  } catch {
    throw new UsageError(`--prometheus ${JSON.stringify(base.slice(0, 200))} is not a URL`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new UsageError(`--prometheus ${redact(u)}: only http and https URLs`);
  if (u.search || u.hash) throw new UsageError(`--prometheus ${redact(u)}: give the server's base URL, without a query or fragment`);
  const q = new URL(`${u.pathname.replace(/\/+$/, '')}/api/v1/query`, u);
  q.searchParams.set('query', query);
  if (now !== undefined) q.searchParams.set('time', (now / 1000).toFixed(3));
  return q;
}

async function ask(url: URL, source: string, o: PrometheusOptions) {
  const a = await httpGet(url, { timeoutMs: o.timeoutMs, maxBytes: o.maxBytes ?? MAX_ANSWER_BYTES, accept: 'application/json' });
  if (a.status !== 200) {
    // Prometheus answers 400/422/503 with its JSON error envelope: its message is the clearest.
    let detail: string;
    try {
      parseQueryAnswer(a.body, source);
      detail = 'a success envelope with an error status';
    } catch (e) {
      detail = e instanceof PromAnswerError && e.message.startsWith('Prometheus answered') ? e.message : JSON.stringify(a.body.slice(0, 200));
    }
    throw new PrometheusError(source, `HTTP ${a.status}: ${detail}`);
  }
  if (!/^application\/json\b/i.test(a.contentType)) throw new PrometheusError(source, `the answer is ${JSON.stringify(a.contentType.slice(0, 80))}, not application/json (is this Prometheus's base URL?)`);
  return parseQueryAnswer(a.body, source);
}

export async function loadPrometheus(url: string, opts: PrometheusOptions): Promise<FleetStats> {
  const window = opts.window ?? 'all';
  const urls = queries(window).map((q) => queryUrl(url, q, opts.now));
  const source = `prometheus:${redact(new URL(url))}`;
  try {
    const answers = await Promise.all(urls.map((u) => ask(u, source, opts)));
    return statsFromSeries(answers.flat(), window, opts.checkInstance ?? true, opts.age, opts.nodeName);
  } catch (e) {
    if (e instanceof PrometheusError || e instanceof UsageError) throw e;
    if (e instanceof HttpError || e instanceof PromAnswerError || e instanceof SeriesError) throw new PrometheusError(source, e.message, { cause: e });
    throw e;
  }
}
