// The agent's TaskProlog budget pays for what a request costs its one thread, not for the request alone: a job's user
// writes their own facts file (up to MAX_FACTS_BYTES, 256 KiB), and reading and parsing one that large held the
// thread ~40-250 ms where an 8-GPU node's ~8 KiB takes ~1.5 ms; at the budget's 64 at once and 16 a second, one user's
// jobs asking with such facts kept the thread busy, and another job's Prolog waited past its AGENT_TIMEOUT (1 s) and
// started Node. Facts that parse, read under the rig's tree, and answer no question of the judgement (so each request
// costs its read and parse, then "fallback").
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { MAX_FACTS_BYTES } from '../../src/task/facts.js';
import { floodScript, startRig, USER } from '../task/_agent-rig.js';

const SECONDS = 4;
const JOBS = ['870', '871', '872'];

/** The facts' body after their head line: a /dev of as many device nodes as fit, each with its kind and access. */
function body(tree: string): string {
  const n = Math.floor((MAX_FACTS_BYTES - 4096) / 64);
  const lines = [`root\t${tree}`, `list\t/dev\t${n}`];
  for (let i = 0; i < n; i++) lines.push(`\tnvidia${i}`);
  for (let i = 0; i < n; i++) lines.push(`kind\t/dev/nvidia${i}\tchar`, `access\t/dev/nvidia${i}\trw`);
  lines.push('end');
  return lines.join('\n') + '\n';
}

if (process.getuid?.() !== 0) t.skip('needs root (the agent is root, the requests come from another uid)', () => {});
else await main();

async function main(): Promise<void> {
  const rig = await startRig();
  t.teardown(() => rig.close());
  await t.test(`one user's ${JOBS.length} jobs asking with facts of ${MAX_FACTS_BYTES / 1024} KiB for ${SECONDS} s: another job's Prolog is answered by the agent in its second`, async (t) => {
    for (const job of JOBS) t.equal(rig.prolog(job), 0, `job ${job}: USER's, with its FIFO`);
    const rest = path.join(rig.work, 'facts-body');
    fs.writeFileSync(rest, body(rig.tree), { mode: 0o644 });
    t.equal(fs.statSync(rest).size <= MAX_FACTS_BYTES - 64, true, 'the facts fit the agent\'s cap');
    // As task-budget.test.ts's flood: a process of USER's with eight reply pipes, its facts, asking on all eight.
    const script = floodScript('{ printf "gdrgate-task-facts 1 0123456789abcdef %s %s 0\\n" $$ $EUID; /bin/cat "$4"; }');
    const before = rig.agentErr().length;
    const t0 = performance.now();
    const floods = JOBS.map((job) => {
      const p = spawn('/bin/bash', ['-c', script, 'flood', rig.config, path.join(rig.stateDir, `tasks-${job}`), path.join(rig.stateDir, `job-${job}`), rest, String(SECONDS), job], { uid: USER, gid: USER, stdio: ['ignore', 'pipe', 'inherit'] });
      t.teardown(() => void p.kill('SIGKILL'));
      let out = '';
      p.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      return new Promise<number>((res) => p.on('close', () => res(Number(out.trim()))));
    });
    // Into the flood: a Prolog of another job, waiting for the agent as long as a node's wrapper does (1 s).
    await new Promise((r) => setTimeout(r, 1500));
    fs.writeFileSync(path.join(rig.work, 'gdrgate-prolog.conf'), fs.readFileSync(path.join(rig.work, 'gdrgate-prolog.conf'), 'utf8').replace('AGENT_TIMEOUT=10', 'AGENT_TIMEOUT=1'));
    const runsBefore = rig.runs();
    t.equal(rig.prolog('880'), 0, 'a Prolog during the flood passes');
    t.equal(rig.runs() - runsBefore, 0, 'answered by the agent, no Node started', { agent: rig.agentErr().slice(-1500) });
    const asked = await Promise.all(floods);
    const wall = performance.now() - t0;
    t.equal(asked.every((n) => n > 0), true, `the floods asked (${asked.join(', ')} requests)`);
    // What the agent's thread gave them: each judged request's log line has its ms (fallback: a question they do not
    // answer). The budget's turns of TASK_BUDGET.turnMs: (64 + 16 a second) x 4 ms, and a request or so a queue past
    // it, ~1.3 s of ~5 s; by their count alone, all of it.
    const judged = rig.agentErr().slice(before).split('\n').flatMap((l) => (/"job":"87[0-2]"/.test(l) && l.includes('TaskProlog left to gdrgate') ? [(JSON.parse(l) as { ms: number }).ms] : []));
    const held = judged.reduce((a, b) => a + b, 0);
    t.equal(judged.length > 0, true, `their facts were read and judged (${judged.length} requests)`);
    t.equal(held < wall / 2, true, `they held the agent's thread ${Math.round(held)} ms of the flood's ${Math.round(wall)} ms (less than half)`);
  });
}
