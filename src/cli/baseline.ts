// `gdrgate baseline capture` (from a known-good node) and `gdrgate baseline validate FILE`.
import { captureClass } from '../baseline/capture.js';
import { loadBaseline } from '../baseline/load.js';
import type { Host } from '../host/host.js';
import { hostname } from 'node:os';
import { configPath, loadConfig } from '../config.js';
import { ExecaExec } from '../host/exec.js';
import type { Baseline, BaselineEnvelope } from '../model/baseline.js';
import type { Inventory } from '../model/inventory.js';
import { UsageError } from '../errors.js';
import { readNode } from '../engine/evaluate.js';
import { out } from './common.js';

/** A VM's CPUs carry the `hypervisor` flag (arch/x86 X86_FEATURE_HYPERVISOR). */
async function detectPlatform(host: Host): Promise<'bare-metal' | 'virtualized'> {
  const r = await host.readText('/proc/cpuinfo');
  return r.ok && /^flags\s*:.*\bhypervisor\b/m.test(r.value) ? 'virtualized' : 'bare-metal';
}

interface CaptureArgs {
  readonly root: string;
  readonly class: string;
  readonly match?: string[] | undefined;
  readonly platform?: string | undefined;
  readonly withProbes?: boolean | undefined;
  readonly config?: string | undefined;
}

/** `--with-probes`: the config's probe settings, run on this node; the bands carry the recipes they were measured with. */
async function probeBands(a: CaptureArgs, inv: Inventory, warnings: string[]): Promise<BaselineEnvelope[]> {
  const cfg = await loadConfig(configPath(a.config));
  if (cfg.probes === null) throw new UsageError(`--with-probes: ${configPath(a.config)} has no "probes" section`);
  const { captureEnvelopes } = await import('../epilog/envelope.js');
  const r = await captureEnvelopes(inv, cfg.probes, new ExecaExec(), inv.hostname ?? hostname());
  warnings.push(...r.warnings);
  return r.envelopes;
}

export async function captureCommand(a: CaptureArgs): Promise<number> {
  const { host, inv } = await readNode({ root: a.root, baseline: null, node: null, trust: [] });
  const platform = a.platform === 'bare-metal' || a.platform === 'virtualized' ? a.platform : await detectPlatform(host);
  const probeNotes: string[] = [];
  const probes = a.withProbes ? await probeBands(a, inv, probeNotes) : undefined;
  const { cls, warnings } = captureClass(inv, {
    name: a.class,
    match: a.match?.length ? a.match : [inv.hostname ?? '*'],
    platform,
    at: new Date().toISOString(),
    ...(probes ? { probes } : {}),
  });
  for (const w of [...warnings, ...probeNotes]) process.stderr.write(`gdrgate: note: ${w}\n`);
  const b: Baseline = { version: 1, classes: [cls] };
  out(JSON.stringify(b, null, 2));
  return 0;
}

export async function validateCommand(a: { file: string }): Promise<number> {
  const b = await loadBaseline(a.file);
  out(`${a.file}: valid, ${b.classes.length} class(es): ${b.classes.map((c) => `${c.name} [${c.match.join(' ')}] ${c.platform}, ${c.devices.length} devices`).join('; ')}`);
  return 0;
}
