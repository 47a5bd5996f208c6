// `npm run bench` (part): what the TaskProlog costs every task. On the bench's 8-GPU/8-NIC tree, a Prolog answered by a
// running `gdrgate agent` hands the job to uid 65534; then, alternating in one run with `node -e 0`, the TaskProlog
// (slurm/taskprolog.sh as that uid, in the environment slurmstepd gives it): the first task of a new step judged by
// the agent (bash reads the view, the agent judges), the same with AGENT= (gdrgate judges, from the blob), and a later
// task of that step (the kept answer). Needs root (the job's user is another uid); prints medians and ratios.
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { buildTree } from '../test/gen/sysfs-tree.js';
import { node as hgx } from '../test/gen/topologies/sglang30401-hgx-h100.js';
import { withOthers } from './hgx-others.js';
import { reachableBuild, reachableNode } from '../test/helpers/reachable.js';

const REPO = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 30);
const USER = 65534;
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function timed(cmd: string[], env: NodeJS.ProcessEnv, uid?: number): { ms: number; code: number | null; stdout: string } {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(cmd[0]!, cmd.slice(1), { encoding: 'utf8', env, cwd: '/', ...(uid === undefined ? {} : { uid, gid: uid }) });
  return { ms: Number(process.hrtime.bigint() - t0) / 1e6, code: r.status, stdout: r.stdout };
}

