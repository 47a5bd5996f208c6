// How often the agent reads the mount table (/proc/self/mountinfo) to answer one TaskProlog request (agent/task.ts
// answerTask): once, before it looks at the job's directory. A job's user may mount up to fusermount's mount_max (1000)
// file systems in it, and each read then costs the agent's one thread ms. The request is a real TaskProlog's (its
// facts written by slurm/taskprolog.sh as the job's user), asked again for a live process of that user.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { answerTask } from '../../src/agent/task.js';
import { FsHost } from '../../src/host/fs-host.js';
import { startRig, USER } from '../task/_agent-rig.js';

if (process.getuid?.() !== 0) t.skip('needs root (the agent is root, the TaskProlog runs as the job uid)', () => {});
else await main();

async function main(): Promise<void> {
  const rig = await startRig();
  t.teardown(() => rig.close());
  const TABLE = '/proc/self/mountinfo';
  let reads = 0;
  // Every read of the table goes through node:fs's readFileSync (host/mounts.ts): each counted, then done as it would be.
  const real = fs.readFileSync;
  fs.readFileSync = function (this: unknown, ...a: Parameters<typeof real>) {
    if (a[0] === TABLE) reads++;
    return real.apply(this, a);
  } as typeof real;
  t.teardown(() => {
    fs.readFileSync = real;
  });

  await t.test('a request judged: the table read once', async (t) => {
    t.equal(rig.prolog('610', '0,1'), 0, 'prolog');
    rig.conf(true);
    t.equal((await rig.task({ SLURM_JOB_ID: '610', SLURM_STEP_ID: '0', SLURM_JOB_GPUS: '0,1' })).code, 0, 'the TaskProlog ran');
    const dir = path.join(rig.stateDir, 'job-610');
    const name = fs.readdirSync(dir).find((f) => f.endsWith('.facts'))!;
    // Those facts, as a live process of the user's would send them again.
    const proc = spawn('/bin/sleep', ['60'], { uid: USER, gid: USER });
    t.teardown(() => void proc.kill());
    const facts = fs.readFileSync(path.join(dir, name), 'utf8').split('\n');
    const [, , nonce, , uid, fail] = facts[0]!.split(' ');
    facts[0] = `gdrgate-task-facts 1 ${nonce} ${proc.pid} ${uid} ${fail}`;
    fs.writeFileSync(path.join(dir, name), facts.join('\n'));
    fs.chownSync(path.join(dir, name), USER, USER);
    reads = 0;
    const a = await answerTask({ job: '610', pid: proc.pid!, fd: 87, view: name.split('.')[1]!, nonce: nonce!, config: rig.config }, rig.config, new FsHost('/'));
    t.same([a.ok, reads], [true, 1], 'judged, the table read once');
  });
}
