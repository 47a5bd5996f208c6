// The agent judging a TaskProlog's view (slurm/taskprolog.sh reads it with bash alone, src/agent/task.ts judges it)
// says what `gdrgate task` says: over generated job views (adapters, verbs nodes and GPUs hidden or denied, memlock
// limits, CPU bindings, job GPUs, NCCL_TOPO_FILE, FAIL), the wrapper asking a running agent and the wrapper running
// gdrgate print the same lines, exit with the same code and leave the same task record; a view bash cannot read as
// gdrgate would (a device this user may not open: its errno) is judged by gdrgate, and every other one by the agent.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { UVERBS } from './_roots.js';
import { said, startRig } from './_agent-rig.js';

const CASES = Number(process.env.GDRGATE_PARITY_CASES ?? 24);

if (process.getuid?.() !== 0) t.skip('agent parity: needs root (the agent is root, the TaskProlog runs as the job uid)', () => {});
else await main();

/** A small seeded generator, so that a failing case can be run again (its seed is in the test's name). */
function rng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => ((s = (Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0), s / 2 ** 32);
}

async function main(): Promise<void> {
  const rig = await startRig();
  t.teardown(() => rig.close());
  const { tree, work } = rig;

  await t.test('generated views', async (t) => {
    let answered = 0;
    const answers = new Set<string>();
    for (let c = 0; c < CASES; c++) {
      const seed = 1000 + c;
      const r = rng(seed);
      const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
      const job = String(500 + c);
      const gpus = pick([null, '0', '1,2', '0,1,2,3', '3']);
      t.equal(rig.prolog(job, gpus), 0, `seed ${seed}: prolog`);
      // The job's view drifts from the host's record: a verbs node gone, a device this user may not open, another binding.
      const gone = r() < 0.3 ? pick(UVERBS) : null;
      const deny = r() < 0.2 ? pick(['dev/nvidia0', 'dev/infiniband/uverbs1']) : null;
      const denied = deny === `dev/infiniband/${gone}` ? null : deny; // a node gone is not there to deny
      if (gone) fs.renameSync(path.join(tree, 'dev/infiniband', gone), path.join(work, 'gone'));
      if (denied) fs.chmodSync(path.join(tree, denied), 0o600);
      const status = pick(['0-7\t0', '8-15\t1', '0\t0,1', '16-23\t0']).split('\t');
      fs.writeFileSync(path.join(tree, 'proc/self/status'), `Name:\tbash\nCpus_allowed_list:\t${status[0]}\nMems_allowed_list:\t${status[1]}\n`);
      const env: Record<string, string> = { SLURM_STEP_ID: pick(['0', '1', 'batch']), SLURM_LOCALID: pick(['0', '3']) };
      // As slurmstepd sets them: a batch step the job's variables; an srun step its own GPUs, or none of them (--gres=none).
      if (gpus !== null) {
        env.SLURM_JOB_GPUS = gpus;
        const given = env.SLURM_STEP_ID === 'batch' || r() < 0.8;
        if (given) env.SLURM_GPUS_ON_NODE = String(gpus.split(',').length);
        if (given && env.SLURM_STEP_ID !== 'batch') env.SLURM_STEP_GPUS = gpus;
      }
      const ml = pick([null, '65536', 'U8388608', '18446744073709551615', 'x']);
      if (ml !== null) env.SLURM_RLIMIT_MEMLOCK = ml;
      if (r() < 0.2) env.NCCL_TOPO_FILE = pick(['', '/x/topo.xml']);
      const fail = r() < 0.3;
      try {
        const b = await rig.both(job, env, `FAIL=${fail ? 1 : 0}`);
        t.same(said(b.viaAgent), said(b.viaNode), `seed ${seed}: the same lines and exit code`);
        t.same(b.agentRecord, b.nodeRecord, `seed ${seed}: the same task record`);
        // A denied node the judge reads (the job's own GPU, a recorded verbs node) is a question bash cannot answer
        // (EACCES or EPERM): gdrgate judges it, and says so. One it never reads (another job's GPU) is the agent's.
        const judged = denied !== null && b.viaNode.stdout.includes(`this job cannot open /${denied} read-write`);
        t.equal(b.agentRuns, judged ? 1 : 0, `seed ${seed}: ${judged ? `gdrgate judged (${denied} denied to the user)` : `the agent answered${denied ? ` (${denied} denied, not this job's)` : ''}`}`, { agentErr: rig.agentErr(), node: b.viaNode.stdout });
        if (b.agentRuns === 0) answered++;
        answers.add(`${b.viaAgent.code} ${b.viaAgent.stdout}`);
      } finally {
        if (gone) fs.renameSync(path.join(work, 'gone'), path.join(tree, 'dev/infiniband', gone));
        if (denied) fs.chmodSync(path.join(tree, denied), 0o666);
      }
    }
    t.ok(answered > CASES / 2, `the agent answered ${answered} of ${CASES} views`);
    // The views differ in what they say (silence, memlock, placement, hidden devices, FAIL's exit code), not only in name.
    t.ok(answers.size >= Math.min(4, CASES), `${answers.size} different answers`);
  });

  await t.test("another job's GPU denied (Slurm's ConstrainDevices): the agent answers; the job's own denied: gdrgate judges", async (t) => {
    const env = { SLURM_STEP_ID: '0', SLURM_LOCALID: '0', SLURM_JOB_GPUS: '3', SLURM_STEP_GPUS: '3', SLURM_GPUS_ON_NODE: '1' };
    fs.writeFileSync(path.join(tree, 'proc/self/status'), 'Name:\tbash\nCpus_allowed_list:\t0-7\nMems_allowed_list:\t0\n');
    for (const n of ['nvidia0', 'nvidia1', 'nvidia2']) fs.chmodSync(path.join(tree, 'dev', n), 0o600);
    try {
      t.equal(rig.prolog('901', '3'), 0);
      const other = await rig.both('901', env, 'FAIL=1');
      t.same(said(other.viaAgent), said(other.viaNode), 'the same lines and exit code');
      t.equal(other.viaNode.code, 0, 'gdrgate: the job may open its own GPU');
      t.equal(other.agentRuns, 0, 'before: the agent handed back every view with a denied node (1)');
      t.equal(rig.prolog('902', '0'), 0);
      const own = await rig.both('902', { ...env, SLURM_JOB_GPUS: '0', SLURM_STEP_GPUS: '0' }, 'FAIL=1');
      t.same(said(own.viaAgent), said(own.viaNode), 'the same lines and exit code');
      t.not(own.viaNode.code, 0, "gdrgate: the job cannot open its own GPU, and FAIL=1");
      t.equal(own.agentRuns, 1, 'gdrgate judged');
    } finally {
      for (const n of ['nvidia0', 'nvidia1', 'nvidia2']) fs.chmodSync(path.join(tree, 'dev', n), 0o666);
    }
  });
}
