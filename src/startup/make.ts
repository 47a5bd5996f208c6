// `gdrgate startup-snapshot`: makes the gate's V8 startup snapshot on this node, with this node's Node and CPU
// (a snapshot made elsewhere may be refused: V8 checks its version, flags and, before Node 22, the CPU's
// features). The package runs it at install and the agent at its start; the Slurm wrappers use the blob when it is
// there and trusted, and fall back to the plain program when Node refuses it or it is stale (slurm/prolog.sh).
// Steps: warm-up configs (a baseline captured from each warm-up tree, a throwaway state directory), the blob built
// by `node --snapshot-blob T --build-snapshot PROGRAM` into a private directory, proven (`--version`, and a
// warm-up prolog from the new blob passes), then written atomically where the wrappers look for it.
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError, UsageError } from '../errors.js';
import { exists } from '../host/entries.js';
import { ExecaExec, type ExecResult } from '../host/exec.js';
import { errno, writeAtomic, writeNew } from '../host/files.js';
import { cannotWriteIn, freeBytes } from '../host/safe-dir.js';
import { untrustedReason } from '../host/trust.js';
import { readBytes } from '../host/whole-file.js';
import { seal } from './blob-seal.js';
import { sweepWorkDirs, withWorkDir } from './work-dir.js';
import { versionLine } from '../version.js';

/** Where the package's wrappers look for it (slurm/prolog.sh BLOB=, set by scripts/package.mjs). */
export const DEFAULT_BLOB = '/var/lib/gdrgate/gate.blob';
/** The program the package installs (scripts/package.mjs), whose blob is DEFAULT_BLOB. */
const INSTALLED_PROGRAM = '/usr/lib/gdrgate/gdrgate.cjs';

/**
 * Where the wrappers that run `program` look for its blob: DEFAULT_BLOB for the installed program, gate.blob beside
 * any other (a checkout's wrappers: BLOB=default, beside CLI). So a checkout's `startup-snapshot` run as root on a
 * node never puts its own program where the package's wrappers would start it.
 */
export function defaultBlob(program: string): string {
  return program === INSTALLED_PROGRAM ? DEFAULT_BLOB : path.join(path.dirname(program), 'gate.blob');
}
/** A build runs the warm-up prologs and serializes the heap: seconds on an idle node, more on a loaded one. */
const BUILD_TIMEOUT_MS = 120_000;

export interface MakeArgs {
  readonly out: string;
  /** Trees (capture directories or snapshot files, or `/`) a prolog runs on before the heap is serialized. */
  readonly warmUp: readonly string[];
  /** Keep the blob at `out` when this Node starts from it and it is of this program (not stale). */
  readonly ifNeeded?: boolean;
}

/** The one-file program the snapshot is made of: this file itself when running from it, else dist/gdrgate.cjs. */
export function programFile(): string {
  const here = fileURLToPath(import.meta.url);
  if (here.endsWith('.cjs')) return here;
  for (let dir = path.dirname(here), i = 0; i < 3; i++, dir = path.dirname(dir)) {
    const f = path.join(dir, 'gdrgate.cjs');
    if (exists(f)) return f;
  }
  throw new UsageError(`no gdrgate.cjs beside ${here}: run npm run build first`);
}

/** The bundled real capture, as the package installs it or as a checkout has it. */
export function bundledCapture(program: string): string | null {
  const dir = path.dirname(program);
  const candidates = [path.join(dir, '../../share/gdrgate/examples/h200-vm.tar.gz'), path.join(dir, '../examples/h200-vm.tar.gz')];
  return candidates.find((f) => exists(f)) ?? null;
}

/**
 * A build that failed where its work directory's file system is full (ENOSPC, EDQUOT, or Node aborting as it wrote
 * the blob, which gives no errno: under 1 MiB left there): a refusal (exit 2) in one line, as for the blob's own
 * directory, never an internal error with Node's abort and a stack in the installer's output. Else null.
 */
function workFull(tmp: string, out: string, e: unknown): UsageError | null {
  if (e instanceof UsageError) return null; // said already (the blob's own directory full)
  const free = freeBytes(tmp);
  if (errno(e) !== 'ENOSPC' && errno(e) !== 'EDQUOT' && (free === null || free >= 2 ** 20)) return null;
  return new UsageError(`not making ${out}: ${tmp} is full, where the build makes about 20 MiB of files (TMPDIR names another)`, { cause: e });
}

function must(what: string, r: ExecResult): string {
  if (r.exitCode === 0) return r.stdout;
  const why = r.error ?? (r.timedOut ? 'timed out' : `exit ${r.exitCode}`);
  throw new Error(`${what}: ${why}\n${r.stderr.trim().split('\n').slice(-8).join('\n')}`);
}

