// Who the agent judges for (src/agent/client.ts), on /proc trees laid out as Slurm leaves them: a Prolog under slurmd
// (every release), under the extern slurmstepd with PrologFlags=RunInJob (24.05+), and the processes it must refuse.
import t from 'tap';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { notAProlog } from '../../src/agent/client.js';
import { FsHost } from '../../src/host/fs-host.js';

interface Proc {
  readonly pid: number;
  readonly ppid: number;
  readonly comm: string;
  readonly uid?: string;
  readonly env?: Record<string, string>;
}

/** /proc/<pid>/{status,comm,environ} under a fresh root, as the kernel formats them. */
function procTree(dir: string, procs: readonly Proc[]): FsHost {
  for (const p of procs) {
    const d = path.join(dir, 'proc', String(p.pid));
    mkdirSync(d, { recursive: true });
    const uid = p.uid ?? '0\t0\t0\t0';
    writeFileSync(path.join(d, 'status'), `Name:\t${p.comm}\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t${p.pid}\nPid:\t${p.pid}\nPPid:\t${p.ppid}\nUid:\t${uid}\nGid:\t0\t0\t0\t0\n`);
    writeFileSync(path.join(d, 'comm'), `${p.comm}\n`);
    writeFileSync(path.join(d, 'environ'), Object.entries(p.env ?? {}).map(([k, v]) => `${k}=${v}\0`).join(''));
  }
  return new FsHost(dir);
}

const PROLOG_ENV = { SLURM_JOB_ID: '42', SLURM_SCRIPT_CONTEXT: 'prolog_slurmd' };

t.test('a Prolog under slurmd (chain wrapper and prolog.sh between): judged', async (t) => {
  const host = procTree(t.testdir(), [
    { pid: 100, ppid: 1, comm: 'slurmd' },
    { pid: 200, ppid: 100, comm: 'gdrgate-prolog-' },
    { pid: 300, ppid: 200, comm: 'prolog.sh', env: PROLOG_ENV },
  ]);
  t.equal(await notAProlog(host, 300), null);
});

t.test('PrologFlags=RunInJob (24.05+): the extern slurmstepd runs the Prolog; judged on its script context', async (t) => {
  const host = procTree(t.testdir(), [
    { pid: 150, ppid: 1, comm: 'slurmstepd' },
    { pid: 300, ppid: 150, comm: 'prolog.sh', env: PROLOG_ENV },
    { pid: 400, ppid: 150, comm: 'bash', env: { SLURM_JOB_ID: '42' } },
    { pid: 500, ppid: 150, comm: 'bash', env: { SLURM_JOB_ID: '42', SLURM_SCRIPT_CONTEXT: 'prolog_task' } },
  ]);
  t.equal(await notAProlog(host, 300), null);
  t.equal(await notAProlog(host, 400), 'pid 400 runs under slurmstepd without SLURM_SCRIPT_CONTEXT=prolog_slurmd (none): a job\'s process, not a Prolog');
  t.equal(await notAProlog(host, 500), 'pid 500 runs under slurmstepd without SLURM_SCRIPT_CONTEXT=prolog_slurmd (prolog_task): a job\'s process, not a Prolog');
});

t.test('under slurmd, another script context (an Epilog: epilog_slurmd, every release) is refused; none is judged', async (t) => {
  const host = procTree(t.testdir(), [
    { pid: 100, ppid: 1, comm: 'slurmd' },
    { pid: 300, ppid: 100, comm: 'epilog.sh', env: { SLURM_JOB_ID: '42', SLURM_SCRIPT_CONTEXT: 'epilog_slurmd' } },
    { pid: 400, ppid: 100, comm: 'prolog.sh', env: { SLURM_JOB_ID: '42' } },
  ]);
  t.equal(await notAProlog(host, 300), 'pid 300 runs under slurmd as SLURM_SCRIPT_CONTEXT=epilog_slurmd: not a Prolog');
  t.equal(await notAProlog(host, 400), null);
});

t.test('refused: not root, no Slurm daemon above', async (t) => {
  const host = procTree(t.testdir(), [
    { pid: 100, ppid: 1, comm: 'slurmd' },
    { pid: 300, ppid: 100, comm: 'prolog.sh', uid: '1000\t1000\t1000\t1000', env: PROLOG_ENV },
    { pid: 600, ppid: 1, comm: 'sshd' },
    { pid: 700, ppid: 600, comm: 'bash', env: PROLOG_ENV },
  ]);
  t.equal(await notAProlog(host, 300), "pid 300 is not root's (Uid: 1000 1000 1000 1000): not a Prolog");
  t.equal(await notAProlog(host, 700), 'pid 700 has neither slurmd nor slurmstepd among its ancestors: not a Prolog');
});

t.test("refused: root in one uid only (real, effective, saved, filesystem: all four must be root's)", async (t) => {
  const mixed = ['0\t1000\t0\t0', '1000\t0\t0\t0', '0\t0\t1000\t0', '0\t0\t0\t1000'];
  const host = procTree(t.testdir(), [{ pid: 100, ppid: 1, comm: 'slurmd' }, ...mixed.map((uid, i) => ({ pid: 300 + i, ppid: 100, comm: 'prolog.sh', uid, env: PROLOG_ENV }))]);
  for (const [i, uid] of mixed.entries()) t.equal(await notAProlog(host, 300 + i), `pid ${300 + i} is not root's (Uid: ${uid.replace(/\t/g, ' ')}): not a Prolog`);
});
