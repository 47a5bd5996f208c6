// The TaskProlog's agent path under test (not a test): a reachable build, a generated job root, a captured baseline,
// a running `gdrgate agent`, the Prolog that hands the job's directory to USER, and slurm/taskprolog.sh run as USER
// with its answer asked of the agent or of gdrgate, so that one view's two answers can be compared.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { reachableBuild, reachableNode } from '../helpers/reachable.js';
import { scratchDir } from '../helpers/scratch.js';
import { REPO } from '../helpers/paths.js';
import type { GenNode } from '../gen/sysfs-tree.js';
import { jobRoot } from './_roots.js';

export const USER = 4245;

export interface Ran {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface Both {
  readonly viaAgent: Ran;
  readonly viaNode: Ran;
  /** Nodes the agent's run started: 0 when the agent answered. */
  readonly agentRuns: number;
  readonly agentRecord: unknown;
  readonly nodeRecord: unknown;
}

export interface Rig {
  readonly work: string;
  readonly tree: string;
  readonly stateDir: string;
  readonly config: string;
  readonly wrapper: string;
  readonly agent: ChildProcess;
  /** The agent's directory, the build's cli.js, and the Node the wrappers start (counted by runs()). */
  readonly agentDir: string;
  readonly cli: string;
  readonly node: string;
  /** The Node itself (not counted), which the agent runs on. */
  readonly realNode: string;
  agentErr(): string;
  /** The Prolog for `job` (as slurmd runs it, root, answered by the agent): it hands the job's directory to USER. */
  /** `wait` false: returns as soon as the Prolog does, before the agent has written the job's record. */
  prolog(job: string, gpus?: string | null, wait?: boolean): number;
  /** The TaskProlog's .conf: `extra` lines appended (after the rig's own). */
  conf(agent: boolean, extra?: string): void;
  /** The TaskProlog as USER, `env` its environment (besides PATH and SLURMD_NODENAME); `timeoutMs`: killed after. */
  task(env: Record<string, string>, timeoutMs?: number): Promise<Ran & { ms: number }>;
  /** Nodes started so far by the wrapper. */
  runs(): number;
  /** `job`'s view answered by the agent, then by gdrgate (the kept answers removed in between). */
  both(job: string, env: Record<string, string>, extra?: string): Promise<Both>;
  close(): void;
}

/**
 * `node`: the tree the jobs run on (default _roots.ts's 4x V100); `reference`: the node the baseline is captured from
 * (default the same tree); `stateDir`: how the config spells the state directory, given the rig's directory (default
 * `<work>/run`; another spelling of that same directory, through a link or with a trailing slash, as an admin may write it).
 */
export async function startRig(o: { gpus?: boolean; node?: GenNode; reference?: GenNode; stateDir?: (work: string) => string } = {}): Promise<Rig> {
  const work = scratchDir('gdrgate-taskrig-', '/tmp');
  fs.chmodSync(work, 0o755);
  const CLI = reachableBuild(work);
  const NODE = reachableNode(CLI);
  const calls = path.join(work, 'node-calls');
  const counted = path.join(work, 'node');
  fs.writeFileSync(counted, `#!/bin/sh\necho run >> ${calls}\nexec ${NODE} "$@"\n`, { mode: 0o755 });
  fs.writeFileSync(calls, '');
  fs.chmodSync(calls, 0o666);
  const tree = await jobRoot({ node: o.node, minors: o.gpus === false ? undefined : [], status: { cpus: '0-7', mems: '0' } }, path.join(work, 'tree'));
  const ref = o.reference ? await jobRoot({ node: o.reference, minors: [] }, path.join(work, 'reference')) : tree;
  const stateDir = o.stateDir?.(work) ?? path.join(work, 'run');
  const scontrol = path.join(work, 'scontrol');
  fs.writeFileSync(scontrol, '#!/bin/sh\nexit 1\n', { mode: 0o755 });
  const cap = spawnSync(NODE, [CLI, 'baseline', 'capture', '--root', ref, '--class', 't', '--match', '*'], { encoding: 'utf8' });
  if (cap.status !== 0) throw new Error(`baseline capture: ${cap.stderr}`);
  const baseline = JSON.parse(cap.stdout) as { classes: { memlockMin: unknown }[] };
  baseline.classes[0]!.memlockMin = 8 * 1024 * 1024;
  const bfile = path.join(work, 'baseline.json');
  fs.writeFileSync(bfile, JSON.stringify(baseline), { mode: 0o644 });
  const config = path.join(work, 'config.json');
  fs.writeFileSync(config, JSON.stringify({ baseline: bfile, root: tree, scontrol, stateDir, spool: path.join(path.dirname(stateDir), 'spool') }), { mode: 0o644 });
  const wrapper = path.join(work, 'gdrgate-taskprolog.sh');
  fs.copyFileSync(path.join(REPO, 'slurm/taskprolog.sh'), wrapper);
  fs.chmodSync(wrapper, 0o755);
  const conf = (agent: boolean, extra = ''): void =>
    fs.writeFileSync(path.join(work, 'gdrgate-taskprolog.conf'), `NODE=${counted}\nCLI=${CLI}\nBLOB=\nCONFIG=${config}\nROOT=${tree}\nSTATE=${stateDir}\nAGENT=${agent ? 1 : ''}\nAGENT_TIMEOUT=30\n${extra}\n`, { mode: 0o644 });
  const agent = spawn(NODE, [CLI, 'agent', '--config', config, '--dir', path.join(work, 'agent')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let agentErr = '';
  agent.stderr!.on('data', (d: Buffer) => (agentErr += d.toString()));
  // Listening once its pid file is there (written after the FIFOs for the jobs' TaskPrologs are made ahead).
  const pidFile = path.join(work, 'agent', 'agent.pid');
  for (const until = performance.now() + 60_000; !fs.existsSync(pidFile) && performance.now() < until; ) await new Promise((r) => setTimeout(r, 20));
  if (!fs.existsSync(pidFile)) throw new Error(`the agent did not start: ${agentErr}`);

  // The Prolog as slurmd runs it (slurm/prolog.sh, a child of a process named slurmd), asking the agent, which hands
  // the job's TaskProlog its FIFO as it answers.
  const slurmd = path.join(work, 'slurmd');
  fs.writeFileSync(slurmd, '#!/bin/bash\n"$@"\nexit $?\n', { mode: 0o755 });
  const prologSh = path.join(work, 'gdrgate-prolog.sh');
  fs.copyFileSync(path.join(REPO, 'slurm/prolog.sh'), prologSh);
  fs.chmodSync(prologSh, 0o755);
  fs.writeFileSync(path.join(work, 'gdrgate-prolog.conf'), `NODE=${counted}\nCLI=${CLI}\nBLOB=\nCONFIG=${config}\nAGENT=${path.join(work, 'agent')}\nAGENT_TIMEOUT=10\n`, { mode: 0o644 });
  // The agent answers first and writes the job's record into the directory it began after: slurmd's next step (the
  // job's first TaskProlog) comes later than that, and a task that comes sooner waits (task-pending.test.ts). Here the
  // Prolog's caller waits for the directory to be the job user's, as that step would find it.
  const handed = (job: string): void => {
    const dir = path.join(stateDir, `job-${job}`);
    const nap = new Int32Array(new SharedArrayBuffer(4));
    for (const until = performance.now() + 30_000; performance.now() < until; Atomics.wait(nap, 0, 0, 5)) {
      const st = fs.lstatSync(dir, { throwIfNoEntry: false });
      if (st === undefined || st.uid !== 0) return;
    }
  };
  const prolog = (job: string, gpus: string | null = null, wait = true): number => {
    const status =
      spawnSync(slurmd, [prologSh], {
        cwd: '/',
        timeout: 120_000,
        env: { SLURM_JOB_ID: job, SLURMD_NODENAME: 'gpu001', SLURM_JOB_UID: String(USER), SLURM_JOB_GID: String(USER), SLURM_SCRIPT_CONTEXT: 'prolog_slurmd', ...(gpus === null ? {} : { SLURM_JOB_GPUS: gpus }) },
      }).status ?? -1;
    if (wait) handed(job);
    return status;
  };
  const task = (env: Record<string, string>, timeoutMs = 120_000): Promise<Ran & { ms: number }> =>
    new Promise((res) => {
      const t0 = performance.now();
      // (tap's process accounting would otherwise follow the job user's Node through NODE_OPTIONS.)
      const p = spawn('/usr/bin/env', ['-u', 'NODE_OPTIONS', wrapper], { env: { PATH: '/usr/bin:/bin', SLURMD_NODENAME: 'gpu001', ...env }, cwd: '/', uid: USER, gid: USER, detached: true });
      let stdout = '';
      let stderr = '';
      const kill = setTimeout(() => {
        try {
          process.kill(-p.pid!, 'SIGKILL');
        } catch {
          /* gone */
        }
      }, timeoutMs);
      p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      p.on('close', (code) => (clearTimeout(kill), res({ code, stdout, stderr, ms: performance.now() - t0 })));
    });
  const runs = (): number => fs.readFileSync(calls, 'utf8').split('\n').filter(Boolean).length;
  const record = (dir: string): unknown => {
    const f = path.join(dir, 'task.json');
    if (!fs.existsSync(f)) return null;
    return { ...(JSON.parse(fs.readFileSync(f, 'utf8')) as Record<string, unknown>), time: 'T' };
  };
  const clean = (dir: string): void => {
    for (const f of fs.readdirSync(dir)) if (f.startsWith('task.')) fs.rmSync(path.join(dir, f), { recursive: true, force: true });
  };
  const both = async (job: string, env: Record<string, string>, extra = ''): Promise<Both> => {
    const dir = path.join(stateDir, `job-${job}`);
    clean(dir);
    conf(true, extra);
    const before = runs();
    const viaAgent = await task({ SLURM_JOB_ID: job, ...env });
    const agentRuns = runs() - before;
    const agentRecord = record(dir);
    clean(dir);
    conf(false, extra);
    const viaNode = await task({ SLURM_JOB_ID: job, ...env });
    return { viaAgent, viaNode, agentRuns, agentRecord, nodeRecord: record(dir) };
  };
  const close = (): void => {
    agent.kill('SIGTERM');
    fs.rmSync(work, { recursive: true, force: true });
  };
  return { work, tree, stateDir, config, wrapper, agent, agentDir: path.join(work, 'agent'), cli: CLI, node: counted, realNode: NODE, agentErr: () => agentErr, prolog, conf, task, runs, both, close };
}

/** What must match between the two answers: stdout and the exit code (stderr differs: the agent's path says less). */
export const said = (r: Ran): { code: number | null; stdout: string } => ({ code: r.code, stdout: r.stdout });

/**
 * A job's TaskProlog flood, as a bash script run as USER with arguments (config, the job's task FIFO, the job's
 * directory, $4, seconds, job id): eight reply pipes (fd 87-94), its facts written by `facts` (a bash command line
 * that writes them to stdout, `$4` at hand), then asking on all eight, reading the answers, and asking again until the
 * seconds are over; it prints how many it asked.
 */
export const floodScript = (facts: string): string =>
  [
    'for ((f = 87; f < 95; f++)); do eval "exec $f<<<\'\' && exec $f<>/proc/$$/fd/$f && read -r -u $f _" || exit 3; done',
    `${facts} >"$3/task.$$.facts" || exit 4`,
    'exec 86<>"$2" || exit 5',
    'end=$((SECONDS + $5)); k=0',
    'while ((SECONDS < end)); do',
    '  for ((f = 87; f < 95; f++)); do printf "v1 task %s %s %s %s 0123456789abcdef %s\\n" "$6" $$ $f $$ "$1"; done >&86; k=$((k + 8))',
    '  for ((f = 87; f < 95; f++)); do while read -r -t 0 -u $f && read -r -t 0.001 -u $f _; do :; done; done',
    'done',
    'echo "$k"',
  ].join('\n');

/**
 * The facts the job's TaskProlog wrote in its directory, claimed again for a live process of the job's user (a sleep
 * that `t` kills at its end), as that process would send them: the file's name, the process and the facts' nonce.
 */
export function factsAgain(t: { teardown(f: () => void): void }, stateDir: string, job: string): { name: string; proc: ChildProcess; nonce: string } {
  const dir = path.join(stateDir, `job-${job}`);
  const name = fs.readdirSync(dir).find((f) => f.endsWith('.facts'))!;
  const proc = spawn('/bin/sleep', ['60'], { uid: USER, gid: USER });
  t.teardown(() => void proc.kill());
  const facts = fs.readFileSync(path.join(dir, name), 'utf8').split('\n');
  const [, , nonce, , uid, fail] = facts[0]!.split(' ');
  facts[0] = `gdrgate-task-facts 1 ${nonce} ${proc.pid} ${uid} ${fail}`;
  fs.writeFileSync(path.join(dir, name), facts.join('\n'));
  fs.chownSync(path.join(dir, name), USER, USER);
  return { name, proc, nonce: nonce! };
}
