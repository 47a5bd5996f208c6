// The agent's one thread is shared by every job's TaskProlog queue: what one user's jobs may have judged is a budget
// (TASK_BUDGET: a burst, then a rate), the rest dropped unread, so a user flooding from several jobs with proven
// requests cannot make other jobs' Prologs fall back to Node (the review of e8e7aec: ten such jobs took other jobs'
// Prologs from 26-52 ms to 1-1.8 s, five of six no longer answered by the agent); a line that is no request of the
// job costs a turn too, so a flood of lines that never parse is read at that pace (the review of a3c23a3), and bytes
// that end no line cost a turn a read (the review of 07e7c19: 3.2 GB of /dev/zero in 3 s).
import { spawn } from 'node:child_process';
import { lstatSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { TASK_BUDGET, TaskBudget } from '../../src/agent/task-serve.js';
import { floodScript, startRig, USER } from '../task/_agent-rig.js';

const SECONDS = 3;
const JOBS = ['810', '811', '812'];

t.test('the bucket: a burst, then the rate; each uid its own', async (t) => {
  const b = new TaskBudget({ burst: 4, perSecond: 2 });
  const takes = (uid: number, at: number, n: number): boolean[] => Array.from({ length: n }, () => b.take(uid, at));
  t.same(takes(1000, 0, 5), [true, true, true, true, false], 'four at once, not a fifth');
  t.same(takes(1001, 0, 1), [true], 'another uid has its own');
  t.same(takes(1000, 499, 1), [false], 'half a token after 499 ms');
  t.same(takes(1000, 500, 2), [true, false], 'one after 500 ms at 2 a second');
  t.same(takes(1000, 60_500, 5), [true, true, true, true, false], 'never more than the burst, however long the wait');
  // What a request held the thread for: past its turn, a turn each turnMs more (task-budget-cost.test.ts).
  const c = new TaskBudget({ burst: 4, perSecond: 2, turnMs: 4 });
  c.spend(2000, 3.9, 0);
  t.same(Array.from({ length: 5 }, () => c.take(2000, 0)), [true, true, true, true, false], 'under turnMs: the turn take() counted is all');
  c.spend(2001, 8, 0);
  t.same(Array.from({ length: 3 }, () => c.take(2001, 0)), [true, true, false], '8 ms: two turns more');
  c.spend(2002, 60_000, 0);
  t.same([c.take(2002, 0), c.take(2002, 499), c.take(2002, 500)], [false, false, true], 'a minute: a burst more at most (a full bucket emptied), then a turn at the rate (2 a second)');
  c.spend(2002, 60_000, 500);
  t.same([c.take(2002, 500), c.take(2002, 2499), c.take(2002, 3100)], [false, false, true], 'again at once: below zero, a turn again some 2.5 s later');
});

if (process.getuid?.() !== 0) t.skip('needs root (the agent is root, the requests come from another uid)', () => {});
else await flood();

async function flood(): Promise<void> {
  const rig = await startRig();
  t.teardown(() => rig.close());
  await t.test(`one user's ${JOBS.length} jobs asking as fast as they can for ${SECONDS} s`, async (t) => {
    for (const job of JOBS) t.equal(rig.prolog(job), 0, `job ${job}: USER's, with its FIFO`);
    // Each job: a process of USER's with eight reply pipes (fd 87-94) and facts of its own, asking on all eight,
    // reading its answers, and asking again.
    const script = floodScript('printf "gdrgate-task-facts 1 0123456789abcdef %s %s 0\\nroot\\t%s\\nend\\n" $$ $EUID "$4"');
    const before = rig.agentErr().length;
    const runsBefore = rig.runs();
    const t0 = performance.now();
    const asked = await Promise.all(
      JOBS.map((job) => {
        const p = spawn('/bin/bash', ['-c', script, 'flood', rig.config, path.join(rig.stateDir, `tasks-${job}`), path.join(rig.stateDir, `job-${job}`), rig.tree, String(SECONDS), job], { uid: USER, gid: USER, stdio: ['ignore', 'pipe', 'inherit'] });
        t.teardown(() => void p.kill('SIGKILL'));
        let out = '';
        p.stdout!.on('data', (d: Buffer) => (out += d.toString()));
        return new Promise<number>((res) => p.on('close', () => res(Number(out.trim()))));
      }),
    );
    // A Prolog of another job while the last requests are answered: the agent's, no Node started.
    t.equal(rig.prolog('820'), 0, 'a Prolog after the flood passes');
    t.equal(rig.runs() - runsBefore, 0, 'answered by the agent, no Node started', { agent: rig.agentErr().slice(-1500) });
    const seconds = (performance.now() - t0) / 1000;
    const judged = rig.agentErr().slice(before).split('\n').filter((l) => /"job":"81[0-2]"/.test(l) && /TaskProlog (answered|left to gdrgate)|stopped waiting before the answer/.test(l)).length;
    const most = TASK_BUDGET.burst + Math.ceil(TASK_BUDGET.perSecond * seconds);
    const total = asked.reduce((a, b) => a + b, 0);
    // Twice over (a loaded machine's floods ask less, and its Prolog after them makes `seconds` longer): what is
    // judged below is then the budget's doing, not the asking's.
    t.equal(total > 2 * most, true, `the jobs asked far more than the budget (${total} requests, the budget ${most})`);
    t.equal(judged <= most, true, `judged ${judged} of ${total}: at most the burst and the rate over ${seconds.toFixed(1)} s (${most})`);
    t.equal(judged >= TASK_BUDGET.burst / 2, true, `and the agent did judge them (${judged})`);
  });

  await t.test(`one user writing lines that never parse, and bytes that end no line, into their job's FIFO for ${SECONDS} s: the agent reads them at the budget's pace`, async (t) => {
    // Each flood into a job's FIFO of its own (the budget is the user's, the rest each FIFO's own), all at once.
    const floods = ['/usr/bin/yes x', "/usr/bin/yes ''", '/bin/cat /dev/zero'];
    // Its FIFO is given as the agent answers the job's Prolog; a Prolog it did not answer in time (this loaded
    // machine, the last flood's requests still being judged) has none: then another job.
    const jobs: string[] = [];
    for (const base of [840, 850, 860]) {
      let got: string | null = null;
      for (let k = 0; k < 3 && got === null; k++) {
        const job = String(base + k);
        t.equal(rig.prolog(job), 0, `job ${job}: USER's`);
        const fifo = path.join(rig.stateDir, `tasks-${job}`);
        for (let i = 0; i < 50 && got === null; i++) {
          const st = lstatSync(fifo, { throwIfNoEntry: false });
          if (st?.isFIFO() && st.uid === USER) got = job;
          else await new Promise((r) => setTimeout(r, 100));
        }
      }
      t.not(got, null, `a job of USER's with its FIFO (${got})`);
      jobs.push(got ?? 'none');
    }
    // dd, stopped by SIGINT, says how many bytes the FIFO took: what the agent read, and a pipe's worth. One SIGINT
    // (--foreground): timeout otherwise sends it to its process group too, and dd, whose handler is reset by the first,
    // died of the second before or while it printed its count (`yes x | timeout -s INT 0.3 dd`: 3 of 60 runs cut short
    // on this machine, none with --foreground; a CI run and a full test run had read NaN).
    const outs: string[] = [];
    const taken = await Promise.all(floods.map((flood, i) => {
      const p = spawn('/bin/bash', ['-c', `${flood} | /usr/bin/timeout --foreground -s INT ${SECONDS} /usr/bin/dd of="$1" bs=64k 2>&1 >/dev/null`, 'junk', path.join(rig.stateDir, `tasks-${jobs[i]}`)], { uid: USER, gid: USER, stdio: ['ignore', 'pipe', 'inherit'] });
      t.teardown(() => void p.kill('SIGKILL'));
      let out = '';
      p.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      return new Promise<number>((res) => p.on('close', () => ((outs[i] = out), res(Number(/^(\d+) bytes/m.exec(out)?.[1] ?? NaN)))));
    }));
    // A 64 KiB read a rest (1/perSecond s) a FIFO and the burst's first: ~3 MiB in 3 s, taken twice over for a timer's
    // jitter. Unbudgeted, the thread read as fast as it could split lines (22 MiB), or /dev/zero as fast as it came
    // (2.4 GB), and other jobs' Prologs waited on it.
    const most = 2 * (Math.ceil(TASK_BUDGET.perSecond * SECONDS) + 6) * 65536;
    t.same(taken.map((b) => Number.isInteger(b) && b <= most), [true, true, true], `bytes the FIFO took from ${floods.join(', ')} together: ${taken.join(', ')} (at most ${most} each)`, { dd: outs });
    const runsBefore = rig.runs();
    t.equal(rig.prolog('831'), 0, 'a Prolog of another job after it passes');
    t.equal(rig.runs() - runsBefore, 0, 'answered by the agent, no Node started', { agent: rig.agentErr().slice(-1500) });
  });
}
