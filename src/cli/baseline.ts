// `gdrgate baseline capture` (from a known-good node) and `gdrgate baseline validate FILE`.
import { nul } from '../model/fact.js';
import { captureClass } from '../baseline/capture.js';
import { referenceFaults } from '../baseline/reference-faults.js';
import { BASELINE_LIMITS, overLimits } from '../baseline/limits.js';
import { checkBaseline, loadBaseline } from '../baseline/load.js';
import { compilePattern } from '../baseline/match.js';
import { ConfigError } from '../errors.js';
import type { Host } from '../host/host.js';
import { hostname } from 'node:os';
import { configPath, loadConfig } from '../config.js';
import { ExecaExec } from '../host/exec.js';
import type { Baseline, BaselineEnvelope } from '../model/baseline.js';
import type { Inventory } from '../model/inventory.js';
import { UsageError } from '../errors.js';
import { judgeUniversal, readNode } from '../engine/evaluate.js';
import { exitCode } from '../runner/exit.js';
import { out } from './common.js';

/** A VM's CPUs carry the `hypervisor` flag (arch/x86 X86_FEATURE_HYPERVISOR). */
async function detectPlatform(host: Host): Promise<'bare-metal' | 'virtualized'> {
  const r = await host.readText('/proc/cpuinfo');
  return r.ok && /^flags\s*:.*\bhypervisor\b/m.test(r.value) ? 'virtualized' : 'bare-metal';
}

interface CaptureArgs {
  readonly root: string;
  /** A fleet directory: the class from its majority (fleet/capture.ts) instead of one node. */
  readonly fromFleet?: string | undefined;
  readonly fromClass?: string | undefined;
  readonly class: string;
  readonly match?: string[] | undefined;
  readonly platform?: string | undefined;
  readonly withProbes?: boolean | undefined;
  readonly config?: string | undefined;
  readonly allowEmpty?: boolean | undefined;
}

/** `--with-probes`: the config's probe settings, run on this node; the bands carry the recipes they were measured with. */
async function probeBands(a: CaptureArgs, host: Host, inv: Inventory, warnings: string[]): Promise<BaselineEnvelope[]> {
  const cfg = await loadConfig(configPath(a.config));
  if (cfg.probes === null) throw new UsageError(`--with-probes: ${configPath(a.config)} has no "probes" section`);
  const { captureEnvelopes } = await import('../epilog/envelope.js');
  const r = await captureEnvelopes(host, inv, cfg.probes, new ExecaExec(), nul(inv.hostname) ?? hostname(), cfg.stateDir);
  warnings.push(...r.warnings);
  return r.envelopes;
}

export async function captureCommand(a: CaptureArgs): Promise<number> {
  // A pattern validate would refuse is refused here, before anything is read.
  for (const p of a.match ?? []) {
    try {
      compilePattern(p);
    } catch (e) {
      throw new UsageError(`--match ${p}: ${(e as Error).message}`);
    }
  }
  if (a.fromFleet !== undefined) return captureFromFleetCommand(a, a.fromFleet);
  const { host, inv } = await readNode({ root: a.root, baseline: null, node: null, trust: [] });
  const platform = a.platform === 'bare-metal' || a.platform === 'virtualized' ? a.platform : await detectPlatform(host);
  const probeNotes: string[] = [];
  const probes = a.withProbes ? await probeBands(a, host, inv, probeNotes) : undefined;
  const { cls, warnings } = captureClass(inv, {
    name: a.class,
    match: a.match?.length ? a.match : [nul(inv.hostname) ?? '*'],
    platform,
    at: new Date().toISOString(),
    ...(probes ? { probes } : {}),
    ...(a.allowEmpty ? { allowEmpty: true } : {}),
  });
  for (const w of [...warnings, ...probeNotes, ...referenceFaults(judgeUniversal(inv, null))]) process.stderr.write(`gdrgate: note: ${w}\n`);
  const b: Baseline = { version: 1, classes: [cls] };
  const text = JSON.stringify(b, null, 2);
  // What validate and every load would refuse is never written (limits.ts: the same numbers).
  const over = overLimits(b, Buffer.byteLength(text) + 1);
  if (over.length) throw new ConfigError(`baseline capture: the class would be ${over.join('; ')}: more than a baseline may hold (${BASELINE_LIMITS.bytes} bytes)`);
  // Only what `baseline validate` (and so every prolog) accepts is ever written: a refused class turns the gate off.
  await checkBaseline(JSON.parse(text), 'baseline capture (not written)');
  out(text);
  return exitCode('ok');
}

