// `gdrgate fleet collect --nodes LIST --out DIR`: one srun step runs `gdrgate snapshot` on every named node into
// DIR/<node>.tar.gz (DIR on the filesystem the nodes share), each node writing beside it the summary fleet report
// reads instead (DIR/<node>.summary.json, summary.ts). Nodes slurmctld cannot run a step on are listed, not
// waited for; the step itself is bounded (--immediate, --time, and this process's own timeout on srun).
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DEFAULTS, loadConfig } from '../config.js';
import { UsageError } from '../errors.js';
import { ExecaExec, type Exec, type ExecResult } from '../host/exec.js';
import { makeTempDir, removeTree } from '../host/dirs.js';
import { ensureSafeDir, lstatOrNull, writeAtomic, writeNew } from '../host/files.js';
import { out } from '../host/stdout.js';
import type { Result } from '../runner/exit.js';
import { hostlistChunks, parseNodeLines, preflight, srunArgs, srunWordsFor } from './collect-plan.js';
import { COLLECT_SUMMARY } from './collect-summary.js';
import { expandHostlist } from './hostlist-expand.js';
import { summaryName } from './summary.js';
import type { NodeMissing } from './types.js';

export interface CollectOptions {
  readonly nodes: string;
  readonly out: string;
  /** Bound of the whole collection, seconds (default 120). */
  readonly timeout?: number | undefined;
  /** Each node's root for its snapshot (default `/`; a capture directory in tests). */
  readonly root?: string | undefined;
  readonly commands?: boolean | undefined;
  readonly srun?: string | undefined;
  readonly scontrol?: string | undefined;
  /** Config JSON for the srun and scontrol paths; absent: the defaults (a login node may have no gate config). */
  readonly config?: string | undefined;
  readonly json?: boolean | undefined;
  /** The gdrgate the nodes run, absolute (a node binary and its script, or /usr/sbin/gdrgate); default: this one. */
  readonly gdrgate?: readonly string[] | undefined;
  /** The command runner (default: execa). */
  readonly exec?: Exec;
}

export interface Answered {
  readonly node: string;
  readonly file: string;
  readonly bytes: number;
  /** The summary the node wrote in this step; null when it wrote none (fleet report then reads the snapshot). */
  readonly summary: string | null;
}

export interface CollectSummary {
  readonly nodes: number;
  readonly answered: Answered[];
  readonly missing: NodeMissing[];
  readonly srun: { readonly args: string[]; readonly exitCode: number | null; readonly timedOut: boolean; readonly durationMs: number } | null;
}

export const SUMMARY_FILE = COLLECT_SUMMARY;

/** The gdrgate running now, as the nodes must start it: its node and its script (the package's gdrgate.cjs, or dist/cli.js). */
async function self(): Promise<string[]> {
  const script = process.argv[1];
  return script ? [process.execPath, path.resolve(script)] : [process.execPath];
}

const absolute = (p: string, what: string): string => {
  if (!path.isAbsolute(p)) throw new UsageError(`${what} ${p}: give an absolute path (the nodes run it with no PATH)`);
  return p;
};

interface Tools {
  readonly srun: string;
  readonly scontrol: string;
  readonly scontrolTimeoutMs: number;
}

async function tools(o: CollectOptions): Promise<Tools> {
  const cfg = o.config ? await loadConfig(o.config) : null;
  return {
    srun: absolute(o.srun ?? cfg?.srun ?? DEFAULTS.srun, '--srun'),
    scontrol: absolute(o.scontrol ?? cfg?.scontrol ?? DEFAULTS.scontrol, '--scontrol'),
    scontrolTimeoutMs: cfg?.scontrolTimeoutMs ?? DEFAULTS.scontrolTimeoutMs,
  };
}

/** The file's identity now: a snapshot counts as answered only if it is a new file (rename replaced whatever was there). */
const identity = (file: string): string | null => {
  const st = lstatOrNull(file);
  return st && st.isFile() ? `${st.ino}:${st.mtimeMs}:${st.size}` : null;
};

/**
 * `scontrol show node -o HOSTLIST`, one call per hostlist chunk (one for any fleet whose names number their nodes):
 * a list written out whole is one argument over Linux's 128 KiB (E2BIG at 10,000 nodes). The first failure is the answer.
 */
async function showNodes(exec: Exec, scontrol: string, nodes: readonly string[], timeoutMs: number): Promise<ExecResult> {
  let stdout = '';
  let last: ExecResult | null = null;
  for (const list of hostlistChunks(nodes)) {
    last = await exec.run(scontrol, ['show', 'node', '-o', list], { timeoutMs });
    if (last.exitCode !== 0 || last.timedOut) return last;
    stdout += last.stdout.endsWith('\n') || last.stdout === '' ? last.stdout : `${last.stdout}\n`;
  }
  return { ...last!, stdout };
}

