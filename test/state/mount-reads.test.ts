// How often one run reads the mount table (/proc/self/mountinfo, host/mounts.ts mountsBelow): a job's user may mount
// as many as fusermount's mount_max (1000) file systems in their job's directory, and each read of that table then
// costs the kernel's writing of it and its parse, ms a read. Counted here on the bundled H200 capture, each path as it
// runs: a passing Prolog in its own process, a Prolog the agent answers (its job given a TaskProlog FIFO), an Epilog
// (with the user's mounts in the job's directory: tmpfs mounted as the user's stands in for FUSE, as root and mount(8)
// allow).
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { TaskFifos } from '../../src/agent/task-fifos.js';
import { runHook } from '../../src/engine/hook.js';
import { agentProlog, gateHook } from '../../src/engine/prolog.js';
import { epilogJobState } from '../../src/epilog/job-state.js';
import { ExecaExec } from '../../src/host/exec.js';
import { mountsBelow } from '../../src/host/mounts.js';
import { setLogFile } from '../../src/log.js';
import { makeGateEnv } from '../helpers/gate-env.js';
import { countTableReads } from '../helpers/table-reads.js';
import { canMountAsUser, mountAsUser, unmountAllBelow, USER } from '../helpers/user-tmpfs.js';

const reads = countTableReads(t);
t.afterEach(() => setLogFile(undefined));

const env = (job: string): NodeJS.ProcessEnv => ({ SLURMD_NODENAME: 'vm', SLURM_JOB_ID: job, SLURM_JOB_UID: '4242', SLURM_JOB_GID: '4242' });
/** The reads `run` makes, and those of the turns it leaves queued (setImmediate). */
async function counted(run: () => Promise<unknown>): Promise<number> {
  const before = reads();
  await run();
  await new Promise((r) => setImmediate(r));
  await new Promise((r) => setImmediate(r));
  return reads() - before;
}

t.test('a passing Prolog in its own process: before the answer (an earlier attempt removed, the directory begun), and at its record', async (t) => {
  const e = makeGateEnv();
  const n = await counted(() => runHook({ ...gateHook({ mode: 'prolog', config: e.config, dryRun: false }, { env: env('42'), startup: 'modules' }) }));
  t.equal(fs.existsSync(path.join(e.dir, 'run', 'job-42', 'prolog.json')), true, 'its record written');
  t.equal(n, 2);
});

t.test("a Prolog the agent answers: the same two; the FIFO's hand-over and the sweep of ended jobs by the record's", async (t) => {
  const e = makeGateEnv();
  const stateDir = path.join(e.dir, 'run');
  fs.mkdirSync(stateDir, { mode: 0o711 });
  const fifos = new TaskFifos({ stateDir, exec: new ExecaExec(), serve: (fd) => ({ destroy: () => fs.closeSync(fd) }) });
  await fifos.start();
  t.teardown(() => fifos.destroy());
  const prolog = (job: string): Promise<number> => counted(() => agentProlog(e.config, { env: env(job), startup: 'agent', handOver: (x, m) => void fifos.handOver(x, m) }, () => true, () => true));
  t.equal(await prolog('42'), 2, 'the first job: no FIFO held before');
  t.equal(fs.lstatSync(path.join(stateDir, 'tasks-42')).isFIFO(), true, 'its FIFO in place');
  // Job 42 ended (its directory gone, as its Epilog leaves it): the sweep after the next Prolog lets its FIFO go.
  fs.rmSync(path.join(stateDir, 'job-42'), { recursive: true });
  t.equal(await prolog('43'), 2, 'the next job, a FIFO held: swept by the same table');
  t.same([fs.existsSync(path.join(stateDir, 'tasks-42')), fs.lstatSync(path.join(stateDir, 'tasks-43')).isFIFO()], [false, true], "the ended job's FIFO removed, the new job's in place");
});

t.test("an Epilog, nothing mounted in the job's directory: before it is looked at, and once it is root's", async (t) => {
  const e = makeGateEnv();
  const stateDir = path.join(e.dir, 'run');
  await runHook({ ...gateHook({ mode: 'prolog', config: e.config, dryRun: false }, { env: env('42'), startup: 'modules' }) });
  const n = await counted(() => epilogJobState(stateDir, '42', 'vm'));
  t.equal(fs.existsSync(path.join(stateDir, 'job-42')), false, 'its directory removed');
  t.equal(n, 2);
});

if (!canMountAsUser()) t.skip("an Epilog with the user's mounts: needs root and mount(8) that may mount a tmpfs here", () => {});
else {
  t.test("an Epilog, the user's mounts in the job's directory: before, once their paths are taken, after the detach, once the directory is root's", async (t) => {
    const e = makeGateEnv();
    const stateDir = path.join(e.dir, 'run');
    await runHook({ ...gateHook({ mode: 'prolog', config: e.config, dryRun: false }, { env: env('42'), startup: 'modules' }) });
    const dir = path.join(stateDir, 'job-42');
    fs.chownSync(dir, USER, USER);
    t.teardown(() => unmountAllBelow(stateDir));
    for (const m of ['a', 'b', 'c']) {
      fs.mkdirSync(path.join(dir, m));
      t.equal(mountAsUser(path.join(dir, m)), true, `mounted ${m}`);
    }
    const n = await counted(() => epilogJobState(stateDir, '42', 'vm'));
    t.same([mountsBelow(stateDir), fs.existsSync(dir)], [[], false], 'the mounts detached, the directory removed');
    t.equal(n, 5);
  });
}
