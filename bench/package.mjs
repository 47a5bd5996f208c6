// `npm run bench`, second part: the prolog as the packages run it, from the startup snapshot made on this machine
// (dist/gate.blob, `gdrgate startup-snapshot`) and from the one-file program without it (dist/gdrgate.cjs), against
// `node -e 0`, in one run, alternating rounds, p50; on the HGX H100 tree of test/gen/topologies (8 GPU / 8 NIC
// behind PCIe switches), a passing prolog that writes the job's state, with the environment slurmd gives a Prolog.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 30);
const node = process.execPath;
const dir = mkdtempSync(path.join(tmpdir(), 'gdrgate-bench-package-'));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function must(cmd, args, env = process.env) {
  const r = spawnSync(cmd, args, { cwd: repo, encoding: 'utf8', env, timeout: 300_000 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status ?? r.signal}\n${r.stderr}`);
  return r.stdout;
}

try {
  // The generator's modules, as `tsc -p bench/tsconfig.json` emits them for bench/prolog.ts.
  const gen = (f) => import(pathToFileURL(path.join(repo, '.bench/test/gen', f)).href);
  const { buildTree } = await gen('sysfs-tree.js');
  const { node: hgx } = await gen('topologies/sglang30401-hgx-h100.js');
  const tree = path.join(dir, 'tree');
  await buildTree(tree, hgx);
  writeFileSync(path.join(dir, 'baseline.json'), must(node, ['dist/cli.js', 'baseline', 'capture', '--root', tree, '--class', 'hgx', '--match', '*']));
  const config = path.join(dir, 'config.json');
  writeFileSync(config, JSON.stringify({ baseline: path.join(dir, 'baseline.json'), root: tree, scontrol: '/bin/false', logFile: path.join(dir, 'gate.log'), stateDir: path.join(dir, 'state') }));

  const cmds = {
    'node -e 0': [node, '-e', '0'],
    'blob (node --snapshot-blob dist/gate.blob)': [node, '--snapshot-blob', path.join(repo, 'dist/gate.blob'), 'prolog', '--config', config],
    'program (node dist/gdrgate.cjs)': [node, path.join(repo, 'dist/gdrgate.cjs'), 'prolog', '--config', config],
  };
  let job = 100;
  const env = () => ({ SLURMD_NODENAME: 'gpu001', SLURM_JOB_ID: String(++job), SLURM_JOB_UID: String(process.getuid()), SLURM_JOB_GID: String(process.getgid()), SLURM_JOB_GPUS: '0,1,2,3,4,5,6,7' });
  const timed = ([cmd, ...args]) => {
    const t0 = process.hrtime.bigint();
    const r = spawnSync(cmd, args, { encoding: 'utf8', env: env() });
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status ?? r.signal}\n${r.stderr}`);
    return Number(process.hrtime.bigint() - t0) / 1e6;
  };
  const ms = Object.fromEntries(Object.keys(cmds).map((k) => [k, []]));
  for (let i = 0; i < 3; i++) for (const c of Object.values(cmds)) timed(c); // warm the page cache
  for (let i = 0; i < ROUNDS; i++) for (const [k, c] of Object.entries(cmds)) ms[k].push(timed(c));
  const floor = median(ms['node -e 0']);
  console.log(`gdrgate bench (package): HGX H100 tree, 8 GPU / 8 NIC, passing prolog, ${ROUNDS} alternating rounds, node ${process.version}`);
  for (const [k, v] of Object.entries(ms)) console.log(`${k.padEnd(44)} p50 ${median(v).toFixed(1).padStart(6)} ms   ratio ${(median(v) / floor).toFixed(2)}`);
  const log = must('/bin/sh', ['-c', `grep -c '"startup":"snapshot"' ${config.replace('config.json', 'gate.log')} || true`]).trim();
  console.log(`gate log lines with "startup":"snapshot": ${log} (blob runs: ${ROUNDS + 3})`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
