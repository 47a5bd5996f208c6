// Nothing of the process that made a blob may reach what a process started from it says or writes: the class of the
// pid leak blob-warm-state.test.ts pins. A real blob is made under markers (its own node name, job, user, cwd, HOME,
// TMPDIR, hostname when there may be a UTS namespace, its own config, baseline, log and state paths), then every
// command a node runs from a blob (a passing Prolog, a failing one that drains, the Epilog, check --json) runs under
// other values; no marker may appear in their stdout, stderr, log, drain calls or state files, every log line must
// carry the run's pid and a time after the run began.
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { breakLink, makeGateEnv } from '../helpers/gate-env.js';
import { REPO } from '../helpers/paths.js';
import { sealBlob } from '../helpers/seal.js';

const PROGRAM = path.join(REPO, 'dist/gdrgate.cjs');
const UNSHARE = '/usr/bin/unshare';
const uts = process.getuid?.() === 0 && existsSync(UNSHARE) && spawnSync(UNSHARE, ['--uts', '/bin/true']).status === 0;

/** argv run with hostname `host` in a UTS namespace of its own when there may be one, else as it is. */
function spawn(host: string, argv: string[], env: Record<string, string>, cwd: string, timeout: number): SpawnSyncReturns<string> {
  const [cmd, args] = uts ? [UNSHARE, ['--uts', '/bin/sh', '-c', 'hostname "$0" && exec "$@"', host, ...argv]] : [argv[0]!, argv.slice(1)];
  return spawnSync(cmd, args, { encoding: 'utf8', env, cwd, timeout });
}

/** Every file's text under dir (a state directory), by its path. */
function texts(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((f) => path.join(dir, f))
    .filter((f) => statSync(f).isFile())
    .map((f) => `${f}\n${readFileSync(f, 'utf8')}`);
}

t.test('a blob made under markers: no run from it says or writes any of them', async (t) => {
  const warm = makeGateEnv();
  const run = makeGateEnv();
  const warmCwd = path.join(warm.dir, 'cwd-warm-marker');
  const runCwd = path.join(run.dir, 'cwd');
  const warmTmp = path.join(warm.dir, 'tmp-warm-marker');
  for (const d of [warmCwd, runCwd, warmTmp]) mkdirSync(d);
  const blob = path.join(run.dir, 'gate.blob');
  const markers = { node: 'warmnode-marker', job: '7770013', host: 'warmhost-marker', home: path.join(warm.dir, 'home-warm-marker') };
  const uid = String(process.getuid!());
  const gid = String(process.getgid!());
  const made = spawn(
    markers.host,
    [process.execPath, '--snapshot-blob', blob, '--build-snapshot', PROGRAM],
    { PATH: '/usr/bin:/bin', HOME: markers.home, TMPDIR: warmTmp, USER: 'warm-marker-user', SLURMD_NODENAME: markers.node, SLURM_JOB_ID: markers.job, SLURM_JOB_UID: uid, SLURM_JOB_GID: gid, SLURM_JOB_USER: 'warm-marker-user', GDRGATE_SNAPSHOT_WARMUP: JSON.stringify([warm.config]) },
    warmCwd,
    300_000,
  );
  t.equal(made.status, 0, `the blob is made: ${made.stderr}`);
  sealBlob(blob);
  t.ok(readFileSync(warm.log, 'utf8').includes(markers.node), 'the warm-up itself ran under the markers (its log names its node)');

  const began = Date.now();
  const runEnv = (job: string): Record<string, string> => ({ HOME: runCwd, TMPDIR: runCwd, SLURMD_NODENAME: 'vm', SLURM_JOB_ID: job, SLURM_JOB_UID: uid, SLURM_JOB_GID: gid, SLURM_JOB_USER: 'runner' });
  const fromBlob = (args: string[], job: string): SpawnSyncReturns<string> => spawn('runhost', [process.execPath, '--snapshot-blob', blob, ...args], runEnv(job), runCwd, 120_000);
  const runs: Array<[string, SpawnSyncReturns<string>, number]> = [];
  runs.push(['passing prolog', fromBlob(['prolog', '--config', run.config], '51'), 0]);
  runs.push(['check --json', fromBlob(['check', '--root', run.tree, '--json'], '51'), 0]);
  runs.push(['epilog', fromBlob(['epilog', '--config', run.config], '51'), 0]);
  breakLink(run.tree);
  runs.push(['failing prolog', fromBlob(['prolog', '--config', run.config], '52'), 1]);
  for (const [what, r, code] of runs) t.equal(r.status, code, `${what} exits ${code}: ${r.stderr.slice(-400)}`);
  t.equal(run.drainCalls().length, 1, 'the failing prolog drained once');

  const said = [
    ...runs.flatMap(([what, r]) => [`${what} stdout\n${r.stdout}`, `${what} stderr\n${r.stderr}`]),
    `log\n${readFileSync(run.log, 'utf8')}`,
    `scontrol calls\n${readFileSync(run.calls, 'utf8')}`,
    ...texts(path.join(run.dir, 'run')),
  ];
  const found = (m: string): string[] => said.filter((s) => s.includes(m)).map((s) => s.split('\n')[0]!);
  const forbidden = [markers.node, markers.job, markers.home, 'warm-marker', warm.dir, warmCwd, warmTmp, warm.config, warm.log, ...(uts ? [markers.host] : [])];
  for (const m of forbidden) t.same(found(m), [], `nothing from the blob's making says ${m}`);

  const lines = readFileSync(run.log, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { pid: number; time: number });
  const pids = new Set(runs.filter(([what]) => what !== 'check --json').map(([, r]) => r.pid));
  t.equal(lines.length >= 3, true, `the runs logged (${lines.length} lines)`);
  t.same(lines.filter((l) => !pids.has(l.pid)).map((l) => l.pid), [], 'every log line carries the pid of a run from the blob');
  t.same(lines.filter((l) => l.time < began).map((l) => l.time), [], `every log line's time is after the runs began (${began})`);
});
