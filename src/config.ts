// The gate's configuration file: defaults, schema validation, and where it is looked for.
import path from 'node:path';
import { readJsonFile } from './host/json-file.js';
import { ConfigError } from './errors.js';
import { requireTrusted, untrustedReason } from './host/trust.js';
import { probesConfig, type ProbesConfig, type ProbesConfigInput } from './probes/config.js';
import type { Policy } from './runner/policy.js';
import { validatorFor } from './schema.js';

export interface Config {
  readonly baseline: string;
  readonly root: string;
  readonly scontrol: string;
  readonly scontrolTimeoutMs: number;
  /** Absolute path of srun, for `fleet collect`. */
  readonly srun: string;
  readonly logFile: string | undefined;
  readonly deadlineMs: number;
  readonly onConfigError: Policy;
  readonly onInternalError: Policy;
  readonly slurmdPidFiles: readonly string[] | undefined;
  /** Slurm's gres.conf, compared with sysfs by job-placement; undefined: the one slurmd reads, beside SLURM_CONF (inventory/gres-path.ts). */
  readonly gresConf: string | undefined;
  readonly stateDir: string;
  readonly spool: string;
  readonly checks: readonly string[] | undefined;
  readonly resumeWhenHealthy: boolean;
  /** Epilog bandwidth probes; null: the epilog only cleans per-job state. */
  readonly probes: ProbesConfig | null;
}

export const DEFAULT_CONFIG_PATH = '/etc/gdrgate/config.json';

/**
 * deadlineMs: the whole run, with margin below Slurm's MessageTimeout (default 10 s; slurm.conf(5): a Prolog "is
 * expected to complete execution quickly (in less time than MessageTimeout)") and far below the snippet's
 * PrologEpilogTimeout (60 s). scontrolTimeoutMs: one call, above the slowest failure that still answers (munge
 * down: ~2.5 s); a drain is two (show, then update), every call cut to what is left of the deadline. Why these
 * values: docs/deadline.md.
 */
export const DEFAULTS = {
  root: '/',
  scontrol: '/usr/bin/scontrol',
  scontrolTimeoutMs: 3000,
  deadlineMs: 6000,
  onConfigError: 'open',
  onInternalError: 'open',
  stateDir: '/run/gdrgate',
  spool: '/var/lib/gdrgate',
  resumeWhenHealthy: true,
  srun: '/usr/bin/srun',
} as const;

export function configPath(flag: string | undefined): string {
  return flag ?? process.env.GDRGATE_CONFIG ?? DEFAULT_CONFIG_PATH;
}

/** Whether a config was named, by --config or $GDRGATE_CONFIG (one name, two ways), rather than defaulted. */
export function configNamed(flag: string | undefined): boolean {
  return flag !== undefined || process.env.GDRGATE_CONFIG !== undefined;
}

export async function loadConfig(file: string): Promise<Config> {
  const data = await readJsonFile(file, 'config');
  const errs = (await validatorFor('config'))(data);
  if (errs.length) throw new ConfigError(`${file}: ${errs.join('; ')}`);
  const c = data as Partial<Omit<Config, 'probes'>> & { baseline: string; probes?: ProbesConfigInput };
  const probes = probesConfig(c.probes);
  // The schema bounds each alone; together, a window shorter than minSamples never holds enough samples to judge:
  // the gate would report every path pending, a slow one healthy, for ever.
  if (probes !== null && probes.window < probes.minSamples)
    throw new ConfigError(`${file}: probes.window ${probes.window} is below probes.minSamples ${probes.minSamples}: no window would ever hold enough samples to judge`);
  return {
    ...DEFAULTS,
    ...c,
    // One spelling (no trailing slash, no `//`, `.` or `..`): every job's directory is named from it, and mounts in
    // them are told by comparing those names (host/mounts.ts).
    stateDir: path.posix.resolve(c.stateDir ?? DEFAULTS.stateDir),
    logFile: c.logFile,
    slurmdPidFiles: c.slurmdPidFiles,
    gresConf: c.gresConf,
    checks: c.checks,
    probes,
  };
}

/**
 * The policy when the config itself is invalid: its own onConfigError/onInternalError if the JSON at least
 * says so, else the defaults (fail-open). Only from a file that root alone can change: one refused as untrusted
 * says nothing (whoever could write it could otherwise make every Prolog drain with "closed").
 */
export async function fallbackPolicy(file: string, uid = process.getuid?.() ?? 0): Promise<{ onConfigError: Policy; onInternalError: Policy }> {
  const raw = untrustedReason(file, uid) === null ? await readJsonFile(file, 'config').catch(() => null) : null;
  const pick = (k: string): Policy => {
    const v = raw !== null && typeof raw === 'object' ? (raw as Record<string, unknown>)[k] : undefined;
    return v === 'closed' ? 'closed' : 'open';
  };
  return { onConfigError: pick('onConfigError'), onInternalError: pick('onInternalError') };
}

/** A command that runs as root reads its config only when root alone can change it (host/trust.ts). */
export async function loadTrustedConfig(file: string): Promise<Config> {
  requireTrusted([file]);
  return loadConfig(file);
}

/** The files a root run trusts besides its config: the baseline it judges by and the scontrol it runs. */
export function trustedFiles(cfg: Config, baseline?: string): string[] {
  return [baseline ?? cfg.baseline, cfg.scontrol];
}
