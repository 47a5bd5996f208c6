// A TaskProlog's FIFO is its job's: stateDir/tasks-<id>, the job user's and 0600, where the user can neither move nor
// replace it. The agent makes FIFOs ahead where only root can enter, gives one to the job as it answers the job's
// Prolog, lets go of it and removes it once the job's directory is gone, sets its jobs' FIFOs aside at a stop (a
// TaskProlog meanwhile runs gdrgate without waiting) and a new agent puts them back, as it takes over those a killed
// agent left. A job whose Prolog the agent did not answer has none, and its TaskProlog runs gdrgate. Real agents, real
// wrappers, as root and as the job's user.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { startRig, USER, type Rig } from '../task/_agent-rig.js';

if (process.getuid?.() !== 0) t.skip('needs root (the agent is root, the TaskProlog another uid)', () => {});
else await main();

/** The files `pid` holds open (the targets of /proc/<pid>/fd). */
function held(pid: number): string[] {
  const dir = `/proc/${pid}/fd`;
  return fs.readdirSync(dir).map((fd) => {
    try {
      return fs.readlinkSync(path.join(dir, fd));
    } catch {
      return '';
    }
  });
}

async function until(what: () => boolean, ms = 10_000): Promise<boolean> {
  for (const end = performance.now() + ms; performance.now() < end; await new Promise((r) => setTimeout(r, 20))) if (what()) return true;
  return what();
}

/** Node runs of the TaskProlog of `job` (0: the agent answered). */
async function taskRuns(t: Test, rig: Rig, job: string, step: string, extra = ''): Promise<number> {
  rig.conf(true, extra);
  const before = rig.runs();
  const r = await rig.task({ SLURM_JOB_ID: job, SLURM_STEP_ID: step });
  t.equal(r.code, 0, `job ${job} step ${step}: the TaskProlog passes`, { stderr: r.stderr });
  return rig.runs() - before;
}