export async function collectCommand(o: CollectOptions): Promise<Result> {
  const list = expandHostlist(o.nodes);
  if (!list.ok) throw new UsageError(`--nodes: ${list.error}`);
  const timeoutS = o.timeout ?? 120;
  if (!(Number.isFinite(timeoutS) && timeoutS >= 5 && timeoutS <= 86_400)) throw new UsageError(`--timeout ${o.timeout}: seconds, from 5 to 86400`);
  const dir = path.resolve(o.out);
  const root = o.root ?? '/';
  if (!path.isAbsolute(root)) throw new UsageError(`--root ${root}: an absolute path, as every node sees it`);
  const t = await tools(o);
  try {
    ensureSafeDir(dir);
  } catch (e) {
    throw new UsageError(`--out ${dir}: ${(e as Error).message}`, { cause: e });
  }
  const exec = o.exec ?? new ExecaExec();
  const deadline = performance.now() + timeoutS * 1000;

  // 1. Who can run a step now, in slurmctld's own words (one call for the whole list).
  const show = await showNodes(exec, t.scontrol, list.hosts, Math.min(t.scontrolTimeoutMs, timeoutS * 500));
  let plan = { run: list.hosts, missing: [] as NodeMissing[] };
  if (show.exitCode === 0 && !show.timedOut) plan = preflight(list.hosts, parseNodeLines(show.stdout));
  else process.stderr.write(`gdrgate: scontrol show node failed (${show.error?.replace(/:[\s\S]*$/, '') ?? `exit ${show.exitCode}`}: ${show.stderr.trim().slice(0, 200)}); asking srun for every node\n`);

  // 2. One step over the rest.
  const files = new Map(plan.run.map((n) => [n, path.join(dir, `${n}.tar.gz`)]));
  const before = new Map([...files].map(([n, f]) => [n, identity(f)]));
  const summaries = new Map(plan.run.map((n) => [n, path.join(dir, summaryName(n))]));
  const summaryBefore = new Map([...summaries].map(([n, f]) => [n, identity(f)]));
  const fresh = (n: string): boolean => {
    const now = identity(files.get(n)!);
    return now !== null && now !== before.get(n);
  };
  let srun: ExecResult | null = null;
  let args: string[] = [];
  if (plan.run.length) {
    // Names that do not compress into one argument go in a file, one a line, in a directory of this user's (mkdtemp, 0700).
    const runner = o.gdrgate ? o.gdrgate.map((p) => absolute(p, '--gdrgate')) : await self();
    const listDir = hostlistChunks(plan.run).length > 1 ? makeTempDir(path.join(tmpdir(), 'gdrgate-nodes-')) : null;
    const nodeFile = listDir === null ? undefined : path.join(listDir, 'nodes');
    if (nodeFile !== undefined) writeNew(nodeFile, `${plan.run.join('\n')}\n`, 0o600);
    args = srunArgs({ nodes: plan.run, timeoutS, self: runner, outDir: dir, root, commands: o.commands ?? true, ...(nodeFile === undefined ? {} : { nodeFile }) });
    const progress = process.stderr.isTTY ? setInterval(() => process.stderr.write(`\rgdrgate: ${plan.run.filter(fresh).length} of ${plan.run.length} nodes answered`), 1000) : null;
    try {
      srun = await exec.run(t.srun, args, { timeoutMs: Math.max(1000, Math.floor(deadline - performance.now())) });
    } finally {
      if (progress) {
        clearInterval(progress);
        process.stderr.write('\n');
      }
      if (listDir !== null) removeTree(listDir);
    }
  }

  // 3. Answered: a new DIR/<node>.tar.gz. The rest: srun's words about the node, else what srun did, and what
  // slurmctld says of it now (a slurmd that died just before the step is marked by then, or soon: the culprit).
  const answered: Answered[] = [];
  const missing = [...plan.missing];
  const silent = plan.run.filter((n) => !fresh(n));
  const after = silent.length ? await showNodes(exec, t.scontrol, silent, t.scontrolTimeoutMs) : null;
  const now = after && after.exitCode === 0 && !after.timedOut ? preflight(silent, parseNodeLines(after.stdout)).missing : [];
  for (const n of plan.run) {
    if (fresh(n)) {
      const sum = identity(summaries.get(n)!);
      answered.push({ node: n, file: files.get(n)!, bytes: lstatOrNull(files.get(n)!)?.size ?? 0, summary: sum !== null && sum !== summaryBefore.get(n) ? summaries.get(n)! : null });
    }
    else {
      const r = srun!;
      const how = r.timedOut ? `srun gave no end within the ${timeoutS} s bound` : r.error ? `${t.srun}: ${r.error.replace(/:[\s\S]*$/, '')}` : `srun exited ${r.exitCode}`;
      const state = now.find((m) => m.node === n);
      missing.push({ node: n, why: `no snapshot written (${srunWordsFor(n, r.stderr) ?? how})${state ? `; ${state.why.replace(/^slurmctld:/, 'slurmctld now:')}` : ''}` });
    }
  }
  missing.sort((a, b) => (a.node < b.node ? -1 : a.node > b.node ? 1 : 0));
  const summary: CollectSummary = {
    nodes: list.hosts.length,
    answered,
    missing,
    srun: srun ? { args, exitCode: srun.exitCode, timedOut: srun.timedOut, durationMs: srun.durationMs } : null,
  };
  writeAtomic(path.join(dir, SUMMARY_FILE), JSON.stringify(summary, null, 2) + '\n');
  if (o.json) out(JSON.stringify(summary, null, 2));
  else {
    out(`${dir}: ${answered.length} of ${list.hosts.length} nodes answered${srun ? ` (srun ${srun.timedOut ? 'stopped at the bound' : `exit ${srun.exitCode}`}, ${(srun.durationMs / 1000).toFixed(1)} s)` : ''}; ${answered.filter((x) => x.summary !== null).length} wrote a summary`);
    for (const m of missing) out(`  missing ${m.node}: ${m.why}`);
  }
  if (srun && srun.exitCode !== 0 && srun.stderr.trim()) process.stderr.write(`gdrgate: srun said:\n${srun.stderr.trim().split('\n').slice(-20).join('\n')}\n`);
  if (answered.length === list.hosts.length) return 'ok';
  return answered.length ? 'unhealthy' : 'internal';
}
