// The agent's own code changed on disk (a package upgrade) while a job runs: its next TaskProlog is not judged by the
// old code (no Prolog need come first, and a long job's steps may start for hours after its Prolog): the agent says
// "fallback" once, the TaskProlog runs gdrgate (the new code), and the agent exits 0 for its service manager.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { said, startRig } from './_agent-rig.js';

if (process.getuid?.() !== 0) t.skip('agent upgrade under a TaskProlog: needs root (the agent is root, the TaskProlog runs as the job uid)', () => {});
else await main();

async function main(): Promise<void> {
  const rig = await startRig();
  t.teardown(() => rig.close());
  rig.conf(true);
  await t.test('a step after the upgrade: fallback, gdrgate judges, the agent exits', async (t) => {
    const exited = new Promise<number | null>((res) => rig.agent.on('exit', (c) => res(c)));
    const env = { SLURM_JOB_ID: '960', SLURM_STEP_ID: '0', SLURM_JOB_GPUS: '0,1' };
    t.equal(rig.prolog('960', '0,1'), 0, 'prolog');
    let before = rig.runs();
    const first = await rig.task(env);
    t.equal(first.code, 0, 'the first step runs');
    t.equal(rig.runs() - before, 0, 'answered by the agent', { stderr: first.stderr });
    for (const f of fs.readdirSync(path.join(rig.stateDir, 'job-960'))) if (f.startsWith('task.')) fs.rmSync(path.join(rig.stateDir, 'job-960', f));

    // The agent watches its own module (src/cli/agent.ts, in the build the chunk that holds the agent): the upgrade rewrites it.
    const chunks = path.join(path.dirname(rig.cli), 'chunks');
    const self = fs.readdirSync(chunks).filter((f) => f.endsWith('.js') && fs.readFileSync(path.join(chunks, f), 'utf8').includes('changed since the agent started'));
    t.equal(self.length, 1, 'one chunk holds the agent');
    fs.appendFileSync(path.join(chunks, self[0]!), '\n// upgraded\n');
    before = rig.runs();
    const second = await rig.task({ ...env, SLURM_STEP_ID: '1' });
    t.same(said(second), said(first), 'the step says what it said before');
    t.equal(rig.runs() - before, 1, 'judged by gdrgate, not by the agent\'s old code');
    t.equal(second.stderr.split('\n').filter((l) => l.startsWith('gdrgate taskprolog: the agent did not judge: gdrgate changed on disk since the agent started')).length, 1, 'the agent said why');
    t.equal(await Promise.race([exited, new Promise((r) => setTimeout(() => r('still running after 30 s'), 30_000).unref())]), 0, 'the agent exited 0');
  });
}
