// The agent reads as root what a TaskProlog's user asks it to judge: the config, the baseline, the signed record and its key; it may use each only where the job's user could read it too (an admin's 0600 file), whatever the facts (the user's to write) claim.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { answerTask } from '../../src/agent/task.js';
import { FsHost } from '../../src/host/fs-host.js';
import { factsAgain, said, startRig } from '../task/_agent-rig.js';

if (process.getuid?.() !== 0) t.skip('needs root (the agent is root, the TaskProlog runs as the job uid)', () => {});
else await main();

async function main(): Promise<void> {
  const rig = await startRig();
  t.teardown(() => rig.close());
  const pub = path.join(rig.stateDir, 'signing.pub');
  const baseline = path.join(rig.work, 'baseline.json');

  await t.test('a signing key only root may read: the same answer as gdrgate task', async (t) => {
    t.equal(rig.prolog('600', '0,1'), 0, 'prolog');
    fs.chmodSync(pub, 0o600);
    t.teardown(() => fs.chmodSync(pub, 0o644));
    const b = await rig.both('600', { SLURM_STEP_ID: '0', SLURM_JOB_GPUS: '0,1' });
    t.same(said(b.viaAgent), said(b.viaNode), 'the same lines and exit code');
    t.same(b.agentRecord, b.nodeRecord, 'the same task record');
  });

  await t.test('facts that claim what the mode bits deny', async (t) => {
    t.equal(rig.prolog('601', '0,1'), 0, 'prolog');
    rig.conf(true);
    const r = await rig.task({ SLURM_JOB_ID: '601', SLURM_STEP_ID: '0', SLURM_JOB_GPUS: '0,1' });
    t.equal(r.code, 0, 'the TaskProlog ran');
    const dir = path.join(rig.stateDir, 'job-601');
    // Those facts, as a live process of the user's would send them again.
    const { name, proc, nonce } = factsAgain(t, rig.stateDir, '601');
    const ask = () => answerTask({ job: '601', pid: proc.pid!, fd: 87, view: name.split('.')[1]!, nonce, config: rig.config }, rig.config, new FsHost('/'));
    t.equal((await ask()).ok, true, 'files the user may read: judged');
    for (const [file, why] of [
      [baseline, `not among the TaskProlog's facts: the baseline ${baseline}: readable, say the facts; not by its mode`],
      [rig.config, `the job's user cannot read ${rig.config}`],
      [pub, `the job's user cannot read ${pub}`],
    ] as const) {
      fs.chmodSync(file, 0o600);
      try {
        t.same(await ask(), { ok: false, why }, `${path.basename(file)} 0600: not judged`);
      } finally {
        fs.chmodSync(file, 0o644);
      }
    }
    // A link the user put in place of prolog.json is not followed by the agent (it could lead to a hung mount).
    const record = path.join(dir, 'prolog.json');
    fs.renameSync(record, `${record}.real`);
    fs.symlinkSync('prolog.json.real', record);
    t.same(await ask(), { ok: false, why: `the job's user cannot read ${record}` }, 'prolog.json a link: not judged');
  });
}
