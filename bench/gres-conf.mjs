// The Prolog's gres.conf reading (job-placement, the job's GPU numbering), per parse of a DGX-style file: one line a
// GPU with Type= and Cores=. Usage: node bench/gres-conf.mjs [OTHER_DIST] (after npm run build; OTHER_DIST: another
// build's dist/ to time beside this one, e.g. a worktree of an older commit built with tsc).
import path from 'node:path';

const REPO = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const text = ['# DGX H100', 'AutoDetect=off', ...Array.from({ length: 8 }, (_, i) => `NodeName=dgx[001-128] Name=gpu Type=h100 File=/dev/nvidia${i} Cores=${i < 4 ? '0-55' : '56-111'}`)].join('\n') + '\n';
const builds = [['this', path.join(REPO, 'dist')], ...(process.argv[2] ? [['other', path.resolve(process.argv[2])]] : [])];
const parsers = await Promise.all(builds.map(async ([name, dist]) => [name, (await import(path.join(dist, 'parsers/gres-conf.js'))).parseGresConf]));
const time = (f) => {
  for (let i = 0; i < 2000; i++) f(text);
  const t0 = performance.now();
  for (let i = 0; i < 20000; i++) f(text);
  return ((performance.now() - t0) / 20) .toFixed(2);
};
for (let round = 1; round <= 3; round++) console.log(`round ${round}: ${parsers.map(([name, f]) => `${name} ${time(f)} µs`).join('   ')}`);

// And, under AutoDetect=nvml, slurm.conf's Gres= for the node (src/slurm/node-gres.ts): a 1,024-node cluster's
// slurm.conf, 64 NodeName= lines of 16 nodes each behind a DEFAULT, parsed and the node's line found (this build only).
const { parseConf } = await import(path.join(REPO, 'dist/slurm/conf-parse.js'));
const { nodeGpuAsk } = await import(path.join(REPO, 'dist/slurm/node-gres.js'));
const conf = ['ClusterName=c', 'SlurmctldHost=head', 'GresTypes=gpu', 'NodeName=DEFAULT CPUs=224 Sockets=2 CoresPerSocket=56 ThreadsPerCore=2 RealMemory=2000000 Gres=gpu:8 State=UNKNOWN',
  ...Array.from({ length: 64 }, (_, i) => `NodeName=dgx[${String(i * 16 + 1).padStart(4, '0')}-${String(i * 16 + 16).padStart(4, '0')}] Feature=rack${i}`),
  'PartitionName=gpu Nodes=ALL Default=YES MaxTime=INFINITE'].join('\n') + '\n';
const ask = () => nodeGpuAsk(parseConf(conf, 'slurm.conf').order.flatMap((o) => (o.kind === 'entry' ? [o.entry] : [])), 'dgx0777');
if (JSON.stringify(ask()) !== '{"ok":true,"value":{"count":8,"untyped":true,"types":[]}}') throw new Error(`slurm.conf read wrongly: ${JSON.stringify(ask())}`);
for (let i = 0; i < 200; i++) ask();
for (let round = 1; round <= 3; round++) {
  const t0 = performance.now();
  for (let i = 0; i < 2000; i++) ask();
  console.log(`slurm.conf (${conf.length} bytes, 64 NodeName= lines) round ${round}: ${((performance.now() - t0) / 2).toFixed(2)} µs`);
}
