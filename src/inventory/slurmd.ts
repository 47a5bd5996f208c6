// slurmd's process on this node, and what it was started with: the Prolog and the HealthCheckProgram are its
// descendants; by hand, its pid files. Its RLIMIT_MEMLOCK (memlock.ts) and the slurm.conf it reads (gres-path.ts)
// are judged from it.
import type { Host } from '../host/host.js';
import { valueOf } from '../model/fact.js';
import { nulList, slurmdConf, type SlurmdConf } from '../parsers/slurmd-conf.js';
import { factText, type Notes } from './read.js';

/** slurmd's pid; null: not found (every read answered); `why`: a read failed that could have been slurmd's. */
export type SlurmdFound = number | null | { readonly why: string };

/** Whether every uid of `status` (real, effective, saved, filesystem) is root's, or this process's own user's. */
function rootsProcess(status: string | undefined): boolean {
  const m = status ? /^Uid:\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)$/m.exec(status) : null;
  const own = process.getuid?.() ?? 0;
  return m !== null && m.slice(1).every((u) => Number(u) === 0 || Number(u) === own);
}

function ppidOf(status: string | undefined): number | null {
  const m = status ? /^PPid:\s+(\d+)/m.exec(status) : null;
  return m ? Number(m[1]) : null;
}

/**
 * Walks up from this process (the prolog is a descendant of slurmd) and falls back to slurmd's pid files. Not found
 * (null) only when every read on the way answered or was absent (a process gone, no pid file): a read that failed
 * (EACCES, EIO) could have been slurmd's, so then `{ why }`, unknown, never "no slurmd" (its limit unjudged).
 */
export async function findSlurmd(host: Host, notes: Notes, pidFiles: readonly string[], selfProc: string): Promise<SlurmdFound> {
  let why: string | null = null;
  const text = async (path: string, trusted = false): Promise<string | undefined> => {
    const f = await factText(host, path, notes, trusted);
    if (f.state === 'unknown') why ??= f.why;
    return valueOf(f);
  };
  let pid = ppidOf(await text(`${selfProc}/status`));
  // Pid 1 is looked at too (slurmd as its container's init: an entrypoint's `exec slurmd -D`), and ends the walk.
  for (let hops = 0; pid !== null && pid >= 1 && hops < 8; hops++) {
    if ((await text(`/proc/${pid}/comm`)) === 'slurmd') return pid;
    if (pid === 1) break;
    pid = ppidOf(await text(`/proc/${pid}/status`));
  }
  for (const f of pidFiles) {
    // Root's alone: whoever could write it could name a process of theirs called slurmd, whose limit would be judged;
    // and the process root's (anyone may name a process slurmd, and take a stale pid file's number).
    const t = await text(f, true);
    if (t && /^\d+$/.test(t) && (await text(`/proc/${t}/comm`)) === 'slurmd' && rootsProcess(await text(`/proc/${t}/status`))) return Number(t);
  }
  return why === null ? null : { why };
}


/** Bytes of a cmdline or environ read (far above a daemon's; more is not slurmd's as started by an init system). */
const ARGS_MAX = 128 * 1024;

async function nulFile(host: Host, path: string): Promise<string[] | { why: string }> {
  const r = await host.readBytes(path, ARGS_MAX + 1);
  if (!r.ok) return { why: r.missing ? `${path}: gone` : r.reason };
  if (r.value.length > ARGS_MAX) return { why: `${path}: larger than ${ARGS_MAX >> 10} KiB, not read` };
  return nulList(r.value);
}

/**
 * The slurm.conf slurmd `pid` reads, by its command line and its starting environment. What cannot be read or told
 * is a note and `unknown`, and the caller looks in the usual places.
 */
export async function slurmdConfOf(host: Host, pid: number, notes: Notes): Promise<SlurmdConf> {
  const [argv, environ] = await Promise.all([nulFile(host, `/proc/${pid}/cmdline`), nulFile(host, `/proc/${pid}/environ`)]);
  const bad = 'why' in argv ? { path: `/proc/${pid}/cmdline`, why: argv.why } : 'why' in environ ? { path: `/proc/${pid}/environ`, why: environ.why } : null;
  const conf: SlurmdConf = bad !== null ? { kind: 'unknown', why: bad.why } : slurmdConf(argv as string[], environ as string[]);
  if (conf.kind === 'unknown') notes.add(bad?.path ?? `/proc/${pid}/cmdline`, `which slurm.conf slurmd (pid ${pid}) reads cannot be told (${conf.why}): its gres.conf is looked for in the usual places`);
  return conf;
}
