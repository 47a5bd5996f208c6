// `gdrgate fleet report DIR` (judge a directory of snapshots and spools) and `gdrgate fleet collect` (gather them).
import { UsageError } from '../errors.js';
import type { CollectOptions } from '../fleet/collect-command.js';
import { writeAtomic } from '../host/files.js';
import { redact } from '../host/http.js';
import { progressWriter } from '../fleet/progress.js';
import type { FleetProgress } from '../fleet/read.js';
import type { StatsSource } from '../fleet/report-command.js';
import { exitCode } from '../runner/exit.js';
import { out, outPieces } from './common.js';
import type { FleetReportArgs } from './fleet-flags.js';

/** The extra figure sources the flags name; each is loaded only when asked for. */
export function statsSources(a: { readonly prometheus?: string | undefined; readonly anyInstance?: boolean | undefined }): StatsSource[] {
  const url = a.prometheus;
  if (url === undefined) return [];
  const checkInstance = a.anyInstance !== true;
  // Named without the URL's user and password: the report is shared (its HTML, its textfile), the credentials are not.
  const u = URL.parse(url);
  return [{ name: `prometheus ${u !== null && (u.username || u.password) ? redact(u) : url}`, load: (age, nodeName) => import('../fleet/prometheus.js').then((m) => m.loadPrometheus(url, { timeoutMs: 10_000, checkInstance, age, nodeName })) }];
}

/** Progress on stderr only when it is a terminal; nothing of it reaches the report. */
function progress(): { onProgress?: (p: FleetProgress) => void; finish(): void } {
  if (!process.stderr.isTTY) return { finish: () => undefined };
  const w = progressWriter((s) => void process.stderr.write(s));
  return { onProgress: (p) => w.update(p), finish: () => w.done() };
}

export async function fleetReportCommand(a: FleetReportArgs): Promise<number> {
  if (a.json && a.html !== undefined) throw new UsageError('--json and --html: choose one');
  const { runFleetReport } = await import('../fleet/report-command.js');
  const p = progress();
  let run;
  try {
    run = await runFleetReport({ dir: a.dir, baseline: a.baseline ?? null, ...(a['max-age'] !== undefined ? { maxAgeMs: a['max-age'] } : {}), sources: statsSources({ prometheus: a.prometheus, anyInstance: a['any-instance'] }), ...(p.onProgress ? { onProgress: p.onProgress } : {}) });
  } finally {
    p.finish();
  }
  const r = run.report;
  if (a.html !== undefined) {
    const { renderFleetHtml } = await import('../fleet/html.js');
    writeAtomic(a.html, renderFleetHtml(r));
    process.stderr.write(`gdrgate: wrote ${a.html}\n`);
  }
  if (a.json) {
    // JSON.stringify(r, null, 2) byte for byte, written in pieces: 10,000 nodes are ~30 MB, never held whole.
    const { coalesce, jsonPieces } = await import('../report/json-pieces.js');
    outPieces(coalesce(jsonPieces(r)));
  }
  else {
    const { renderFleetText } = await import('../fleet/text.js');
    out(renderFleetText(r));
  }
  return exitCode(r.exitCode === 0 ? 'ok' : 'unhealthy');
}

/** One srun step runs `gdrgate snapshot --out-dir` on every node (src/fleet/collect-command.ts). */
export async function fleetCollectCommand(a: CollectOptions): Promise<number> {
  const { collectCommand } = await import('../fleet/collect-command.js');
  return exitCode(await collectCommand(a));
}