async function main(): Promise<void> {
  if (process.getuid?.() !== 0) {
    console.log('gdrgate bench: TaskProlog skipped (needs root: the job runs as another uid)');
    return;
  }
  const dir = mkdtempSync('/tmp/gdrgate-benchtask-');
  chmodSync(dir, 0o755);
  const CLI = reachableBuild(dir);
  const node = reachableNode(CLI);
  const tree = path.join(dir, 'tree');
  await buildTree(tree, withOthers(hgx));
  const cap = spawnSync(node, [CLI, 'baseline', 'capture', '--root', tree, '--class', 'hgx', '--match', '*'], { encoding: 'utf8' });
  if (cap.status !== 0) throw new Error(`baseline capture failed: ${cap.stderr}`);
  writeFileSync(path.join(dir, 'baseline.json'), cap.stdout, { mode: 0o644 });
  const config = path.join(dir, 'config.json');
  const stateDir = path.join(dir, 'state');
  writeFileSync(config, JSON.stringify({ baseline: path.join(dir, 'baseline.json'), root: tree, scontrol: '/bin/false', stateDir }), { mode: 0o644 });
  // As the package installs it: the settings written into the wrapper itself (scripts/package.mjs), no .conf beside it.
  const wrapper = (name: string, agent: string): string => {
    const file = path.join(dir, `gdrgate-${name}.sh`);
    let text = readFileSync(path.join(REPO, 'slurm/taskprolog.sh'), 'utf8');
    for (const [k, v] of Object.entries({ NODE: node, CLI, CONFIG: config, ROOT: tree, STATE: stateDir, AGENT: agent })) {
      const re = new RegExp(`^${k}=.*$`, 'm');
      if (!re.test(text)) throw new Error(`slurm/taskprolog.sh: no ${k}= line`);
      text = text.replace(re, `${k}=${v}`);
    }
    writeFileSync(file, text, { mode: 0o755 });
    return file;
  };
  const viaAgent = wrapper('task', '1');
  const viaGate = wrapper('tasknoagent', '');
  const agent = spawn(node, ['--max-semi-space-size=16', '--expose-gc', CLI, 'agent', '--config', config, '--dir', path.join(dir, 'agent')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let said = '';
  agent.stderr!.on('data', (d: Buffer) => (said += d.toString()));
  const agentDir = path.join(dir, 'agent');
  for (let i = 0; i < 500 && !existsSync(path.join(agentDir, 'agent.pid')); i++) await new Promise((r) => setTimeout(r, 20));
  if (!existsSync(path.join(agentDir, 'agent.pid'))) throw new Error('gdrgate agent did not start');
  const job = '300';
  const slurm = { SLURMD_NODENAME: 'gpu001', SLURM_JOB_ID: job, SLURM_JOB_GPUS: '0,1,2,3,4,5,6,7' };
  // The job's Prolog as slurmd runs it (slurm/prolog.sh under a process named slurmd), answered by the agent, which
  // hands the job its TaskProlog's FIFO.
  const prolog = path.join(dir, 'gdrgate-prolog.sh');
  writeFileSync(prolog, readFileSync(path.join(REPO, 'slurm/prolog.sh'), 'utf8'), { mode: 0o755 });
  writeFileSync(path.join(dir, 'gdrgate-prolog.conf'), `NODE=${node}\nCLI=${CLI}\nBLOB=\nCONFIG=${config}\nAGENT=${agentDir}\n`, { mode: 0o644 });
  writeFileSync(path.join(dir, 'slurmd'), '#!/bin/bash\n"$@"\nexit $?\n', { mode: 0o755 });
  const p = timed([path.join(dir, 'slurmd'), prolog], { ...slurm, SLURM_JOB_UID: String(USER), SLURM_JOB_GID: String(USER), SLURM_SCRIPT_CONTEXT: 'prolog_slurmd' });
  if (p.code !== 0) throw new Error(`prolog exited ${p.code}`);
  // The agent hands the FIFO over with the job's record, just after its answer (src/state/prolog.ts): waited for.
  for (let i = 0; i < 250 && !existsSync(path.join(stateDir, `tasks-${job}`)); i++) await new Promise((r) => setTimeout(r, 20));
  if (!existsSync(path.join(stateDir, `tasks-${job}`))) throw new Error(`the agent did not answer the Prolog (no FIFO for job ${job}): ${said}`);
  let step = 0;
  const res: Record<string, number[]> = { 'node -e 0': [], 'task, first, agent': [], 'task, first, gdrgate': [], 'task, later': [] };
  const run = (k: string, cmd: string[], env: NodeJS.ProcessEnv, uid?: number): void => {
    const r = timed(cmd, env, uid);
    if (r.code !== 0) throw new Error(`${k} exited ${r.code}`);
    res[k]!.push(r.ms);
  };
  for (let i = 0; i < ROUNDS + 3; i++) {
    const first = { ...slurm, SLURM_STEP_ID: String(++step), SLURM_LOCALID: '0' };
    run('node -e 0', [node, '-e', '0'], {});
    run('task, first, agent', [viaAgent], first, USER);
    run('task, later', [viaAgent], { ...first, SLURM_LOCALID: '1' }, USER);
    run('task, first, gdrgate', [viaGate], { ...slurm, SLURM_STEP_ID: String(++step), SLURM_LOCALID: '0' }, USER);
    if (i === 2) for (const v of Object.values(res)) v.length = 0; // three rounds to warm the page cache and the agent
  }
  await new Promise((r) => setTimeout(r, 200));
  agent.kill('SIGTERM');
  const count = (msg: string): number => said.split('\n').filter((l) => l.includes(`"msg":"${msg}"`)).length;
  const answered = `${count('gdrgate agent: TaskProlog answered')} answered by the agent, ${count('gdrgate agent: TaskProlog left to gdrgate')} left to gdrgate`;
  if (!readFileSync(path.join(stateDir, `job-${job}`, 'task.json'), 'utf8').includes('"job":"300"')) throw new Error('no task record');
  const floor = median(res['node -e 0']!);
  console.log(`gdrgate bench: TaskProlog as uid ${USER} on the same tree, ${ROUNDS} alternating rounds (a new step each first task)`);
  for (const [k, v] of Object.entries(res)) console.log(`${k.padEnd(22)} p50 ${median(v).toFixed(1).padStart(6)} ms   ratio ${(median(v) / floor).toFixed(2)}`);
  console.log(`task, first, agent/node -e 0 (p50): ${(median(res['task, first, agent']!) / floor).toFixed(2)}   target <= 0.50   (first tasks: ${answered})`);
  rmSync(dir, { recursive: true, force: true });
}

await main();
