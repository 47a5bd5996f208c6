// The agent judging a TaskProlog's view (slurm/taskprolog.sh reads it with bash alone, src/agent/task.ts judges it)
// says what `gdrgate task` says: over generated job views (adapters, verbs nodes and GPUs hidden or denied, memlock
// limits, CPU bindings, job GPUs, NCCL_TOPO_FILE, FAIL), the wrapper asking a running agent and the wrapper running
// gdrgate print the same lines, exit with the same code and leave the same task record; a view bash cannot read as
// gdrgate would (a device this user may not open: its errno) is judged by gdrgate, and every other one by the agent.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { reachableBuild, reachableNode } from '../helpers/reachable.js';
import { scratchDir } from '../helpers/scratch.js';
import { REPO } from '../helpers/paths.js';
import { jobRoot, UVERBS } from './_roots.js';

const USER = 4243;
const CASES = Number(process.env.GDRGATE_PARITY_CASES ?? 24);

if (process.getuid?.() !== 0) t.skip('agent parity: needs root (the agent is root, the TaskProlog runs as the job uid)', () => {});
else await main();

/** A small seeded generator, so that a failing case can be run again (its seed is in the test's name). */
function rng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => ((s = (Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0), s / 2 ** 32);
}

async function main(): Promise<void> {
  const work = scratchDir('gdrgate-taskparity-', '/tmp');
  fs.chmodSync(work, 0o755);
  const CLI = reachableBuild(work);
  const NODE = reachableNode(CLI);
  const calls = path.join(work, 'node-calls');
  // The Node the wrapper starts, counted: the agent's answers start none.
  const counted = path.join(work, 'node');
  fs.writeFileSync(counted, `#!/bin/sh\necho run >> ${calls}\nexec ${NODE} "$@"\n`, { mode: 0o755 });
  fs.writeFileSync(calls, '');
  fs.chmodSync(calls, 0o666);
  const tree = await jobRoot({ minors: [], status: { cpus: '0-7', mems: '0' } }, path.join(work, 'tree'));
  const stateDir = path.join(work, 'run');
  const scontrol = path.join(work, 'scontrol');
  fs.writeFileSync(scontrol, '#!/bin/sh\nexit 1\n', { mode: 0o755 });
  const cap = spawnSync(NODE, [CLI, 'baseline', 'capture', '--root', tree, '--class', 't', '--match', '*'], { encoding: 'utf8' });
  t.equal(cap.status, 0, 'baseline captured', { stderr: cap.stderr });
  const baseline = JSON.parse(cap.stdout) as { classes: { memlockMin: unknown }[] };
  baseline.classes[0]!.memlockMin = 8 * 1024 * 1024;
  const bfile = path.join(work, 'baseline.json');
  fs.writeFileSync(bfile, JSON.stringify(baseline), { mode: 0o644 });
  const config = path.join(work, 'config.json');
  fs.writeFileSync(config, JSON.stringify({ baseline: bfile, root: tree, scontrol, stateDir }), { mode: 0o644 });
  const wrapper = path.join(work, 'gdrgate-taskprolog.sh');
  fs.copyFileSync(path.join(REPO, 'slurm/taskprolog.sh'), wrapper);
  fs.chmodSync(wrapper, 0o755);
  const conf = (agent: boolean, fail: boolean): void =>
    fs.writeFileSync(path.join(work, 'gdrgate-taskprolog.conf'), `NODE=${counted}\nCLI=${CLI}\nBLOB=\nCONFIG=${config}\nROOT=${tree}\nSTATE=${stateDir}\nAGENT=${agent ? 1 : ''}\nAGENT_TIMEOUT=30\nFAIL=${fail ? 1 : 0}\n`, { mode: 0o644 });

  const agent = spawn(NODE, [CLI, 'agent', '--config', config, '--dir', path.join(work, 'agent')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let agentErr = '';
  agent.stderr!.on('data', (d: Buffer) => (agentErr += d.toString()));
  t.teardown(() => {
    agent.kill('SIGTERM');
    fs.rmSync(work, { recursive: true, force: true });
  });
  for (const until = performance.now() + 60_000; !fs.existsSync(path.join(stateDir, 'tasks')) && performance.now() < until; ) await new Promise((r) => setTimeout(r, 20));
  t.ok(fs.existsSync(path.join(stateDir, 'tasks')), 'the agent made its task FIFO', { stderr: agentErr });

  const prolog = (job: string, gpus: string | null): number =>
    spawnSync(NODE, [CLI, 'prolog', '--config', config], {
      env: { SLURM_JOB_ID: job, SLURMD_NODENAME: 'gpu001', SLURM_JOB_UID: String(USER), SLURM_JOB_GID: String(USER), SLURM_SCRIPT_CONTEXT: 'prolog_slurmd', ...(gpus === null ? {} : { SLURM_JOB_GPUS: gpus }) },
    }).status ?? -1;
  const task = (env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> =>
    new Promise((res) => {
      // (tap's process accounting would otherwise follow the job user's Node through NODE_OPTIONS.)
      const p = spawn('/usr/bin/env', ['-u', 'NODE_OPTIONS', wrapper], { env: { PATH: '/usr/bin:/bin', SLURMD_NODENAME: 'gpu001', ...env }, cwd: '/', uid: USER, gid: USER });
      let stdout = '';
      let stderr = '';
      p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      p.on('close', (code) => res({ code, stdout, stderr }));
    });
  const runs = (): number => fs.readFileSync(calls, 'utf8').split('\n').filter(Boolean).length;
  const record = (dir: string): unknown => {
    const f = path.join(dir, 'task.json');
    if (!fs.existsSync(f)) return null;
    const r = JSON.parse(fs.readFileSync(f, 'utf8')) as Record<string, unknown>;
    return { ...r, time: 'T' };
  };
  const clean = (dir: string): void => {
    for (const f of fs.readdirSync(dir)) if (f.startsWith('task.')) fs.rmSync(path.join(dir, f), { recursive: true, force: true });
  };

  await t.test('generated views', async (t) => {
  let answered = 0;
  const said = new Set<string>();
  for (let c = 0; c < CASES; c++) {
    const seed = 1000 + c;
    const r = rng(seed);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
    const job = String(500 + c);
    const gpus = pick([null, '0', '1,2', '0,1,2,3', '3']);
    t.equal(prolog(job, gpus), 0, `seed ${seed}: prolog`);
    const dir = path.join(stateDir, `job-${job}`);
    // The job's view drifts from the host's record: a verbs node gone, a device this user may not open, another binding.
    const gone = r() < 0.3 ? pick(UVERBS) : null;
    const denied = r() < 0.2 ? pick(['dev/nvidia0', 'dev/infiniband/uverbs1']) : null;
    if (gone) fs.renameSync(path.join(tree, 'dev/infiniband', gone), path.join(work, 'gone'));
    if (denied) fs.chmodSync(path.join(tree, denied), 0o600);
    const status = pick(['0-7\t0', '8-15\t1', '0\t0,1', '16-23\t0']).split('\t');
    fs.writeFileSync(path.join(tree, 'proc/self/status'), `Name:\tbash\nCpus_allowed_list:\t${status[0]}\nMems_allowed_list:\t${status[1]}\n`);
    const env: Record<string, string> = { SLURM_JOB_ID: job, SLURM_STEP_ID: pick(['0', '1', 'batch']), SLURM_LOCALID: pick(['0', '3']) };
    if (gpus !== null) env.SLURM_JOB_GPUS = gpus;
    const ml = pick([null, '65536', 'U8388608', '18446744073709551615', 'x']);
    if (ml !== null) env.SLURM_RLIMIT_MEMLOCK = ml;
    if (r() < 0.2) env.NCCL_TOPO_FILE = pick(['', '/x/topo.xml']);
    const fail = r() < 0.3;
    try {
      conf(true, fail);
      const before = runs();
      const viaAgent = await task(env);
      const agentRuns = runs() - before;
      const agentRecord = record(dir);
      clean(dir);
      fs.rmSync(path.join(dir, 'task.json'), { force: true });
      conf(false, fail);
      const viaNode = await task(env);
      t.same({ ...viaAgent, stderr: '' }, { ...viaNode, stderr: '' }, `seed ${seed}: the same lines and exit code`);
      t.same(agentRecord, record(dir), `seed ${seed}: the same task record`);
      t.equal(agentRuns, denied ? 1 : 0, `seed ${seed}: ${denied ? `gdrgate judged (${denied} denied to the user)` : 'the agent answered'}`, { agentErr });
      if (!denied && agentRuns === 0) answered++;
      said.add(`${viaAgent.code} ${viaAgent.stdout}`);
    } finally {
      if (gone) fs.renameSync(path.join(work, 'gone'), path.join(tree, 'dev/infiniband', gone));
      if (denied) fs.chmodSync(path.join(tree, denied), 0o666);
    }
  }
  t.ok(answered > CASES / 2, `the agent answered ${answered} of ${CASES} views`);
  // The views differ in what they say (silence, memlock, placement, hidden devices, FAIL's exit code), not only in name.
  t.ok(said.size >= Math.min(4, CASES), `${said.size} different answers`);
  });
}
