// Before and after: what ncclTopo adds to the Prolog's per-job state (recordJobState), for two builds of gdrgate's
// modules in one process, alternating run by run so that the machine's load falls on both alike.
//   git archive <before> | tar -x -C /tmp/before && ln -s "$PWD/node_modules" /tmp/before/ && (cd /tmp/before && npx tsc -p tsconfig.json)
//   npm run build && npx tsc -p bench/tsconfig.json && node bench/nccl-topo-ab.mjs /tmp/before/dist dist
// The tree is the 8-GPU/8-NIC HGX H100 one of test/gen (this checkout's generator); the state on tmpfs where
// /dev/shm is. Prints, per build, the added wall and CPU time (p50 and min).
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [before, after] = process.argv.slice(2).map((d) => path.resolve(d));
if (!before || !after) throw new Error('usage: node bench/nccl-topo-ab.mjs BEFORE_DIST AFTER_DIST');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 300);
const WARM = 30;
const repo = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const url = (p) => pathToFileURL(p).href;
const load = async (d) => ({
  FsHost: (await import(url(`${d}/host/fs-host.js`))).FsHost,
  buildInventory: (await import(url(`${d}/inventory/build.js`))).buildInventory,
  recordJobState: (await import(url(`${d}/state/prolog.js`))).recordJobState,
});
const builds = [await load(before), await load(after)];
const { buildTree } = await import(url(`${repo}/.bench/test/gen/sysfs-tree.js`));
const { node: hgx } = await import(url(`${repo}/.bench/test/gen/topologies/sglang30401-hgx-h100.js`));

const dir = mkdtempSync(path.join(tmpdir(), 'gdrgate-bench-ab-'));
const state = existsSync('/dev/shm') ? mkdtempSync('/dev/shm/gdrgate-bench-ab-') : dir;
await buildTree(path.join(dir, 'tree'), { ...hgx, cpuModalias: 'cpu:type:x86,ven0000fam0006mod008F:feature:,0000' });
const sides = await Promise.all(builds.map(async (m) => {
  const host = new m.FsHost(path.join(dir, 'tree'));
  return { m, host, inv: await m.buildInventory(host, { slurmdPidFiles: [] }) };
}));
const runs = [[0, false], [0, true], [1, false], [1, true]];
const wall = runs.map(() => []);
const cpu = runs.map(() => []);
let job = 1;
for (let i = 0; i < ROUNDS + WARM; i++) {
  for (const [r, [s, on]] of runs.entries()) {
    const { m, host, inv } = sides[s];
    const env = { SLURM_JOB_ID: String(++job), SLURM_JOB_UID: String(process.getuid()), SLURM_JOB_GID: String(process.getgid()) };
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    const res = await m.recordJobState({ stateDir: `${state}/s${s}`, env, node: 'gpu001', host, inv, memlockMin: 'unlimited', ncclTopo: on });
    const dt = performance.now() - t0;
    const c = process.cpuUsage(c0);
    if (!res.ok || res.ncclTopoWhy !== undefined) throw new Error(res.ok ? res.ncclTopoWhy : res.why);
    if (i >= WARM) {
      wall[r].push(dt);
      cpu[r].push((c.user + c.system) / 1000);
    }
    rmSync(`${state}/s${s}/job-${job}`, { recursive: true, force: true });
  }
}
const q = (x, p) => [...x].sort((a, b) => a - b)[Math.floor(x.length * p)];
const d = (x, on, off, p) => (q(x[on], p) - q(x[off], p)).toFixed(2);
process.stdout.write(`ncclTopo's addition to recordJobState, ${ROUNDS} runs each, state on ${state === dir ? tmpdir() : 'tmpfs (/dev/shm)'}\n`);
for (const [name, s] of [[`before (${before})`, 0], [`after (${after})`, 1]]) {
  const [off, on] = [2 * s, 2 * s + 1];
  process.stdout.write(`  ${name}: wall p50 ${d(wall, on, off, 0.5)} ms, min ${d(wall, on, off, 0)} ms; CPU p50 ${d(cpu, on, off, 0.5)} ms, min ${d(cpu, on, off, 0)} ms\n`);
}
rmSync(dir, { recursive: true, force: true });
if (state !== dir) rmSync(state, { recursive: true, force: true });
