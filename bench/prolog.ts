// `npm run bench`: what the prolog costs every job. Builds an 8-GPU/8-NIC switch-heavy tree (the HGX H100
// of test/gen/topologies, plus the NVSwitches, NVMe drives and management NIC such a node also carries),
// then times, alternating in one run: `node -e 0` (the floor); Node from an empty user-land snapshot and the
// gate's blob stopping before its first read (where a snapshot-started gate's own floor lies); the prolog as Slurm runs it
// (slurm/prolog.sh with its .conf, and with its settings written in as the package installs it), a passing run that
// writes the job's state: answered by a running `gdrgate agent`,
// then without an agent (node --snapshot-blob dist/gate.blob), then without the blob either (node dist/cli.js);
// and `gdrgate check --json`. The agent's own cost is printed beside: CPU per answered Prolog and resident memory. Prints medians, the prolog/floor ratio,
// peak RSS and spawns on the pass path; then the epilog's sample spool on 1M samples (bench/samples.mjs).
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildTree } from '../test/gen/sysfs-tree.js';
import { node as hgx } from '../test/gen/topologies/sglang30401-hgx-h100.js';
import { withOthers } from './hgx-others.js';

const REPO = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const CLI = path.join(REPO, 'dist/cli.js');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 30);

/** utime + stime of a process so far, in ms (/proc/<pid>/stat fields 14 and 15, in clock ticks of 10 ms). */
function agentCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * GNU time, started through a link named slurmd: the process that starts every timed command is then "slurmd" to
 * the kernel (a process's name is the name it was executed by), as slurmd itself is the parent of a real Prolog,
 * and the agent, which judges only for a process with slurmd among its ancestors, answers. Floors and Prologs alike
 * run under it, with no process between it and them.
 */
let TIME = '/usr/bin/time';

/** Runs `cmd` with exactly `env` (nothing inherited: slurmd gives a Prolog only SLURM_* variables, not even PATH). */
function timed(cmd: string[], env: NodeJS.ProcessEnv): { ms: number; rssKiB: number; code: number | null } {
  const t0 = process.hrtime.bigint();
  // GNU time reports the child's peak RSS (%M, KiB) on stderr's last line.
  const r = spawnSync(TIME, ['-f', '%M', ...cmd], { encoding: 'utf8', env });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  const rss = Number(r.stderr.trim().split('\n').pop());
  return { ms, rssKiB: rss, code: r.status };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'gdrgate-bench-'));
  const tree = path.join(dir, 'tree');
  await buildTree(tree, withOthers(hgx));
  const cap = spawnSync(process.execPath, [CLI, 'baseline', 'capture', '--root', tree, '--class', 'hgx', '--match', '*'], { encoding: 'utf8' });
  if (cap.status !== 0) throw new Error(`baseline capture failed: ${cap.stderr}`);
  writeFileSync(path.join(dir, 'baseline.json'), cap.stdout);
  const config = path.join(dir, 'config.json');
  writeFileSync(
    config,
    JSON.stringify({ baseline: path.join(dir, 'baseline.json'), root: tree, scontrol: '/bin/false', logFile: path.join(dir, 'gate.log'), stateDir: path.join(dir, 'state') }),
  );
  if (!existsSync(path.join(REPO, 'dist/gate.blob'))) throw new Error('dist/gate.blob missing: npm run build makes it');
  // The Slurm Prolog: slurm/prolog.sh unchanged, its .conf beside it pointing at this build; once asking the agent
  // (gdrgate-prolog.sh), once with AGENT= empty (gdrgate-noagent.sh: the blob, as without an agent installed).
  const agentDir = path.join(dir, 'agent');
  const wrappers = ['prolog', 'noagent'].map((name) => {
    const file = path.join(dir, `gdrgate-${name}.sh`);
    copyFileSync(path.join(REPO, 'slurm/prolog.sh'), file);
    chmodSync(file, 0o755);
    writeFileSync(path.join(dir, `gdrgate-${name}.conf`), `NODE=${process.execPath}\nCLI=${CLI}\nCONFIG=${config}\nAGENT=${name === 'prolog' ? agentDir : ''}\n`);
    return file;
  });
  // As the package installs it: the settings written into the wrapper itself (scripts/package.mjs setVars), no .conf
  // beside it, so no /usr/bin/stat for the .conf's trust on each Prolog.
  const baked = path.join(dir, 'gdrgate-baked.sh');
  const vars: Record<string, string> = { NODE: process.execPath, CLI, CONFIG: config, AGENT: agentDir };
  let text = readFileSync(path.join(REPO, 'slurm/prolog.sh'), 'utf8');
  for (const [k, v] of Object.entries(vars)) {
    const re = new RegExp(`^${k}=.*$`, 'm');
    if (!re.test(text)) throw new Error(`slurm/prolog.sh: no ${k}= line`);
    text = text.replace(re, `${k}=${v}`);
  }
  writeFileSync(baked, text, { mode: 0o755 });
  // slurmd starts a Prolog: a process of that name is its parent (the agent judges only such a Prolog): TIME above.
  TIME = path.join(dir, 'slurmd');
  symlinkSync('/usr/bin/time', TIME);
  const agent = spawn(process.execPath, ['--max-semi-space-size=16', '--expose-gc', CLI, 'agent', '--config', config, '--dir', agentDir], { stdio: 'ignore' });
  for (let i = 0; i < 500 && !existsSync(path.join(agentDir, 'agent.pid')); i++) await new Promise((r) => setTimeout(r, 20));
  if (!existsSync(path.join(agentDir, 'agent.pid'))) throw new Error('gdrgate agent did not start');
  const spawnFile = path.join(dir, 'spawns');
  const node = process.execPath;
  // Where the floor of a snapshot-started gate lies: Node starting from a user-land snapshot holding nothing, and
  // the gate's blob saying its version (`version`, which src/cli/run.ts answers first; `--version` would be Node's
  // own) before it reads anything. Until 2026-12-04 this row ran an unknown command, exit 2, whose usage text, laid
  // out by yargs, cost more than a Prolog: it measured no floor.
  const empty = path.join(dir, 'empty.blob');
  writeFileSync(path.join(dir, 'empty.cjs'), "require('node:v8').startupSnapshot.setDeserializeMainFunction(() => {});\n");
  const mk = spawnSync(node, ['--snapshot-blob', empty, '--build-snapshot', path.join(dir, 'empty.cjs')], { encoding: 'utf8' });
  if (mk.status !== 0) throw new Error(`empty snapshot: ${mk.stderr}`);
  const cmds = {
    'node -e 0': [node, '-e', '0'],
    'empty snapshot': [node, '--snapshot-blob', empty],
    'gate.blob version': [node, '--snapshot-blob', path.join(REPO, 'dist/gate.blob'), 'version'],
    'prolog, agent': [wrappers[0]!],
    'agent, no .conf': [baked],
    'prolog (Slurm)': [wrappers[1]!],
    'prolog, no blob': [node, CLI, 'prolog', '--config', config],
    'check --json': [node, CLI, 'check', '--json', '--root', tree],
  };
  const res: Record<string, { ms: number[]; rss: number[] }> = {};
  for (const k of Object.keys(cmds)) res[k] = { ms: [], rss: [] };
  // What slurmd gives a Prolog for a job on all 8 GPUs, a new job each run: the gate writes that job's state. A user's
  // job (nobody's, 65534, when this runs as root): the agent hands a user's job a TaskProlog FIFO from its pool, which
  // it tops up with mkfifo, and that cost counts; a root job's it never does.
  const user = process.getuid!() === 0 ? 65534 : process.getuid!();
  let job = 100;
  const env = (): NodeJS.ProcessEnv => ({
    SLURMD_NODENAME: 'gpu001',
    SLURM_JOB_ID: String(++job),
    SLURM_JOB_UID: String(user),
    SLURM_JOB_GID: String(user),
    SLURM_JOB_GPUS: '0,1,2,3,4,5,6,7',
  });
  for (let i = 0; i < 3; i++) for (const c of Object.values(cmds)) timed(c, env()); // warm the page cache
  const cpu0 = agentCpuMs(agent.pid!);
  for (let i = 0; i < ROUNDS; i++)
    for (const [k, c] of Object.entries(cmds)) {
      const r = timed(c, env());
      if (r.code !== 0) throw new Error(`${k} exited ${r.code}`);
      res[k]!.ms.push(r.ms);
      res[k]!.rss.push(r.rssKiB);
    }
  // The floor in the environment this bench was started from: variables such as NODE_EXTRA_CA_CERTS (Node reads
  // that CA bundle at every start) raise `node -e 0` itself, and would flatter the ratio; Slurm passes none.
  const inherited: number[] = [];
  for (let i = 0; i < Math.min(ROUNDS, 10); i++) inherited.push(timed([node, '-e', '0'], process.env).ms);
  const nodeVars = Object.keys(process.env).filter((k) => k.startsWith('NODE_'));
  const sp = spawnSync(node, ['--import', path.join(REPO, 'bench/count-spawns.mjs'), CLI, 'prolog', '--config', config], { encoding: 'utf8', env: { ...env(), GDRGATE_SPAWN_COUNT_FILE: spawnFile } });
  const spawns = sp.status === 0 ? Number(readFileSync(spawnFile, 'utf8')) : NaN;
  // Two rows ask the agent each round ('prolog, agent' and 'agent, no .conf'): its CPU is shared by both.
  const answered = ['prolog, agent', 'agent, no .conf'].length * ROUNDS;
  const agentCpu = (agentCpuMs(agent.pid!) - cpu0) / answered;
  const agentRss = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${agent.pid}/status`, 'utf8'))?.[1];
  agent.kill('SIGTERM');
  const floor = median(res['node -e 0']!.ms);
  console.log(`gdrgate bench: 8 GPU / 8 NIC / 8 PCIe switches + 12 other devices, ${ROUNDS} alternating rounds, node ${process.version}`);
  console.log('every command runs in the environment slurmd gives a Prolog: SLURM_* variables only, a new job id each run');
  for (const [k, v] of Object.entries(res))
    console.log(`${k.padEnd(16)} p50 ${median(v.ms).toFixed(1).padStart(6)} ms   ratio ${(median(v.ms) / floor).toFixed(2)}   peak RSS ${(Math.max(...v.rss) / 1024).toFixed(1)} MiB`);
  console.log(`prolog, agent/node -e 0 (p50): ${(median(res['prolog, agent']!.ms) / floor).toFixed(2)}   goal <= 0.25 (settings built in as packaged, no .conf: ${(median(res['agent, no .conf']!.ms) / floor).toFixed(2)}); without an agent, prolog (Slurm): ${(median(res['prolog (Slurm)']!.ms) / floor).toFixed(2)}   goal <= 1.30`);
  console.log(`the agent's own cost: CPU ${agentCpu.toFixed(1)} ms per answered prolog (user+sys, 10 ms ticks averaged over ${answered}), peak RSS ${(Number(agentRss) / 1024).toFixed(1)} MiB resident`);
  console.log(`processes spawned by a passing prolog (the gate's code, counted in its no-blob run): ${spawns}   target 0`);
  console.log(`node -e 0 in the environment this bench was started from: p50 ${median(inherited).toFixed(1)} ms${nodeVars.length ? ` (it sets ${nodeVars.join(', ')})` : ''}`);
  const log = readFileSync(path.join(dir, 'gate.log'), 'utf8');
  const count = (re: RegExp): number => (log.match(re) ?? []).length;
  console.log(`Slurm prologs answered by the agent: ${count(/"startup":"agent"/g)} of ${2 * (ROUNDS + 3)}; started from the blob: ${count(/"startup":"snapshot"/g)} of ${ROUNDS + 3}; log lines above info: ${count(/"level":[45]\d/g)}`);
  // BENCH_KEEP=1 leaves the tree, baseline and config for profiling (`node --cpu-prof dist/cli.js prolog --config …`).
  if (process.env.BENCH_KEEP) console.log(`kept: ${config}`);
  else rmSync(dir, { recursive: true, force: true });
  // The epilog's sample spool: 1M appends, then read + stats (bench/samples.mjs, on the same dist/).
  console.log('gdrgate bench: sample spool (bench/samples.mjs)');
  const samples = spawnSync(node, [path.join(REPO, 'bench/samples.mjs')], { stdio: 'inherit' });
  if (samples.status !== 0) throw new Error(`bench/samples.mjs exited ${samples.status}`);
}

await main();
