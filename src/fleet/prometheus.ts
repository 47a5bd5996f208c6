// Placeholder until the Prometheus loader lands (gdrgate_* series through the HTTP query API): same signature.
import { UsageError } from '../errors.js';
import type { NodeMissing, NodePathStat } from './types.js';

export interface PrometheusOptions {
  readonly timeoutMs?: number;
}

export async function loadPrometheus(url: string, _opts: PrometheusOptions = {}): Promise<{ stats: NodePathStat[]; missing: NodeMissing[] }> {
  throw new UsageError(`--prometheus ${url}: the Prometheus loader is not built in this version`);
}
