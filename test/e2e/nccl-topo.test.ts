// End to end: a class with ncclTopo under a real single-node Slurm (test/e2e/sandbox). The Prolog writes the node's
// NCCL topology file into the job's state; the TaskProlog (slurm/taskprolog.sh) runs, for jobs named flat*, in a mount
// namespace of its own (unshare -Urm, then the job's uid mapped back) whose /sys is a flattened tree bound over the host's,
// and there hands the job NCCL_TOPO_FILE with its reason; a job with the host's view gets nothing, a job that set
// NCCL_TOPO_FILE keeps its own; the Epilog logs which. Judged by the jobs' own output and the gate's log.
// Runs when CI is set or GDRGATE_E2E=1, as root.
import t from 'tap';
import { existsSync, mkdirSync, chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { reachableBuild, reachableNode } from '../helpers/reachable.js';
import { jobRoot } from '../task/_roots.js';
import { allDevices, type GenDevice, type GenNode } from '../gen/sysfs-tree.js';
import { node as V100 } from '../gen/topologies/v100sxm2-4gpu-4nic-pairs.js';
import { cleanEnv as sandboxEnv, freePortPair, gateConf, installWrapper, REPO, run as runProgram, runOrSkip, sandbox, secs, waitFor as poll, type Ran, type RunOpts } from './_sandbox.js';

const BUILT = join(REPO, 'dist/cli.js');
const USER = 'gdrtest';
const run = (file: string, args: readonly string[], opts: RunOpts = {}): Ran => runProgram(file, args, { ...opts, withoutNodeOptions: true });
const cleanEnv = (extra: Record<string, string>): NodeJS.ProcessEnv => sandboxEnv(extra, true);
const waitFor = <T>(probe: () => T, ok: (v: T) => boolean, timeoutMs: number) => poll(probe, ok, timeoutMs, 200);

/** The same GPUs and adapters, each alone on a root bus of its own: what a container's flattened /sys shows. */
function flattened(n: GenNode): GenNode {
  const ends = allDevices(n).filter((d) => d.kind === 'gpu' || d.kind === 'nic').map((d): GenDevice => ({ ...d, children: [] }));
  return { ...n, hostBridges: ends.map((d) => ({ domainBus: d.bdf.slice(0, 7), numaNode: 0, devices: [d] })) };
}

await runOrSkip(t, 'nccl-topo', e2e, 'it must run as root (it starts munged, slurmctld and slurmd)', '');

async function e2e(): Promise<void> {
  t.setTimeout(240_000);
  if (!existsSync(BUILT)) return void t.fail(`${BUILT} is missing: build first (npm run build)`);
  if (run('/usr/bin/id', ['-u', USER]).status !== 0) {
    const u = run('/usr/sbin/useradd', ['-m', USER]);
    if (u.status !== 0) return void t.fail(`cannot create the job user ${USER}: ${u.stderr}`);
  }
  const sb = sandbox(t, { prefix: '/tmp/gdrgate-nccltopo-e2e-', port: await freePortPair({ from: 8020, to: 8090 }), forJobs: true, inspect: () => `job outputs in ${JOBS}` });
  const { WORK, DIR, CONF, CONFIG, BASELINE, LOG, port } = sb;
  const CLI = reachableBuild(WORK);
  // A Node the job user can start (the project's own lies in the clone, which may be under a 0700 home).
  const NODE = reachableNode(CLI);
  const STATE = join(WORK, 'run');
  const JOBS = join(WORK, 'jobs');
  mkdirSync(JOBS, { mode: 0o1777 });
  chmodSync(JOBS, 0o1777);
  const HOST = await jobRoot({ minors: [] }, join(WORK, 'tree'));
  const FLAT = await jobRoot({ node: flattened(V100), minors: [] }, join(WORK, 'tree-flat'));

  const cap = run(NODE, [CLI, 'baseline', 'capture', '--root', HOST, '--class', 'sandbox', '--match', '*'], { timeoutMs: 30_000 });
  if (cap.status !== 0) return void t.fail('baseline capture', { stderr: cap.stderr });
  const baseline = JSON.parse(cap.stdout) as { classes: Record<string, unknown>[] };
  baseline.classes[0]!.ncclTopo = true;
  baseline.classes[0]!.memlockMin = 8 * 1024 * 1024; // slurmd's limit here: no memlock line in the jobs' output
  writeFileSync(BASELINE, JSON.stringify(baseline, null, 2) + '\n', { mode: 0o644 });
  writeFileSync(CONFIG, JSON.stringify({ baseline: BASELINE, root: HOST, scontrol: '/usr/bin/scontrol', logFile: LOG, stateDir: STATE, spool: join(STATE, '..', 'spool') }, null, 2) + '\n', { mode: 0o644 });

  const PROLOG = join(WORK, 'gdrgate-prolog.sh');
  const TASKPROLOG = join(WORK, 'gdrgate-taskprolog.sh');
  const EPILOG = join(WORK, 'gdrgate-epilog.sh');
  const conf = gateConf(CLI, CONFIG, NODE);
  installWrapper('prolog', PROLOG, conf);
  installWrapper('taskprolog', TASKPROLOG, `${conf}ROOT=${HOST}\n`);
  writeFileSync(EPILOG, `#!/bin/sh\n# e2e Epilog: gdrgate's per-job state cleanup\nexec ${NODE} ${CLI} epilog --config ${CONFIG}\n`, { mode: 0o755 });
  // In a user namespace root's files are nobody's, so the wrapper rightly refuses its .conf there: for the namespace,
  // slurm/taskprolog.sh with its settings written in, as the package installs it.
  const BAKED = join(WORK, 'gdrgate-taskprolog-baked.sh');
  let text = readFileSync(join(REPO, 'slurm/taskprolog.sh'), 'utf8');
  for (const [k, v] of Object.entries({ NODE: NODE, CLI, CONFIG, ROOT: HOST })) text = text.replace(new RegExp(`^${k}=.*$`, 'm'), `${k}=${v}`);
  writeFileSync(BAKED, text, { mode: 0o755 });
  // What slurm.conf's TaskProlog= runs: the wrapper, for flat* jobs inside a mount namespace (the job user's own, its
  // uid kept) where the host tree's /sys is the flattened one.
  const NS = join(WORK, 'taskprolog-ns.sh');
  writeFileSync(NS, [
    '#!/bin/sh',
    'case "$SLURM_JOB_NAME" in',
    // mount(8) wants uid 0: the bind is made as the namespace's root, then a nested user namespace maps the job's
    // uid and gid back, so the TaskProlog runs as the job's user (its state directory is that uid's) in that view.
    `  flat*) exec /usr/bin/unshare -Urm /bin/sh -c "mount --bind ${FLAT}/sys ${HOST}/sys && exec /usr/bin/unshare --map-user=$(id -u) --map-group=$(id -g) ${BAKED}" ;;`,
    'esac',
    `exec ${TASKPROLOG}`,
    '',
  ].join('\n'), { mode: 0o755 });

  const t1 = performance.now();
  const up = sb.start({ SANDBOX_CRED_EXPIRE: '5', SANDBOX_PROLOG_FLAGS: 'Alloc', GATE_PROLOG: PROLOG, GATE_EPILOG: EPILOG, SANDBOX_EXTRA_CONF: `TaskProlog=${NS}` });
  if (up.status !== 0) return void t.fail('start.sh brought the sandbox up', { status: up.status, stderr: up.stderr.slice(-3000) });
  t.comment(`sandbox up on port ${port}: ${DIR} (${secs(t1)})`);

  const clientEnv = cleanEnv({ SLURM_CONF: CONF });
  const submit = (name: string, wrap: string, args = ''): string => {
    const sh = `exec /usr/bin/sbatch --parsable -J ${name} -o ${JOBS}/${name}.out ${args} --wrap "$1"`;
    const r = run('/usr/sbin/runuser', ['-u', USER, '--', '/bin/bash', '-c', sh, 'sbatch', wrap], { env: clientEnv, cwd: JOBS });
    if (r.status !== 0) throw new Error(`sbatch as ${USER} failed (${r.status}): ${r.stderr}`);
    return r.stdout.trim().split(';')[0]!;
  };
  const jobState = (id: string): string => /JobState=(\S+)/.exec(run('/usr/bin/scontrol', ['show', 'job', id], { env: clientEnv }).stdout)?.[1] ?? '?';
  const finished = async (id: string): Promise<string> => (await waitFor(() => jobState(id), (s) => /^(COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL)$/.test(s), 60_000)).value;
  const output = (name: string): string => (existsSync(join(JOBS, `${name}.out`)) ? readFileSync(join(JOBS, `${name}.out`), 'utf8') : '');
  const logLines = (): Record<string, unknown>[] => (existsSync(LOG) ? readFileSync(LOG, 'utf8') : '').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
  const viewLine = async (id: string): Promise<Record<string, unknown> | undefined> =>
    (await waitFor(() => logLines().find((l) => l.job === id && String(l.msg).startsWith('gdrgate job view')), (v) => v !== undefined, 30_000)).value;
  // The job prints what it got, and the file's first line when it can read it.
  const probe = 'echo "topo=${NCCL_TOPO_FILE:-unset}"; if [ -n "$NCCL_TOPO_FILE" ] && [ -r "$NCCL_TOPO_FILE" ]; then head -n 1 "$NCCL_TOPO_FILE"; fi';
  // What the TaskProlog tells a job whose /sys is flattened, before what it did about NCCL_TOPO_FILE.
  const TOLD = `gdrgate: this job's /sys shows 8 devices of its GPU/RDMA path unlike the host (elsewhere: ${['88', '89', '8a', '8b', 'b1', 'b2', 'b3', 'b4'].map((b) => `0000:${b}:00.0`).join(', ')}; 0000:88:00.0 is at /sys/devices/pci0000:88/0000:88:00.0, on the host at /sys/devices/pci0000:85/0000:85:00.0/0000:86:00.0/0000:87:08.0/0000:88:00.0)`;

  await t.test('a job whose /sys is flattened gets NCCL_TOPO_FILE, with the reason', async (tt) => {
    const id = submit('flat1', probe);
    tt.equal(await finished(id), 'COMPLETED', `job ${id} COMPLETED`);
    const out = output('flat1');
    tt.comment(`job output:\n${out.trimEnd()}`);
    const file = join(STATE, `job-${id}`, 'nccl-topo.xml');
    const lines = out.split('\n');
    tt.equal(lines[0], `${TOLD}: NCCL_TOPO_FILE set to the host's topology (${file}) so that NCCL sees the node's real GPU-NIC paths`, 'the reason reaches the job output');
    tt.equal(lines[1], `topo=${file}`, 'the job has NCCL_TOPO_FILE pointing at its own state');
    tt.same(lines.slice(2), ['<system version="1">', ''], 'and can read the file; nothing else');
    tt.match(await viewLine(id), { ncclTopo: true }, 'the Epilog records that the job ran with it');
  });

  await t.test("a job with the host's view gets nothing; a job that set its own keeps it", async (tt) => {
    const id = submit('full1', probe);
    tt.equal(await finished(id), 'COMPLETED');
    const out = output('full1');
    tt.equal(out, 'topo=unset\n', 'no NCCL_TOPO_FILE, and no line about it');
    tt.match(await viewLine(id), { ncclTopo: false });
    const own = submit('flat2', probe, '--export=ALL,NCCL_TOPO_FILE=/tmp/mine.xml');
    tt.equal(await finished(own), 'COMPLETED');
    const o2 = output('flat2');
    tt.equal(o2, `${TOLD}; NCCL_TOPO_FILE left as the job set it\ntopo=/tmp/mine.xml\n`, "the job's own value stands, and the job is told why");
  });
}
