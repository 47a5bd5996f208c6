// `gdrgate slurm-config`: reads the site's slurm.conf (and its Include files) and prints what to change for gdrgate,
// merged with what the site has. It never writes slurm.conf. Finds the conf (--conf, $SLURM_CONF, the usual places,
// else a configless node's cached copy), the Slurm release (--slurm-version, else sinfo/slurmd by absolute path).
import path from 'node:path';
import { UsageError } from '../errors.js';
import { ExecaExec, type Exec } from '../host/exec.js';
import { FsHost } from '../host/fs-host.js';
import type { Host } from '../host/host.js';
import { loadConf } from '../slurm/conf-load.js';
import { mergePlan } from '../slurm/conf-merge.js';
import { confValue } from '../slurm/conf-value.js';
import { findPyxis } from '../slurm/plugstack.js';
import { renderJson, renderText } from '../slurm/conf-render.js';
import { OLDEST, parseVersion, type Release } from '../slurm/versions.js';
import { VERSION } from '../version.js';
import { out } from './common.js';

/** Where a slurm.conf usually is: Debian/RPM packages, a source build's default sysconfdir, old Debian. */
const CONF_PLACES = ['/etc/slurm/slurm.conf', '/usr/local/etc/slurm.conf', '/etc/slurm-llnl/slurm.conf'];
/**
 * A configless node's copy (slurmd.c: SlurmdSpoolDir/conf-cache, linked from /run/slurm/conf; sackd's own cache on
 * login nodes is /run/slurm/conf too). The default SlurmdSpoolDir is /var/spool/slurmd; RPMs use /var/spool/slurm/d.
 */
const CACHE_PLACES = ['/run/slurm/conf/slurm.conf', '/var/spool/slurmd/conf-cache/slurm.conf', '/var/spool/slurm/d/conf-cache/slurm.conf'];
/**
 * Slurm's tools by absolute path (Slurm runs nothing through PATH, nor does gdrgate). slurmd -V first: it answers
 * without a config; sinfo --version reads one first (Slurm 22.05 without one tries DNS SRV and exits 1), so it is
 * given the conf being read.
 */
export const VERSION_TOOLS: readonly [string, string][] = [
  ['/usr/sbin/slurmd', '-V'],
  ['/usr/local/sbin/slurmd', '-V'],
  ['/opt/slurm/sbin/slurmd', '-V'],
  ['/usr/bin/sinfo', '--version'],
  ['/usr/local/bin/sinfo', '--version'],
  ['/opt/slurm/bin/sinfo', '--version'],
];
const VERSION_TIMEOUT_MS = 5_000;

export interface SlurmConfigArgs {
  readonly conf?: string | undefined;
  readonly slurmVersion?: string | undefined;
  readonly scripts: string;
  readonly wrapperDir?: string | undefined;
  readonly json: boolean;
}

const isCache = (f: string): boolean => f.startsWith('/run/slurm/conf/') || f.includes('/conf-cache/');

export async function findConf(host: Host, named: string | undefined, env = process.env.SLURM_CONF): Promise<{ file: string; configless: boolean }> {
  if (named) return { file: path.resolve(named), configless: isCache(path.resolve(named)) };
  if (env) return { file: path.resolve(env), configless: isCache(path.resolve(env)) };
  for (const f of CONF_PLACES) if ((await host.stat(f)).ok) return { file: f, configless: false };
  for (const f of CACHE_PLACES) if ((await host.stat(f)).ok) return { file: f, configless: true };
  throw new UsageError(
    `no slurm.conf here (looked in ${[...CONF_PLACES, ...CACHE_PLACES].join(', ')}). On a configless node the file lives on the slurmctld host: ` +
      'run `gdrgate slurm-config --conf /etc/slurm/slurm.conf` there, or copy the cached one from a running node (its SlurmdSpoolDir/conf-cache, linked as /run/slurm/conf); ' +
      '`scontrol show config` shows the values in force but is not a slurm.conf',
  );
}

export async function findRelease(exec: Exec, given: string | undefined, conf: string): Promise<{ release: Release; from: string; note: string | null }> {
  if (given !== undefined) {
    const v = parseVersion(given);
    if (!v) throw new UsageError(`--slurm-version ${JSON.stringify(given)}: want a release such as 23.11 or 24.05.3`);
    return { release: v.release, from: `--slurm-version ${given}`, note: v.note };
  }
  for (const [file, flag] of VERSION_TOOLS) {
    const r = await exec.run(file, [flag], { timeoutMs: VERSION_TIMEOUT_MS, env: { LANG: 'C', SLURM_CONF: conf } });
    if (r.exitCode !== 0) continue;
    const v = parseVersion(r.stdout);
    if (v) return { release: v.release, from: `${file} ${flag}: ${r.stdout.trim()}`, note: v.note };
  }
  return { release: OLDEST, from: `assumed: no sinfo or slurmd answered its version (give --slurm-version); ${OLDEST} is the oldest release gdrgate supports`, note: null };
}

export async function slurmConfigCommand(a: SlurmConfigArgs, exec: Exec = new ExecaExec(), host: Host = new FsHost('/')): Promise<number> {
  const { file, configless } = await findConf(host, a.conf);
  let loaded;
  try {
    loaded = await loadConf(host, file);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const { release, from, note } = await findRelease(exec, a.slurmVersion, file);
  const scripts = a.scripts.replace(/\/$/, '');
  const wrapperDir = a.wrapperDir ?? (configless ? '/etc/slurm' : path.posix.dirname(file));
  // Each is written into a slurm.conf line: one that no line can hold is refused here, never printed cut or misread.
  for (const [flag, dir] of [['--scripts', scripts], ['--wrapper-dir (or the conf\'s directory)', wrapperDir]] as const)
    if (confValue(`${dir}/gdrgate-taskprolog-chain.sh`) === null) throw new UsageError(`${flag} ${JSON.stringify(dir)}: a slurm.conf line cannot hold this path (a control character, or a double quote with a blank, # or \\)`);
  // slurm.conf's PlugStackConfig as written (spank.c opens it as it is: a relative one from slurmstepd's working
  // directory, which findPyxis does not guess), else plugstack.conf beside it (read_config.c: get_extra_conf_path).
  const stack = [...loaded.entries].reverse().find((x) => x.name === 'plugstackconfig')?.value;
  const pyxis = await findPyxis(host, stack ?? path.posix.join(path.posix.dirname(file), 'plugstack.conf'));
  const plan = mergePlan({
    pyxis: pyxis.at,
    entries: loaded.entries,
    mainFile: file,
    release,
    scripts: { prolog: `${scripts}/prolog.sh`, epilog: `${scripts}/epilog.sh`, taskprolog: `${scripts}/taskprolog.sh`, health: `${scripts}/health.sh` },
    wrapperDir,
  });
  const ctx = { conf: file, files: loaded.files, configless, release, releaseFrom: from, problems: [...(note ? [note] : []), ...loaded.problems, ...pyxis.problems] };
  out(a.json ? `${JSON.stringify(renderJson(ctx, plan, VERSION), null, 2)}\n` : renderText(ctx, plan));
  return 0;
}
