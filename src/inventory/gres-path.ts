// Where slurmd reads its gres.conf when the config names none: beside the slurm.conf it reads (src/interfaces/gres.c
// _parse_gres_conf_locked: get_extra_conf_path("gres.conf"), src/common/read_config.c: the directory of SLURM_CONF).
// slurmd sets SLURM_CONF to that file for itself and for its Prolog and Epilog (slurmd.c _establish_configuration,
// which links /run/slurm/conf to its conf-cache in _handle_slash_run; prep_script_slurmd.c _build_env), so `slurmd -f /opt/slurm/etc/slurm.conf` reads
// /opt/slurm/etc/gres.conf, and a configless slurmd its cached copy (SlurmdSpoolDir/conf-cache/gres.conf).
// Without SLURM_CONF (the HealthCheckProgram's environment is SLURMD_NODENAME alone; a person's shell), what slurmd
// itself was started with (its -f, --conf-server, SLURM_CONF: src/parsers/slurmd-conf.ts), and where slurmd was not
// found or that cannot be told, the places a Slurm command looks (read_config.c _establish_config_source):
// /etc/slurm/slurm.conf when it is there, else the configless cache linked as /run/slurm/conf.
import path from 'node:path';
import type { Host } from '../host/host.js';
import type { SlurmdConf } from '../parsers/slurmd-conf.js';

/** Slurm's default slurm.conf (the Debian and RPM packages' --sysconfdir) and its gres.conf. */
export const DEFAULT_SLURM_CONF = '/etc/slurm/slurm.conf';
export const DEFAULT_GRES_CONF = '/etc/slurm/gres.conf';
/** The link slurmd makes to its conf-cache in configless operation (slurmd.c _handle_slash_run). */
const CACHED_SLURM_CONF = '/run/slurm/conf/slurm.conf';

const beside = (conf: string): string => path.posix.join(path.posix.dirname(conf), 'gres.conf');

/**
 * The gres.conf slurmd on this node reads. `live`: the Host is this node's own root, where SLURM_CONF (`env`, the
 * hook's environment) names a file of it, and `slurmd()` tells what this node's slurmd was started with (asked only
 * without SLURM_CONF); a capture's root is asked only for the places.
 */
export async function slurmGresConf(host: Host, env: Readonly<Record<string, string | undefined>>, live: boolean, slurmd: () => Promise<SlurmdConf | null> = () => Promise.resolve(null)): Promise<string> {
  const conf = env.SLURM_CONF;
  if (live && conf !== undefined && conf.startsWith('/') && !conf.endsWith('/')) return beside(path.posix.normalize(conf));
  const told = live ? await slurmd() : null;
  if (told?.kind === 'file' && !told.file.endsWith('/')) return beside(path.posix.normalize(told.file));
  if (told?.kind === 'configless') return beside(CACHED_SLURM_CONF);
  if ((await host.stat(DEFAULT_SLURM_CONF)).ok) return DEFAULT_GRES_CONF;
  if ((await host.stat(CACHED_SLURM_CONF)).ok) return beside(CACHED_SLURM_CONF);
  return DEFAULT_GRES_CONF;
}
