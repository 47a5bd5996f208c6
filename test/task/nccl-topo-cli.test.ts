// The built CLI end to end without Slurm: a class with ncclTopo makes the Prolog write the node's NCCL topology file,
// the TaskProlog exports NCCL_TOPO_FILE to a job whose /sys is flattened and not to one with the host's view, and the
// Epilog records which it was.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { reachableBuild, reachableNode, runBuilt, type Ran } from '../helpers/reachable.js';
import { scratchDir } from '../helpers/scratch.js';
import { allDevices, type GenDevice, type GenNode } from '../gen/sysfs-tree.js';
import { node as V100 } from '../gen/topologies/v100sxm2-4gpu-4nic-pairs.js';
import { jobRoot } from './_roots.js';

const isRoot = process.getuid?.() === 0;
const USER = 4243;
/** What the TaskProlog says of the flattened tree's /sys. */
const FLAT_WHY = "this job's /sys shows 5 devices of its GPU/RDMA path unlike the host (elsewhere: 0000:88:00.0, 0000:8a:00.0, 0000:8b:00.0, 0000:b3:00.0, 0000:b4:00.0; 0000:88:00.0 is at /sys/devices/pci0000:88/0000:88:00.0, on the host at /sys/devices/pci0000:85/0000:85:00.0/0000:86:00.0/0000:87:08.0/0000:88:00.0)";
let CLI = '';
/** A Node the job user can start (the project's own lies in the clone, which may be under a 0700 home). */
let NODE = process.execPath;

/** The reachable build as Slurm starts it (test/helpers/reachable.ts runBuilt). */
const run = (args: string[], env: Record<string, string>, uid?: number): Ran => runBuilt(NODE, CLI, args, env, uid);

/** The same GPUs and adapters, each alone on a root bus of its own: a container's flattened /sys. */
function flattened(n: GenNode): GenNode {
  const ends = allDevices(n).filter((d) => d.kind === 'gpu' || d.kind === 'nic').map((d): GenDevice => ({ ...d, children: [] }));
  return { ...n, hostBridges: ends.map((d) => ({ domainBus: d.bdf.slice(0, 7), numaNode: 0, devices: [d] })) };
}

if (!isRoot) t.skip('ncclTopo CLI: needs root (the prolog chowns to the job uid; the task runs as that uid)', () => {});
else await main();

async function main(): Promise<void> {
  const work = scratchDir('gdrgate-nccltopo-', '/tmp');
  fs.chmodSync(work, 0o755);
  CLI = reachableBuild(work);
  NODE = reachableNode(CLI);
  t.teardown(() => fs.rmSync(work, { recursive: true, force: true }));
  const tree = await jobRoot({ minors: [] }, path.join(work, 'tree'));
  const flat = await jobRoot({ node: flattened(V100), minors: [] }, path.join(work, 'flat'));
  const stateDir = path.join(work, 'run');
  const log = path.join(work, 'gate.log');
  const scontrol = path.join(work, 'scontrol');
  fs.writeFileSync(scontrol, '#!/bin/sh\nexit 1\n', { mode: 0o755 });
  const cap = run(['baseline', 'capture', '--root', tree, '--class', 't', '--match', '*'], {});
  t.equal(cap.code, 0, 'baseline captured from the tree', { stderr: cap.stderr });
  const config = (topo: boolean): string => {
    const baseline = JSON.parse(cap.stdout) as { classes: Record<string, unknown>[] };
    if (topo) baseline.classes[0]!.ncclTopo = true;
    const bfile = path.join(work, `baseline-${topo}.json`);
    fs.writeFileSync(bfile, JSON.stringify(baseline));
    const c = path.join(work, `config-${topo}.json`);
    fs.writeFileSync(c, JSON.stringify({ baseline: bfile, root: tree, scontrol, logFile: log, stateDir, spool: path.join(path.dirname(stateDir), 'spool') }), { mode: 0o644 });
    return c;
  };
  const [on, off] = [config(true), config(false)];
  const slurm = (job: string, extra: Record<string, string> = {}): Record<string, string> => ({ SLURM_JOB_ID: job, SLURMD_NODENAME: 'gpu001', ...extra });
  const prolog = (cfg: string, job: string): Ran =>
    run(['prolog', '--config', cfg], slurm(job, { SLURM_JOB_UID: String(USER), SLURM_JOB_GID: String(USER), SLURM_JOB_USER: 'u', SLURM_SCRIPT_CONTEXT: 'prolog_slurmd', SLURM_JOB_GPUS: '0' }));
  const task = (cfg: string, job: string, root: string, extra: Record<string, string> = {}): Ran => run(['task', '--config', cfg, '--root', root], slurm(job, extra), USER);
  const topoLines = (s: string): string[] => s.split('\n').filter((l) => /NCCL_TOPO_FILE/.test(l));

  await t.test('the Prolog writes the file, root-owned and read-only, equal to gdrgate topo --nccl-xml', async (t) => {
    t.equal(prolog(on, '90').code, 0, 'prolog exit 0');
    const file = path.join(stateDir, 'job-90', 'nccl-topo.xml');
    const st = fs.statSync(file);
    t.same([st.uid, st.mode & 0o777], [0, 0o444]);
    t.equal(fs.statSync(path.join(stateDir, 'job-90')).mode & 0o777, 0o700, 'in the job user\'s private directory');
    const topo = run(['topo', '--nccl-xml', '--root', tree], {});
    t.equal(fs.readFileSync(file, 'utf8'), topo.stdout);
  });

  await t.test('a job with a flattened /sys gets NCCL_TOPO_FILE, with the reason', async (t) => {
    const r = task(on, '90', flat);
    t.equal(r.code, 0, 'task exit 0', { stderr: r.stderr });
    const file = path.join(stateDir, 'job-90', 'nccl-topo.xml');
    const lines = topoLines(r.stdout);
    t.equal(lines.length, 2, r.stdout);
    t.equal(lines[0], `print gdrgate: ${FLAT_WHY}: NCCL_TOPO_FILE set to the host's topology (${file}) so that NCCL sees the node's real GPU-NIC paths`);
    t.equal(lines[1], `export NCCL_TOPO_FILE=${file}`);
    const e = run(['epilog', '--config', on], slurm('90', { SLURM_SCRIPT_CONTEXT: 'epilog_slurmd' }));
    t.equal(e.code, 0, 'epilog exit 0', { stderr: e.stderr });
    const view = fs.readFileSync(log, 'utf8').split('\n').filter((l) => l.includes('"job":"90"') && l.includes('gdrgate job view'));
    t.same(view.map((l) => (JSON.parse(l) as { ncclTopo: boolean }).ncclTopo), [true], 'the Epilog records that the job ran with it');
  });

  await t.test('a job with the host view, a job that set its own, a class without ncclTopo: no export', async (t) => {
    t.equal(prolog(on, '91').code, 0);
    t.same(topoLines(task(on, '91', tree).stdout), [], 'full view');
    const own = topoLines(task(on, '91', flat, { NCCL_TOPO_FILE: '/home/u/mine.xml' }).stdout);
    t.equal(own.length, 1);
    t.equal(own[0], `print gdrgate: ${FLAT_WHY}; NCCL_TOPO_FILE left as the job set it`);
    t.equal(prolog(off, '92').code, 0);
    t.equal(fs.existsSync(path.join(stateDir, 'job-92', 'nccl-topo.xml')), false, 'no file without ncclTopo');
    t.same(topoLines(task(off, '92', flat).stdout), []);
  });
}