/** Makes, proves and installs the blob; returns what it did in one line. */
export async function makeStartupSnapshot(a: MakeArgs): Promise<string> {
  const program = programFile();
  const node = process.execPath;
  const exec = new ExecaExec();
  const job = { SLURMD_NODENAME: 'warm-up', SLURM_JOB_ID: '1', SLURM_JOB_UID: String(process.getuid?.() ?? 0), SLURM_JOB_GID: String(process.getgid?.() ?? 0) };
  const run = (args: string[], env: Record<string, string> = {}, timeoutMs = BUILD_TIMEOUT_MS): Promise<ExecResult> =>
    exec.run(node, args, { timeoutMs, env: { ...process.env, ...job, ...env } });
  const uid = process.getuid?.() ?? 0;
  const tmp = tmpdir();
  sweepWorkDirs(tmp, uid);
  // As root (on a node): where the wrappers (rootonly) would never start it, it is not made; said before the build,
  // not after it, when every Prolog would pass it over.
  const where = uid === 0 ? untrustedReason(path.dirname(a.out), 0) : null;
  if (where !== null) throw new ConfigError(`not making ${a.out}: the Slurm wrappers start only a startup snapshot that root alone can change, and ${where}`);
  // A directory this user cannot write in (not root's, a read-only file system) is said before the build, as a refusal.
  const cannot = cannotWriteIn(path.dirname(a.out));
  if (cannot !== null) throw new UsageError(`not making ${a.out}: ${cannot}`);
  // A blob is code: one that someone other than this user (root, on a node) could change is never started, here as
  // in the wrappers (slurm/prolog.sh's rootonly), which would pass it over on every run. It is remade instead.
  let notUsed = '';
  if (a.ifNeeded && exists(a.out)) {
    const untrusted = untrustedReason(a.out, uid);
    if (untrusted === null) {
      // Of this program (else its main exits 10, as it does for the wrappers when CLI= names another).
      const now = await run(['--snapshot-blob', a.out, 'version'], { GDRGATE_CLI: program }, 30_000);
      if (now.exitCode === 0 && now.stdout.trim() === versionLine()) return `${a.out}: up to date (${versionLine()})`;
    } else notUsed = `; the one there was not used: ${untrusted}`;
  }
  // Its work directory's place (TMPDIR), said before the build as the blob's directory is.
  const noWork = cannotWriteIn(tmp);
  if (noWork !== null) throw new UsageError(`not making ${a.out}: no work directory in TMPDIR: ${noWork}`);
  const build = async (work: string): Promise<string> => {
    const configs: string[] = [];
    for (const [i, root] of a.warmUp.entries()) {
      const baseline = path.join(work, `warm-up-${i}.baseline.json`);
      const captured = await run([program, 'baseline', 'capture', '--root', root, '--class', 'warm-up', '--match', '*', '--allow-empty'], {}, 60_000);
      writeNew(baseline, must(`baseline capture --root ${root}`, captured), 0o600);
      const config = path.join(work, `warm-up-${i}.config.json`);
      writeNew(config, JSON.stringify({ baseline, root, scontrol: node, logFile: '/dev/null', stateDir: path.join(work, `warm-up-${i}.state`) }), 0o600);
      configs.push(config);
    }
    const built = path.join(work, 'built.blob');
    must('node --build-snapshot', await run(['--snapshot-blob', built, '--build-snapshot', program], { GDRGATE_SNAPSHOT_WARMUP: JSON.stringify(configs) }));
    // Sealed with its size (blob-seal.ts), which its main checks before it runs anything.
    const raw = readBytes(built);
    const blob = path.join(work, 'gate.blob');
    writeNew(blob, Buffer.concat([raw, seal(raw.length)]), 0o600);
    // Proven before it replaces the old one: it starts on this node, and it judges as the program does.
    const said = must('the new blob', await run(['--snapshot-blob', blob, 'version'], {}, 30_000)).trim();
    if (said !== versionLine()) throw new Error(`the new blob says "${said}", not "${versionLine()}"`);
    if (configs[0]) must('a prolog from the new blob', await run(['--snapshot-blob', blob, 'prolog', '--dry-run', '--config', configs[0]], {}, 30_000));
    const bytes = readBytes(blob);
    try {
      writeAtomic(a.out, bytes, { mode: 0o644, sync: true });
    } catch (e) {
      throw new UsageError(`not making ${a.out}: ${(e as Error).message}`, { cause: e }); // ENOSPC, EDQUOT, EIO: said, not a crash
    }
    return `${a.out}: startup snapshot of ${program} (${(bytes.length / 2 ** 20).toFixed(1)} MiB, ${configs.length} warm-up run(s)), ${versionLine()}${notUsed}`;
  };
  // A private directory (0700): nobody can plant a link where the builder writes (work-dir.ts: removed however it ends).
  // A full file system is told while the build's files still fill it.
  return withWorkDir(tmp, (work) =>
    build(work).catch((e: unknown) => {
      throw workFull(tmp, a.out, e) ?? e;
    }),
  );
}
