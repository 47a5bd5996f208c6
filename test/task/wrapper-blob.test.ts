// slurm/taskprolog.sh starts its judgment from the node's startup snapshot when it can, as slurm/prolog.sh does,
// and the job sees the same lines either way: a good blob answers; a refused, damaged, stale or untrusted one is
// passed over and the plain program answers, its own output alone reaching the task. Real runs on the bundled
// capture (a job whose memlock is 64 KiB: a finding to print), with a Node that records how it was started.
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { makeGateEnv } from '../helpers/gate-env.js';
import { CLI, REPO } from '../helpers/paths.js';

const BLOB = path.join(REPO, 'dist/gate.blob');
const e = makeGateEnv();
const wrapper = path.join(e.dir, 'gdrgate-taskprolog.sh');
copyFileSync(path.join(REPO, 'slurm/taskprolog.sh'), wrapper);
chmodSync(wrapper, 0o755);
// Node, through a script that first writes down whether it was asked to start from a blob.
const starts = path.join(e.dir, 'starts');
const node = path.join(e.dir, 'node');
writeFileSync(node, `#!/bin/bash\n[ "$1" = --snapshot-blob ] && echo blob >> ${starts} || echo plain >> ${starts}\nexec ${process.execPath} "$@"\n`, { mode: 0o755 });

function task(blob: string): { code: number | null; stdout: string; starts: string[] } {
  writeFileSync(starts, '');
  writeFileSync(path.join(e.dir, 'gdrgate-taskprolog.conf'), `NODE=${node}\nCLI=${CLI}\nCONFIG=${e.config}\nSTATE=\nBLOB=${blob}\n`);
  // A TaskProlog's environment: the job's, with the memlock limit Slurm propagated from the submitting shell.
  const r = spawnSync('/bin/bash', ['-c', `ulimit -l 64 && exec ${wrapper}`], {
    encoding: 'utf8',
    env: { PATH: '/usr/bin:/bin', SLURMD_NODENAME: 'vm', SLURM_JOB_ID: '42', SLURM_STEP_ID: '0', SLURM_RLIMIT_MEMLOCK: '65536' },
    cwd: '/',
    timeout: 120_000,
  });
  return { code: r.status, stdout: r.stdout, starts: readFileSync(starts, 'utf8').split('\n').filter(Boolean) };
}

const plain = task('');
t.equal(plain.code, 0, 'a finding warns; the task runs');
t.equal(plain.stdout, 'print gdrgate: memlock is 64 KiB in this job (need >= unlimited): RDMA registration will fail (Slurm copied the limit of the shell you submitted from); ask your admin to set PropagateResourceLimitsExcept=MEMLOCK, or submit from a shell with ulimit -l unlimited\n', 'the memlock finding is printed');
t.same(plain.starts, ['plain'], 'BLOB= (empty): the plain program only');

t.test('a good blob answers alone, with the same lines', async (t) => {
  const r = task(BLOB);
  t.same(r, { code: 0, stdout: plain.stdout, starts: ['blob'] });
});

t.test('a blob that judges nothing is passed over: the plain program answers, its lines alone', async (t) => {
  // Node refuses a blob of another Node build (exit 14): this blob with its header's Node version changed.
  const other = path.join(e.dir, 'other.blob');
  const bytes = readFileSync(BLOB);
  const at = bytes.indexOf(process.versions.node, 0, 'latin1');
  bytes.write(process.versions.node.replace(/\d$/, (d) => String((Number(d) + 1) % 10)), at, 'latin1');
  writeFileSync(other, bytes);
  t.same(task(other), { code: 0, stdout: plain.stdout, starts: ['blob', 'plain'] }, 'refused (exit 14)');
  const damaged = path.join(e.dir, 'damaged.blob');
  writeFileSync(damaged, readFileSync(BLOB).subarray(0, 1000));
  t.same(task(damaged), { code: 0, stdout: plain.stdout, starts: ['blob', 'plain'] }, 'damaged (a signal)');
  // A blob in a directory anyone may write: never started.
  const open = path.join(e.dir, 'open');
  mkdirSync(open, { mode: 0o777 });
  chmodSync(open, 0o777);
  copyFileSync(BLOB, path.join(open, 'gate.blob'));
  t.same(task(path.join(open, 'gate.blob')), { code: 0, stdout: plain.stdout, starts: ['plain'] }, 'untrusted: not started');
});
