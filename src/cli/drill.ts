// `gdrgate drill start|run|stop`: stage one bounded fault on a node, prove the gate's whole chain, clean up.
import { configPath, loadTrustedConfig, trustedFiles, type Config } from '../config.js';
import { nodeName } from '../engine/node.js';
import { ExecaExec, type Exec } from '../host/exec.js';
import { requireTrusted } from '../host/trust.js';
import { DEFAULT_MINUTES, loadDrill, MAX_MINUTES, newDrill, readSpec, removeDrill, writeDrill } from '../drill/file.js';
import { parseFault } from '../drill/fault.js';
import { hasMarker, markReason } from '../drill/marker.js';
import { resumeDrillDrain } from '../drill/recheck.js';
import { renderDrill } from '../drill/report.js';
import { clientPath, isDrained } from '../drill/slurm.js';
import { UsageError } from '../errors.js';
import { drainAction } from '../slurm/ownership.js';
import { PREFIX, sanitize } from '../slurm/reason.js';
import { Scontrol } from '../slurm/scontrol.js';
import { out } from './common.js';
import { drainOwned } from '../slurm/drain.js';
import { exitCode } from '../runner/exit.js';

interface Common {
  readonly config?: string | undefined;
  readonly node?: string | undefined;
}

const nodeOf = (a: Common): string => nodeName(process.env, a.node);
const scontrolOf = (cfg: Config, exec: Exec): Scontrol => new Scontrol(exec, { path: cfg.scontrol, timeoutMs: cfg.scontrolTimeoutMs });

/** Every drill step runs scontrol (and writes the drill file) as root: the prolog's trust, in one place. */
async function trustedConfig(a: Common): Promise<Config> {
  const cfg = await loadTrustedConfig(configPath(a.config));
  requireTrusted(trustedFiles(cfg));
  return cfg;
}

export interface StartArgs extends Common {
  readonly fault: string;
  readonly minutes?: number | undefined;
  readonly force: boolean;
  readonly drain: boolean;
  readonly reservation?: string | undefined;
}

export async function drillStart(a: StartArgs, exec: Exec = new ExecaExec()): Promise<number> {
  const f = parseFault(a.fault);
  if (!f.ok) throw new UsageError(f.error);
  const minutes = a.minutes ?? DEFAULT_MINUTES;
  if (!(minutes > 0 && minutes <= MAX_MINUTES)) throw new UsageError(`--minutes ${minutes}: want more than 0 and at most ${MAX_MINUTES}`);
  const cfg = await trustedConfig(a);
  const node = nodeOf(a);
  const current = loadDrill(cfg.stateDir, node);
  if (current.ok && !a.force) {
    out(`${node}: drill ${current.spec.marker} (${current.spec.fault}) is active until ${current.spec.expiresAt}: stop it first (gdrgate drill stop) or --force`);
    return exitCode('usage');
  }
  const spec = newDrill(node, f.value, minutes, Date.now(), a.reservation);
  const scontrol = scontrolOf(cfg, exec);
  const cur = await scontrol.show(node);
  const state = cur.ok ? cur.node.state : null;
  // Only a node no job can land on by surprise: drained, reserved (MAINT, RESERVED), or drained now for the drill.
  const fenced = state !== null && (isDrained(cur.ok ? cur.node : null) || /(^|\+)(RESERVED|MAINT)(\+|$)/.test(state) || !!a.reservation);
  if (!fenced && a.drain && cur.ok && drainAction(cur.node).act === 'drain') {
    const d = await drainOwned(scontrol, node, markReason(`${PREFIX} drill ${sanitize(spec.fault)}`, spec.marker), cfg.stateDir, cfg.spool);
    if (d.action !== 'drained') {
      out(`${node}: could not drain for the drill: ${d.action}`);
      return exitCode('internal');
    }
  } else if (!fenced && !a.force) {
    out(`${node}: refusing: the node is ${state ?? `in an unknown state (${cur.ok ? '' : cur.why})`}; drain or reserve it for the drill, or pass --drain or --force`);
    return exitCode('usage');
  }
  const file = writeDrill(cfg.stateDir, spec);
  out(`${node}: drill ${spec.marker} armed: ${spec.fault} until ${spec.expiresAt} (${file})`);
  return exitCode('ok');
}

export async function drillRun(a: Common & { readonly json: boolean; readonly stepSeconds?: number | undefined }, exec: Exec = new ExecaExec()): Promise<number> {
  const cfg = await trustedConfig(a);
  // The clients it runs as root beside scontrol (sbatch, squeue, sinfo, scancel) are trusted as scontrol is.
  requireTrusted((['sbatch', 'squeue', 'sinfo', 'scancel'] as const).map((c) => clientPath(cfg.scontrol, c)));
  const node = nodeOf(a);
  const d = loadDrill(cfg.stateDir, node);
  if (!d.ok) {
    out(`${node}: no drill to run: ${d.why}`);
    return exitCode('usage');
  }
  // Interrupted (Ctrl-C, kill, or the admin's session hanging up): the fault goes with us, whatever step the run is at
  // (a SIGKILL leaves it until expiresAt, when every gate ignores it).
  const abort = (sig: NodeJS.Signals): void => {
    removeDrill(cfg.stateDir);
    process.stderr.write(`gdrgate drill run: ${sig}: drill file removed; the node may still be drained with drill=${d.spec.marker} (gdrgate drill stop)\n`);
    process.exit(130);
  };
  process.once('SIGINT', abort).once('SIGTERM', abort).once('SIGHUP', abort);
  const { runDrill } = await import('../drill/run.js');
  const report = await runDrill(cfg, exec, d.spec, { stepMs: (a.stepSeconds ?? 90) * 1000 });
  out(a.json ? JSON.stringify(report, null, 2) : renderDrill(report));
  return exitCode(report.ok ? 'ok' : 'unhealthy');
}

export async function drillStop(a: Common, exec: Exec = new ExecaExec()): Promise<number> {
  const cfg = await trustedConfig(a);
  const node = nodeOf(a);
  const spec = readSpec(cfg.stateDir);
  const removed = removeDrill(cfg.stateDir);
  out(`${node}: ${removed ? `drill file removed${spec?.marker ? ` (drill ${spec.marker}, ${spec.fault})` : ''}` : 'no drill file'}`);
  const cur = await scontrolOf(cfg, exec).show(node);
  if (!cur.ok) {
    out(`${node}: ${cur.why}: not resuming`);
    return exitCode('internal');
  }
  if (!isDrained(cur.node) || !hasMarker(cur.node.reason)) {
    out(`${node}: ${cur.node.state}${cur.node.reason ? ` (${cur.node.reason})` : ''}: no drill drain, left as it is`);
    return exitCode('ok');
  }
  const r = await resumeDrillDrain(cfg, exec, node);
  out(`${node}: ${r.why}`);
  return exitCode(r.result);
}
