// The agent's Prolog, this build against another (a worktree of an older commit, built with npm run build): each
// build's agent on the bench's 8-GPU tree, Prologs one at a time with a gap (as slurmd starts them, so that what an
// agent does after its answer is not in the next Prolog's way), each timed on its own from bash ($EPOCHREALTIME),
// blocks alternating. Prints each block's p50 wall and the agent's durationMs (its time to the answer).
// Usage (as root): node .bench/bench/agent-ab.js OTHER_REPO [BLOCKS=6] [PROLOGS=120]; FLAGS_A / FLAGS_B: Node's flags
// for each agent (default --max-semi-space-size=16 --expose-gc, as the package's unit), so that OTHER_REPO may be this one.
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildTree } from '../test/gen/sysfs-tree.js';
import { node as hgx } from '../test/gen/topologies/sglang30401-hgx-h100.js';

const REPO = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const [A, B] = [path.resolve(process.argv[2]!), REPO];
const ROUNDS = Number(process.argv[3] ?? 6);
const N = Number(process.argv[4] ?? 120);
const base = mkdtempSync(path.join(tmpdir(), 'gdrgate-ab-'));
const tree = path.join(base, 'tree');
await buildTree(tree, hgx);
const cap = spawnSync(process.execPath, [path.join(A, 'dist/cli.js'), 'baseline', 'capture', '--root', tree, '--class', 'hgx', '--match', '*'], { encoding: 'utf8' });
writeFileSync(path.join(base, 'baseline.json'), cap.stdout);
const slurmd = path.join(base, 'slurmd');
symlinkSync('/bin/bash', slurmd);
let job = 5000;
const med = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const flags = (tag: string): string[] => (process.env[`FLAGS_${tag}`] ?? '--max-semi-space-size=16 --expose-gc').split(' ').filter(Boolean);
async function run(repo: string, tag: string): Promise<number[]> {
  const dir = mkdtempSync(path.join(base, `${tag}-`));
  const config = path.join(dir, 'config.json');
  writeFileSync(config, JSON.stringify({ baseline: path.join(base, 'baseline.json'), root: tree, scontrol: '/bin/false', logFile: path.join(dir, 'gate.log'), stateDir: path.join(dir, 'state') }));
  const wrapper = path.join(dir, 'gdrgate-prolog.sh');
  copyFileSync(path.join(repo, 'slurm/prolog.sh'), wrapper);
  chmodSync(wrapper, 0o755);
  const agentDir = path.join(dir, 'agent');
  writeFileSync(path.join(dir, 'gdrgate-prolog.conf'), `NODE=${process.execPath}\nCLI=${path.join(repo, 'dist/cli.js')}\nCONFIG=${config}\nAGENT=${agentDir}\n`);
  const agent = spawn(process.execPath, [...flags(tag), path.join(repo, 'dist/cli.js'), 'agent', '--config', config, '--dir', agentDir], { stdio: 'ignore' });
  for (let i = 0; i < 500 && !existsSync(path.join(agentDir, 'agent.pid')); i++) await new Promise((r) => setTimeout(r, 20));
  const script = `for i in $(seq ${N}); do j=$((${job} + i)); t0=$EPOCHREALTIME; env -i SLURMD_NODENAME=gpu001 SLURM_JOB_ID=$j SLURM_JOB_UID=65534 SLURM_JOB_GID=65534 SLURM_JOB_GPUS=0,1,2,3,4,5,6,7 ${wrapper} >/dev/null; t1=$EPOCHREALTIME; echo $(( \${t1/./} - \${t0/./} )); read -t 0.03 <> <(:); done`;
  job += N + 10;
  const r = spawnSync(slurmd, ['-c', script], { encoding: 'utf8' });
  agent.kill('SIGTERM');
  await new Promise((res) => agent.once('exit', res));
  const log = readFileSync(path.join(dir, 'gate.log'), 'utf8');
  const answered = (log.match(/"startup":"agent"/g) ?? []).length;
  if (answered !== N) console.log(`${tag}: only ${answered} of ${N} answered by the agent`);
  const d = [...log.matchAll(/"durationMs":(\d+)/g)].map((m) => Number(m[1]));
  console.log(`${tag}: agent durationMs p50 ${med(d)} (${d.length})`);
  return r.stdout.split('\n').filter(Boolean).map(Number);
}
const all: Record<string, number[]> = { A: [], B: [] };
for (let k = 0; k < ROUNDS; k++) {
  for (const [tag, repo] of k % 2 ? [['B', B], ['A', A]] : [['A', A], ['B', B]]) {
    const xs = await run(repo!, tag!);
    all[tag!]!.push(...xs);
    console.log(`round ${k + 1} ${tag}: p50 ${(med(xs) / 1000).toFixed(2)} ms (${xs.length})`);
  }
}
console.log(`A ${A} ${flags('A').join(' ')}: p50 ${(med(all.A!) / 1000).toFixed(2)} ms   B ${B} ${flags('B').join(' ')}: p50 ${(med(all.B!) / 1000).toFixed(2)} ms`);
rmSync(base, { recursive: true, force: true });