async function main(): Promise<void> {
  const rig = await startRig();
  t.teardown(() => rig.close());
  const fifo = (job: string): string => path.join(rig.stateDir, `tasks-${job}`);
  let agent: ChildProcess = rig.agent;

  await t.test('made ahead where only root can enter, given to the job as the agent answers its Prolog', async (t) => {
    const pool = fs.lstatSync(path.join(rig.stateDir, '.task-fifos'));
    t.same([pool.isDirectory(), pool.uid, pool.mode & 0o777], [true, 0, 0o700], 'the FIFOs made ahead wait in a directory of root\'s, 0700');
    t.equal(fs.existsSync(path.join(rig.stateDir, 'tasks')), false, 'no FIFO every user can write');
    t.equal(rig.prolog('700'), 0, 'job 700: the Prolog passes, answered by the agent');
    const st = fs.lstatSync(fifo('700'));
    t.same([st.isFIFO(), st.uid, st.mode & 0o777, st.nlink], [true, USER, 0o600, 1], 'job 700 has its FIFO in stateDir: the job user\'s, 0600');
    t.ok(held(agent.pid!).includes(fifo('700')), 'the agent reads it');
    t.equal(await taskRuns(t, rig, '700', '0'), 0, 'its TaskProlog is answered by the agent');
    const mv = spawnSync('/bin/bash', ['-c', 'mv -- "$1" "$1.mine" || rm -f -- "$1"; [ -p "$1" ]', 'mv', fifo('700')], { uid: USER, gid: USER, encoding: 'utf8' });
    t.equal(mv.status, 0, 'its user can neither move nor remove it (stateDir is root\'s)');
  });

  await t.test('once the job\'s directory is gone, the agent lets go of its FIFO and removes it', async (t) => {
    t.equal(rig.prolog('701'), 0, 'job 701');
    fs.rmSync(path.join(rig.stateDir, 'job-701'), { recursive: true });
    t.equal(rig.prolog('702'), 0, 'job 702 (the agent looks for ended jobs as it answers a Prolog)');
    t.ok(await until(() => !held(agent.pid!).some((f) => f.startsWith(fifo('701')))), 'job 701\'s FIFO is no longer held');
    t.equal(fs.existsSync(fifo('701')), false, 'and no longer there');
    t.ok(held(agent.pid!).includes(fifo('702')), 'job 702\'s is');
  });

  await t.test('eight jobs starting at once (their Prologs asked together) each get a FIFO', async (t) => {
    const pool = path.join(rig.stateDir, '.task-fifos');
    t.ok(await until(() => fs.readdirSync(pool).filter((f) => f.startsWith('fifo.')).length >= 8), 'at least eight made ahead (the pool is topped up when it falls to eight)');
    const jobs = ['710', '711', '712', '713', '714', '715', '716', '717'];
    const codes = await Promise.all(
      jobs.map(
        (job) =>
          new Promise<number | null>((res) => {
            const p = spawn(path.join(rig.work, 'slurmd'), [path.join(rig.work, 'gdrgate-prolog.sh')], { cwd: '/', stdio: 'ignore', env: { SLURM_JOB_ID: job, SLURMD_NODENAME: 'gpu001', SLURM_JOB_UID: String(USER), SLURM_JOB_GID: String(USER), SLURM_SCRIPT_CONTEXT: 'prolog_slurmd' } });
            p.on('close', res);
          }),
      ),
    );
    t.same(codes, jobs.map(() => 0), 'every Prolog passes');
    // (Handed over with each job's record, just after its answer: the last one a moment after its Prolog ended.)
    await until(() => jobs.every((j) => fs.existsSync(fifo(j))));
    t.same(jobs.filter((j) => !fs.existsSync(fifo(j))), [], 'every job has its FIFO');
    for (const j of jobs) fs.rmSync(path.join(rig.stateDir, `job-${j}`), { recursive: true });
  });

  await t.test('a new agent takes over the running jobs\' FIFOs: set aside by a stopped agent, or left by a killed one', async (t) => {
    t.equal(rig.prolog('703'), 0, 'job 703');
    // The agent lets go of ended jobs' FIFOs (710-717's directories went above) just after it answers a Prolog: waited
    // for, so that the stop below comes after it (under load it came first, and parked those FIFOs too).
    t.ok(await until(() => !['710', '711', '712', '713', '714', '715', '716', '717'].some((j) => fs.existsSync(fifo(j)))), 'jobs 710-717: their FIFOs removed');
    // Job 703's FIFO is handed over with its record, a moment after its Prolog ended: waited for too (under load the
    // stop came first, and there was no FIFO of 703's to set aside).
    t.ok(await until(() => fs.existsSync(fifo('703'))), 'job 703 has its FIFO');
    agent.kill('SIGTERM');
    await new Promise((r) => agent.once('exit', r));
    t.same(fs.readdirSync(path.join(rig.stateDir, '.task-fifos')).sort(), ['parked.700', 'parked.702', 'parked.703'], 'the stopped agent set its jobs\' FIFOs aside, and removed those it had made ahead');
    t.equal(fs.existsSync(fifo('700')), false, 'job 700 has no FIFO while no agent runs');
    rig.conf(true, 'AGENT_TIMEOUT=30');
    const before = rig.runs();
    const down = await rig.task({ SLURM_JOB_ID: '700', SLURM_STEP_ID: '5' }, 20_000);
    t.same([down.code, rig.runs() - before], [0, 1], 'so its TaskProlog runs gdrgate at once, not after AGENT_TIMEOUT (30 s; killed after 20)');
    const start = async (): Promise<void> => {
      agent = spawn(rig.realNode, [rig.cli, 'agent', '--config', rig.config, '--dir', rig.agentDir], { stdio: 'ignore' });
      const a = agent;
      t.teardown(() => void a.kill('SIGKILL'));
      const pid = path.join(rig.agentDir, 'agent.pid');
      t.ok(await until(() => fs.existsSync(pid) && fs.readFileSync(pid, 'utf8').trim() === String(a.pid), 60_000), 'a new agent is up');
    };
    await start();
    t.ok(['700', '702', '703'].every((j) => held(agent.pid!).includes(fifo(j))), 'it put jobs 700\'s, 702\'s and 703\'s FIFOs back, and reads them');
    t.equal(await taskRuns(t, rig, '700', '1'), 0, 'job 700\'s next step: answered by the new agent');
    agent.kill('SIGKILL');
    await new Promise((r) => agent.once('exit', r));
    t.ok(fs.lstatSync(fifo('703')).isFIFO(), 'a killed agent leaves them in place');
    await start();
    t.ok(held(agent.pid!).includes(fifo('703')), 'the next agent takes them over');
    t.equal(await taskRuns(t, rig, '703', '0'), 0, 'job 703\'s TaskProlog: answered by it');
  });

  await t.test('a job whose Prolog the agent did not answer has no FIFO: its TaskProlog runs gdrgate', async (t) => {
    const p = spawnSync(rig.realNode, [rig.cli, 'prolog', '--config', rig.config], { env: { SLURM_JOB_ID: '704', SLURMD_NODENAME: 'gpu001', SLURM_JOB_UID: String(USER), SLURM_JOB_GID: String(USER), SLURM_SCRIPT_CONTEXT: 'prolog_slurmd' } });
    t.equal(p.status, 0, 'the gate\'s own Prolog passes');
    t.equal(fs.existsSync(fifo('704')), false, 'no FIFO');
    t.equal(await taskRuns(t, rig, '704', '0'), 1, 'gdrgate judged');
  });
}
