// `baseline capture --with-probes`: run the epilog's probes on a known-good node and turn their samples into bands,
// each with the exact recipe it was measured with (DESIGN §4).
import { UsageError } from '../errors.js';
import type { Exec } from '../host/exec.js';
import type { Host } from '../host/host.js';
import { untrustedReason } from '../host/trust.js';
import type { BaselineEnvelope } from '../model/baseline.js';
import type { Inventory } from '../model/inventory.js';
import type { ProbesConfig } from '../probes/config.js';
import { planProbes } from '../probes/plan.js';
import { runProbes } from '../probes/run.js';
import { subjectOf } from '../probes/types.js';
import type { Sample } from '../samples/sample.js';
import { nearestRank } from '../samples/stats.js';
import { jobsText, otherJobs } from './busy.js';
import { devicesHeld } from './holders.js';
import { portTraffic } from './port-traffic.js';
import { busyPorts, untoldText } from './port-traffic-rule.js';

const round2 = (v: number): number => Math.round(v * 100) / 100;

/** Pure: one envelope per (probe, path, recipe), bands as fractions of the median of the runs. */
export function envelopesFrom(samples: readonly Sample[], ratios: { readonly warnRatio: number; readonly failRatio: number }): BaselineEnvelope[] {
  const groups = new Map<string, Sample[]>();
  for (const s of samples) {
    const id = [s.probe, s.gpu ?? '', s.nic ?? '', s.direction, s.recipeHash, s.unit].join('\u0000');
    groups.set(id, [...(groups.get(id) ?? []), s]);
  }
  return [...groups.values()].map((g) => {
    const s = g[0]!;
    const p50 = nearestRank(Float64Array.from(g, (x) => x.value).sort(), 50) ?? 0;
    return {
      probe: s.probe, gpu: s.gpu, nic: s.nic, direction: s.direction, recipe: s.recipe, unit: s.unit,
      p50, samples: g.length, warnBelow: round2(p50 * ratios.warnRatio), failBelow: round2(p50 * Math.min(ratios.failRatio, ratios.warnRatio)),
    };
  });
}

/** Runs every planned probe `probes.capture.runs` times, each with its own timeout (no epilog budget here). */
export async function captureEnvelopes(host: Host, inv: Inventory, p: ProbesConfig, exec: Exec, node: string, stateDir: string): Promise<{ envelopes: BaselineEnvelope[]; warnings: string[] }> {
  const units = planProbes(inv, p);
  const warnings: string[] = units.length ? [] : ['--with-probes: nothing to probe (no RDMA device with a PCI function, or no tool configured)'];
  // Nor beside other jobs, or a process that holds a probed GPU or adapter: the Epilog's own looks (busy.ts, holders.ts).
  const others = await otherJobs(stateDir, null, () => Promise.resolve(host));
  if (others.length) throw new UsageError(`--with-probes: other jobs run on this node (${jobsText(others)}): bands measured now would be too low; nothing written. Capture on a node no job runs on (drained, or reserved)`);
  const held = units.length ? await devicesHeld(host, units, process.pid) : null;
  if (held && !held.probe) throw new UsageError(`--with-probes: ${held.why}: ${held.kind === 'held' ? 'bands measured now would be too low' : 'an Epilog would not probe now'}; nothing written`);
  // Bands measured beside traffic no process holds a device for are low, and every later Epilog is judged against
  // them: none captured then (the Epilog's own look, port-traffic.ts, on the same ports).
  const traffic = await portTraffic(host, inv, units, p.quiet);
  if (traffic && !traffic.probe) throw new UsageError(`--with-probes: ${busyPorts(traffic)}: bands measured now would be too low; nothing written. Capture when the adapters are quiet (probes.quiet.windowMs 0 skips this look)`);
  const untold = traffic ? untoldText(traffic) : null;
  if (untold) warnings.push(`--with-probes: ${untold}`);
  const samples: Sample[] = [];
  const uid = process.getuid?.() ?? 0;
  for (let run = 0; run < p.capture.runs; run++) {
    const r = await runProbes(units, { exec, budgetMs: 24 * 3_600_000, cursor: 0, ctx: { node, job: null, now: Date.now }, untrusted: (f) => untrustedReason(f, uid) });
    for (const o of r.outcomes) {
      if (o.kind === 'ok') samples.push(...o.samples);
      else if (run === 0 || o.kind === 'failed') warnings.push(`${o.spec.probe} ${subjectOf(o.spec)}: ${o.kind === 'failed' ? `run ${run + 1} failed: ${o.why}` : o.why}; no band from this run`);
    }
  }
  return { envelopes: envelopesFrom(samples, p.capture), warnings };
}
