// What a blob's warm-up leaves in its heap must not pass for the state of the process started from it: a blob made
// with warm-up Prologs logging to a file, then a Prolog from that blob logging to the same file, must write its own
// pid (on 637534d's blob every such line carried the pid of the process that made the blob). A real blob, made here.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { makeGateEnv } from '../helpers/gate-env.js';
import { REPO } from '../helpers/paths.js';
import { sealBlob } from '../helpers/seal.js';

const PROGRAM = path.join(REPO, 'dist/gdrgate.cjs');
const JOB = { SLURMD_NODENAME: 'vm', SLURM_JOB_ID: '42', SLURM_JOB_UID: String(process.getuid!()), SLURM_JOB_GID: String(process.getgid!()) };

t.test('a Prolog from a blob whose warm-up logged to its log file writes its own pid there', async (t) => {
  const e = makeGateEnv();
  const blob = path.join(e.dir, 'warm.blob');
  const made = spawnSync(process.execPath, ['--snapshot-blob', blob, '--build-snapshot', PROGRAM], {
    encoding: 'utf8',
    env: { PATH: '/usr/bin:/bin', ...JOB, GDRGATE_SNAPSHOT_WARMUP: JSON.stringify([e.config]) },
    timeout: 300_000,
  });
  t.equal(made.status, 0, `the blob is made: ${made.stderr}`);
  sealBlob(blob);
  const pids = (): number[] => readFileSync(e.log, 'utf8').trim().split('\n').map((l) => (JSON.parse(l) as { pid: number }).pid);
  const warm = pids();
  t.ok(warm.length >= 1 && warm.every((p) => p === made.pid), `the warm-up logged as the builder (${made.pid}): ${warm.join(', ')}`);
  for (const job of ['43', '44']) {
    const r = spawnSync(process.execPath, ['--snapshot-blob', blob, 'prolog', '--dry-run', '--config', e.config], { encoding: 'utf8', env: { ...JOB, SLURM_JOB_ID: job }, timeout: 60_000 });
    t.equal(r.status, 0, r.stderr);
    const last = readFileSync(e.log, 'utf8').trim().split('\n').pop()!;
    const line = JSON.parse(last) as { pid: number; job: string; startup: string };
    t.same({ pid: line.pid, job: line.job, startup: line.startup }, { pid: r.pid, job, startup: 'snapshot' }, `job ${job}: the run line is the run's own`);
  }
});
