// The agent answers a Prolog before it writes the job's record (into the directory it began, root's and empty until
// then) and hands the directory to the job's user after: a TaskProlog that comes in between waits for it and is then
// answered by the agent, as later tasks are; a directory that stays root's is waited for 1 s, then gdrgate judges;
// a record that comes well after the answer (a large slurm.conf to read) is waited for by a task started at once;
// a Prolog run straight into its first task (no wait at all) gets the same answer as one that waited.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { said, startRig, USER } from './_agent-rig.js';

if (process.getuid?.() !== 0) t.skip('pending job directory: needs root (the agent is root, the TaskProlog runs as the job uid)', () => {});
else await main();

async function main(): Promise<void> {
  const rig = await startRig();
  t.teardown(() => rig.close());
  rig.conf(true);
  const dirOf = (job: string): string => path.join(rig.stateDir, `job-${job}`);

  await t.test('a task that finds the directory begun waits for its record, then the agent answers', async (t) => {
    t.equal(rig.prolog('910', '0,1'), 0, 'prolog');
    const want = await rig.task({ SLURM_JOB_ID: '910', SLURM_STEP_ID: '0', SLURM_JOB_GPUS: '0,1' });
    for (const f of fs.readdirSync(dirOf('910'))) if (f.startsWith('task.')) fs.rmSync(path.join(dirOf('910'), f));
    // As between the answer and the hand-over: the record's directory still root's.
    fs.chownSync(dirOf('910'), 0, 0);
    const before = rig.runs();
    const pending = rig.task({ SLURM_JOB_ID: '910', SLURM_STEP_ID: '0', SLURM_JOB_GPUS: '0,1' });
    await new Promise((r) => setTimeout(r, 300));
    fs.chownSync(dirOf('910'), USER, USER);
    const got = await pending;
    t.same(said(got), said(want), 'the answer of a task that came after the hand-over');
    t.equal(rig.runs() - before, 0, 'answered by the agent: gdrgate not started', { stderr: got.stderr });
    t.ok(got.ms >= 300, `it waited for the hand-over (${Math.round(got.ms)} ms)`);
  });

  await t.test('a directory that stays root\'s (its record never came): waited for 1 s, then gdrgate judges (the record missing)', async (t) => {
    t.equal(rig.prolog('911', '0'), 0, 'prolog');
    fs.chownSync(dirOf('911'), 0, 0);
    const before = rig.runs();
    const got = await rig.task({ SLURM_JOB_ID: '911', SLURM_STEP_ID: '0', SLURM_JOB_GPUS: '0' });
    t.equal(got.code, 0, 'the task runs');
    t.equal(rig.runs() - before, 1, 'gdrgate judged');
    t.ok(got.ms >= 1000, `after the 1 s wait (${Math.round(got.ms)} ms)`);
    fs.chownSync(dirOf('911'), USER, USER);
  });

  await t.test('a record that comes after the answer (a 20,000-line slurm.conf under AutoDetect=nvml, ~0.03 s idle: a thirtieth of the 1 s a task waits, for a loaded machine): the first task waits for it', async (t) => {
    const slurm = path.join(rig.tree, 'etc/slurm');
    fs.mkdirSync(slurm, { recursive: true });
    fs.writeFileSync(path.join(slurm, 'gres.conf'), 'AutoDetect=nvml\n');
    fs.writeFileSync(path.join(slurm, 'slurm.conf'), `${Array.from({ length: 20_000 }, (_, i) => `NodeName=n${i} CPUs=2 Gres=gpu:1`).join('\n')}\nNodeName=gpu001 Gres=gpu:4\n`);
    t.teardown(() => fs.rmSync(slurm, { recursive: true, force: true }));
    for (const job of ['930', '931', '932']) {
      t.equal(rig.prolog(job, '0,1', false), 0, `prolog ${job}, not waited for`);
      const before = rig.runs();
      const got = await rig.task({ SLURM_JOB_ID: job, SLURM_STEP_ID: '0', SLURM_JOB_GPUS: '0,1' });
      t.equal(got.code, 0, `job ${job}: the task runs`);
      t.equal(rig.runs() - before, 0, `job ${job}: the agent answered, once the record was there`, { stderr: got.stderr });
      const rec = JSON.parse(fs.readFileSync(path.join(dirOf(job), 'prolog.json'), 'utf8')) as { payload: string };
      const { time, ...payload } = JSON.parse(rec.payload) as Record<string, unknown>;
      t.match(time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/, `job ${job}: the Prolog's time`);
      const gpus = ['0000:88:00.0', '0000:89:00.0', '0000:b1:00.0', '0000:b2:00.0'];
      t.same(payload, {
        job, uid: USER, node: 'gpu001', memlock: { who: 'self', soft: 'unlimited', hard: 'unlimited' }, memlockMin: 8388608,
        hcas: ['mlx5_0', 'mlx5_1', 'mlx5_2', 'mlx5_3'], uverbs: ['uverbs0', 'uverbs1', 'uverbs2', 'uverbs3'],
        nvidia: ['nvidia-caps', 'nvidia-uvm', 'nvidia-uvm-tools', 'nvidia0', 'nvidia1', 'nvidia2', 'nvidia3', 'nvidiactl'], gpus,
        adapters: [{ name: 'mlx5_0', bdf: '0000:8a:00.0', uverbs: 'uverbs0' }, { name: 'mlx5_1', bdf: '0000:8b:00.0', uverbs: 'uverbs1' }, { name: 'mlx5_2', bdf: '0000:b3:00.0', uverbs: 'uverbs2' }, { name: 'mlx5_3', bdf: '0000:b4:00.0', uverbs: 'uverbs3' }],
        jobGpus: [0, 1],
        slurmGpus: { ok: true, how: '/etc/slurm/gres.conf AutoDetect=nvml, slurm.conf Gres=gpu:4: Slurm numbers the GPUs in PCI bus order', gpus: gpus.map((bdf, minor) => ({ bdf, minor })) },
      }, `job ${job}: its record numbers the GPUs from slurm.conf`);
    }
  });

  await t.test('straight from the Prolog to the first task: the answer of one that waited', async (t) => {
    t.equal(rig.prolog('912', '0,1'), 0, 'prolog');
    const want = await rig.task({ SLURM_JOB_ID: '912', SLURM_STEP_ID: '0', SLURM_JOB_GPUS: '0,1' });
    for (let i = 0; i < 5; i++) {
      const job = String(913 + i);
      t.equal(rig.prolog(job, '0,1', false), 0, `prolog ${job}, not waited for`);
      const before = rig.runs();
      const got = await rig.task({ SLURM_JOB_ID: job, SLURM_STEP_ID: '0', SLURM_JOB_GPUS: '0,1' });
      t.same(said(got), said(want), `job ${job}: the same answer`);
      t.equal(rig.runs() - before, 0, `job ${job}: the agent answered`, { stderr: got.stderr });
      t.equal(fs.lstatSync(dirOf(job)).uid, USER, `job ${job}: its directory its user's`);
    }
  });
}
