// Where the agent's time per answered Prolog goes, on this machine: the 8-GPU tree of bench/prolog.ts, an agent
// started with --cpu-prof, N Prologs through slurm/prolog.sh (started by a process named slurmd), then the profile's
// hottest functions (bench/profile-top.mjs) and the agent's durationMs per run. Usage: node .bench/bench/agent-profile.js [N]
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdtempSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildTree } from '../test/gen/sysfs-tree.js';
import { node as hgx } from '../test/gen/topologies/sglang30401-hgx-h100.js';

const REPO = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const CLI = path.join(REPO, 'dist/cli.js');
const N = Number(process.argv[2] ?? 300);

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'gdrgate-agentprof-'));
  const tree = path.join(dir, 'tree');
  await buildTree(tree, hgx);
  const cap = spawnSync(process.execPath, [CLI, 'baseline', 'capture', '--root', tree, '--class', 'hgx', '--match', '*'], { encoding: 'utf8' });
  if (cap.status !== 0) throw new Error(`baseline capture failed: ${cap.stderr}`);
  writeFileSync(path.join(dir, 'baseline.json'), cap.stdout);
  const config = path.join(dir, 'config.json');
  const log = path.join(dir, 'gate.log');
  writeFileSync(config, JSON.stringify({ baseline: path.join(dir, 'baseline.json'), root: tree, scontrol: '/bin/false', logFile: log, stateDir: path.join(dir, 'state') }));
  const agentDir = path.join(dir, 'agent');
  const wrapper = path.join(dir, 'gdrgate-prolog.sh');
  copyFileSync(path.join(REPO, 'slurm/prolog.sh'), wrapper);
  chmodSync(wrapper, 0o755);
  writeFileSync(path.join(dir, 'gdrgate-prolog.conf'), `NODE=${process.execPath}\nCLI=${CLI}\nCONFIG=${config}\nAGENT=${agentDir}\n`);
  const slurmd = path.join(dir, 'slurmd');
  symlinkSync('/bin/bash', slurmd);
  const prof = path.join(dir, 'prof');
  const agent = spawn(process.execPath, ['--cpu-prof', `--cpu-prof-dir=${prof}`, '--cpu-prof-interval', '50', '--max-semi-space-size=16', '--expose-gc', CLI, 'agent', '--config', config, '--dir', agentDir], { stdio: 'ignore' });
  for (let i = 0; i < 500 && !existsSync(path.join(agentDir, 'agent.pid')); i++) await new Promise((r) => setTimeout(r, 20));
  if (!existsSync(path.join(agentDir, 'agent.pid'))) throw new Error('gdrgate agent did not start');
  const script = `for i in $(seq ${N}); do env -i SLURMD_NODENAME=gpu001 SLURM_JOB_ID=$((1000 + i)) SLURM_JOB_UID=${process.getuid!()} SLURM_JOB_GID=${process.getgid!()} SLURM_JOB_GPUS=0,1,2,3,4,5,6,7 ${wrapper} >/dev/null || echo "exit $?"; done`;
  const t0 = performance.now();
  const r = spawnSync(slurmd, ['-c', script], { encoding: 'utf8' });
  const wall = performance.now() - t0;
  process.stdout.write(r.stdout);
  const exited = new Promise((res) => agent.once('exit', res));
  agent.kill('SIGTERM');
  await exited;
  const lines = readFileSync(log, 'utf8').split('\n').filter((l) => l.includes('"startup":"agent"'));
  const d = lines.map((l) => Number(/"durationMs":(\d+)/.exec(l)?.[1])).sort((a, b) => a - b);
  console.log(`${lines.length} of ${N} answered by the agent; wrapper wall ${(wall / N).toFixed(2)} ms each; durationMs p50 ${d[d.length >> 1]} p90 ${d[Math.floor(d.length * 0.9)]}`);
  console.log(`profile: ${prof}/${readdirSync(prof)[0]}`);
  spawnSync(process.execPath, [path.join(REPO, 'bench/profile-top.mjs'), prof], { stdio: 'inherit', env: { ...process.env } });
}
await main();
