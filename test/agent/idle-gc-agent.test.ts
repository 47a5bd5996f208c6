// The agent as the package's unit starts it (--expose-gc, 16 MiB semi-spaces): after each Prolog it has answered and
// recorded, idle, it empties V8's young generation (a minor GC V8's trace names "testing", the reason it gives gc());
// started without --expose-gc it never does, and answers the same.
import t from 'tap';
import { makeGateEnv } from '../helpers/gate-env.js';
import { agentRuns, JOB, startAgent, wrapper } from './_agent.js';

const idleCollections = (stdout: string): number => stdout.split('\n').filter((l) => /: (Scavenge|Minor Mark-Sweep) .*testing;/.test(l)).length;

for (const [what, flags, want] of [
  ["the package unit's flags", ['--max-semi-space-size=16', '--expose-gc', '--trace-gc'], (n: number) => n >= 3],
  ['no --expose-gc', ['--max-semi-space-size=16', '--trace-gc'], (n: number) => n === 0],
] as const) {
  t.test(what, async (t) => {
    const e = makeGateEnv();
    const a = await startAgent(e, [], [...flags]);
    t.teardown(() => void a.proc.kill('SIGKILL'));
    const run = wrapper(e, `AGENT=${a.dir}\n`);
    for (const job of ['51', '52', '53']) {
      const r = run({ ...JOB, SLURM_JOB_ID: job });
      t.same([r.code, r.stdout.replace(/ \d+ms /, ' ')], [0, `gdrgate prolog node=vm job=${job} result=healthy exit=0 action=none\n`], `job ${job}: answered healthy`);
      t.same((await agentRuns(e, job)).filter((l) => l.job === job).map((l) => l.startup), ['agent'], `job ${job}: by the agent`);
      // Its record written (after the answer), the agent is idle: the collection follows within a moment.
      await new Promise((r) => setTimeout(r, 300));
    }
    // Polled for (a loaded machine may take longer than the waits above); an absence is judged after them.
    const until = performance.now() + 30_000;
    while (!want(idleCollections(a.stdout())) && (flags as readonly string[]).includes('--expose-gc') && performance.now() < until) await new Promise((r) => setTimeout(r, 50));
    const n = idleCollections(a.stdout());
    t.equal(want(n), true, `minor collections asked for while idle: ${n}`);
  });
}