/** Prints the class; the nodes that disagreed with the majority go to stderr, each with what it differs on. */
async function captureFromFleetCommand(a: CaptureArgs, dir: string): Promise<number> {
  const { runFleetReport } = await import('../fleet/report-command.js');
  const { captureFromFleet, cleanReference, pickClass } = await import('../fleet/capture.js');
  const run = await runFleetReport({ dir, baseline: null });
  const refName = cleanReference(run, pickClass(run, a.fromClass));
  const ref = run.nodes.find((n) => n.node === refName);
  const platform = a.platform === 'bare-metal' || a.platform === 'virtualized' ? a.platform : ref ? await detectPlatform((await readNode({ root: ref.file, baseline: null, node: ref.node, trust: [] })).host) : 'bare-metal';
  const c = await captureFromFleet(run, { name: a.class, fromClass: a.fromClass, match: a.match, platform, at: new Date().toISOString() });
  for (const w of c.warnings) process.stderr.write(`gdrgate: note: ${w}\n`);
  process.stderr.write(`gdrgate: class ${c.cls.name} from the majority of ${c.nodes} nodes (reference ${c.reference}); ${c.disagreed.length} disagreed:\n`);
  for (const d of c.disagreed)
    process.stderr.write(`gdrgate:   ${d.node}: ${[...d.differences.map((x) => `${x.area} ${x.subject} ${x.a} (majority ${x.b})`), ...(d.rails ? [`${d.rails} rail(s) outside the band`] : [])].join('; ')}\n`);
  const b: Baseline = { version: 1, classes: [c.cls] };
  const text = JSON.stringify(b, null, 2);
  const over = overLimits(b, Buffer.byteLength(text) + 1);
  if (over.length) throw new ConfigError(`baseline capture --from-fleet: the class would be ${over.join('; ')}: more than a baseline may hold (${BASELINE_LIMITS.bytes} bytes)`);
  // Only what `baseline validate` (and so every prolog) accepts is ever written: a refused class turns the gate off.
  await checkBaseline(JSON.parse(text), 'baseline capture --from-fleet (not written)');
  out(text);
  return exitCode('ok');
}

export async function validateCommand(a: { file: string }): Promise<number> {
  const b = await loadBaseline(a.file);
  // Valid, but a node judged against it checks nothing: said, not refused (a hand-written class may mean it).
  for (const c of b.classes.filter((k) => k.devices.length === 0))
    process.stderr.write(`gdrgate: warning: ${a.file}: class ${JSON.stringify(c.name)} expects no devices (no GPU, no RDMA adapter): a node judged against it checks nothing\n`);
  for (const c of b.classes.filter((k) => k.paths.length === 0 && k.devices.some((d) => d.role === 'gpu') && k.devices.some((d) => d.role === 'nic')))
    process.stderr.write(`gdrgate: warning: ${a.file}: class ${JSON.stringify(c.name)} has GPUs and RDMA adapters but no GPU↔NIC path: topology-distance judges none of them\n`);
  out(`${a.file}: valid, ${b.classes.length} class(es): ${b.classes.map((c) => `${c.name} [${c.match.join(' ')}] ${c.platform}, ${c.devices.length} devices`).join('; ')}`);
  return 0;
}
