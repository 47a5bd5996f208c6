// TaskFifos on its own (src/agent/task-fifos.ts), with the real mkfifo and a state directory of its own: a root job
// gets no FIFO; at start, a FIFO with a second name (a link) is never taken over, a FIFO of a job that ended is
// removed, and what the pool holds is removed only by unlink (a directory there is left, never walked); no look at the
// file system throws into the agent. The agent around it: task-fifos.test.ts.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { TaskFifos } from '../../src/agent/task-fifos.js';
import { ExecaExec } from '../../src/host/exec.js';
import { scratchDir } from '../helpers/scratch.js';

if (process.getuid?.() !== 0) t.skip('needs root (the FIFOs are given to other uids)', () => {});
else await main();

async function main(): Promise<void> {
  const stateDir = path.join(scratchDir('gdrgate-fifos-'), 'run');
  fs.mkdirSync(stateDir, { mode: 0o711 });
  const served: string[] = [];
  const make = (): TaskFifos =>
    new TaskFifos({
      stateDir,
      exec: new ExecaExec(),
      serve: (fd, job) => {
        served.push(job);
        return { destroy: () => fs.closeSync(fd) };
      },
    });
  const jobDir = (job: string, uid: number): void => {
    fs.mkdirSync(path.join(stateDir, `job-${job}`), { mode: 0o700 });
    fs.chownSync(path.join(stateDir, `job-${job}`), uid, uid);
  };

  await t.test('a root job gets no FIFO; a user\'s job does, its user\'s, 0600', async (t) => {
    const f = make();
    await f.start();
    jobDir('1', 0);
    jobDir('2', 4245);
    t.equal(f.handOver({ SLURM_JOB_ID: '1', SLURM_JOB_UID: '0', SLURM_JOB_GID: '0' }), null, 'nothing to say');
    t.equal(fs.existsSync(path.join(stateDir, 'tasks-1')), false, 'no FIFO for the root job');
    t.equal(f.handOver({ SLURM_JOB_ID: '2', SLURM_JOB_UID: '4245', SLURM_JOB_GID: '4245' }), null);
    const st = fs.lstatSync(path.join(stateDir, 'tasks-2'));
    t.same([st.isFIFO(), st.uid, st.gid, st.mode & 0o777], [true, 4245, 4245, 0o600]);
    t.equal(f.handOver({ SLURM_JOB_ID: '3', SLURM_JOB_UID: '4245', SLURM_JOB_GID: '4245' }), `${stateDir}/job-3 is not a directory of uid 4245 or of this agent's`, 'a job without its directory: said why');
    jobDir('8', 4246);
    t.equal(f.handOver({ SLURM_JOB_ID: '8', SLURM_JOB_UID: '4245', SLURM_JOB_GID: '4245' }), `${stateDir}/job-8 is not a directory of uid 4245 or of this agent's`, "another user's directory: said why");
    jobDir('7', process.getuid!());
    t.equal(f.handOver({ SLURM_JOB_ID: '7', SLURM_JOB_UID: '4245', SLURM_JOB_GID: '4245' }), null, 'the directory still the agent\'s (its record written, not yet handed to the user)');
    await new Promise((r) => setImmediate(r));
    t.same(served, ['2', '7'], 'the agent reads job 2\'s and 7\'s');
    await f.destroy();
    t.same(fs.readdirSync(path.join(stateDir, '.task-fifos')).sort(), ['parked.2', 'parked.7'], 'set aside at the stop');
  });

  await t.test('at start: a linked FIFO is not taken over, an ended job\'s is removed, a directory in the pool is not walked', async (t) => {
    fs.linkSync(path.join(stateDir, '.task-fifos', 'parked.2'), path.join(stateDir, 'a-link'));
    jobDir('4', 4245);
    fs.writeFileSync(path.join(stateDir, 'tasks-4'), '', { mode: 0o600 }); // not a FIFO
    const fifo5 = path.join(stateDir, 'tasks-5');
    t.equal(spawnSync('/usr/bin/mkfifo', ['-m', '600', fifo5]).status, 0, 'a FIFO for job 5, which has no directory');
    const deep = path.join(stateDir, '.task-fifos', 'parked.9', 'a', 'b');
    fs.mkdirSync(deep, { recursive: true });
    served.length = 0;
    const f = make();
    await f.start();
    t.equal(fs.existsSync(fifo5), false, 'job 5 ended: its FIFO removed');
    t.ok(fs.lstatSync(path.join(stateDir, 'tasks-2')).isFIFO(), 'job 2\'s FIFO put back');
    t.same(served, [], 'but not read: it has a second name; job 4\'s file is not a FIFO');
    t.ok(fs.existsSync(deep), 'a directory in the pool is left, never walked');
    t.equal(fs.readdirSync(path.join(stateDir, '.task-fifos')).filter((n) => n.startsWith('fifo.')).length, 16, 'sixteen made ahead');
    await f.destroy();
  });

  await t.test('the pool is topped up once it falls to eight, by one mkfifo for all the missing; a failed one keeps none', async (t) => {
    const calls: string[][] = [];
    let spoil = false;
    const real = new ExecaExec();
    const f = new TaskFifos({
      stateDir,
      exec: {
        run: async (file, args, opts) => {
          calls.push([...args]);
          // A plain file where mkfifo is asked for its first FIFO: that one fails, the others are made.
          if (spoil) fs.writeFileSync(args[3]!, '', { mode: 0o600 });
          return real.run(file, args, opts);
        },
      },
      serve: (fd) => ({ destroy: () => fs.closeSync(fd) }),
    });
    const pool = (): number => fs.readdirSync(path.join(stateDir, '.task-fifos')).filter((n) => n.startsWith('fifo.')).length;
    const settle = (): Promise<void> => new Promise((r) => setImmediate(() => void f.fill().then(() => r())));
    let job = 100;
    const next = (): string | null => {
      jobDir(String(++job), 4245);
      return f.handOver({ SLURM_JOB_ID: String(job), SLURM_JOB_UID: '4245', SLURM_JOB_GID: '4245' });
    };
    await f.start();
    t.same(calls.map((a) => a.length - 3), [16], 'at start: one mkfifo making sixteen');
    // A root job takes none from the full pool: refilling must go on after it (a refill that ended before it was
    // stored once left the pool empty for good).
    t.equal(f.handOver({ SLURM_JOB_ID: '99', SLURM_JOB_UID: '0', SLURM_JOB_GID: '0' }), null);
    await settle();
    for (let j = 0; j < 8; j++) {
      t.equal(next(), null, `job ${job} gets a FIFO`);
      await settle();
      t.equal(calls.length, j < 7 ? 1 : 2, `after ${j + 1} jobs: ${j < 7 ? 'no' : 'one'} mkfifo more`);
    }
    t.same([calls[1]!.length - 3, pool()], [8, 16], 'the eight missing made at once: sixteen again');
    spoil = true;
    for (let j = 0; j < 8; j++) {
      next();
      await settle();
    }
    t.same([calls.length, pool()], [3, 8], 'mkfifo failed on one name: none of its eight kept, the plain file in the way removed');
    spoil = false;
    t.equal(next(), null, 'the next job still gets one');
    await settle();
    t.same([calls.length, calls[3]!.length - 3, pool()], [4, 9, 16], 'and its Prolog\'s refill makes the nine missing under new names');
    for (let j = 0; j < 40; j++) {
      t.equal(next(), null, `job ${job} gets a FIFO`);
      await settle();
    }
    t.equal(calls.length, 9, 'forty jobs more: one mkfifo every eight');
    await f.destroy();
    t.equal(pool(), 0, 'all removed at the stop');
  });
}
