// Reads a slurm.conf and every file its Include lines name, as Slurm 23.02 and later do: a relative name is taken from
// the directory of the slurm.conf named (parse_config.c _parse_include_directive → read_config.c get_extra_conf_path,
// SLURM_CONF's directory, whatever file includes it; 22.05 took it from the including file's), `%c` is the ClusterName
// read so far, lowercased (_parse_for_format). Files are read through a Host, whole or not at all (readText); the
// parsing is conf-parse.ts.
import path from 'node:path';
import type { Host } from '../host/host.js';
import { parseConf, type ConfEntry } from './conf-parse.js';

export interface LoadedConf {
  /** The conf named, then each included file in the order it was read. */
  readonly files: readonly string[];
  /** Every entry of every file, in the order slurmctld reads them (an Include's entries where the Include stands). */
  readonly entries: readonly ConfEntry[];
  readonly problems: readonly string[];
}

/** Slurm gives up on deeper nesting long before; this bounds an Include loop. */
const MAX_DEPTH = 16;

export async function loadConf(host: Host, file: string): Promise<LoadedConf> {
  const files: string[] = [];
  const entries: ConfEntry[] = [];
  const problems: string[] = [];
  const top = path.posix.dirname(file);
  const read = async (f: string, depth: number): Promise<boolean> => {
    const text = await host.readText(f);
    if (!text.ok) return false;
    files.push(f);
    const parsed = parseConf(text.value, f);
    problems.push(...parsed.problems);
    for (const item of parsed.order) {
      if (item.kind === 'entry') {
        entries.push(item.entry);
        continue;
      }
      const inc = item.include;
      let target = inc.target;
      if (target.includes('%c')) {
        const cluster = [...entries].reverse().find((e) => e.name === 'clustername');
        if (!cluster) {
          problems.push(`${inc.file}:${inc.line}: Include ${inc.target}: %c before any ClusterName (slurmctld refuses this)`);
          continue;
        }
        target = target.split('%c').join(cluster.value.toLowerCase());
      }
      const full = target.startsWith('/') ? target : path.posix.join(top, target);
      if (depth >= MAX_DEPTH) {
        problems.push(`${inc.file}:${inc.line}: Include ${full}: nested more than ${MAX_DEPTH} deep (a loop?)`);
        continue;
      }
      if (!(await read(full, depth + 1))) {
        problems.push(`${inc.file}:${inc.line}: Include ${full}: ${await whyNot(host, full)} (slurmctld would not start)`);
      }
    }
    return true;
  };
  const ok = await read(file, 0);
  if (!ok) {
    throw new Error(`${file}: ${await whyNot(host, file)}`);
  }
  return { files, entries, problems };
}

async function whyNot(host: Host, file: string): Promise<string> {
  const r = await host.readText(file);
  return r.ok ? 'unreadable' : r.missing ? 'no such file' : r.reason;
}
