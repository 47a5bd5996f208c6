// How often the agent reads the mount table (/proc/self/mountinfo) to answer one TaskProlog request (agent/task.ts
// answerTask): never. A job's user may mount up to fusermount's mount_max (1000) file systems in the job's directory, and
// each read then cost the agent's one thread ms; and a table read before a look leaves a window between them. The job's
// directory and every name in it are looked at as held (host/held-dir.ts), which tells a mount without the table. The
// request is a real TaskProlog's (its facts written by slurm/taskprolog.sh as the job's user), asked again for a live
// process of that user.
import t from 'tap';
import { answerTask } from '../../src/agent/task.js';
import { FsHost } from '../../src/host/fs-host.js';
import { countTableReads } from '../helpers/table-reads.js';
import { factsAgain, startRig } from '../task/_agent-rig.js';

if (process.getuid?.() !== 0) t.skip('needs root (the agent is root, the TaskProlog runs as the job uid)', () => {});
else await main();

async function main(): Promise<void> {
  const rig = await startRig();
  t.teardown(() => rig.close());
  const reads = countTableReads(t);

  await t.test('a request judged: the table never read', async (t) => {
    t.equal(rig.prolog('610', '0,1'), 0, 'prolog');
    rig.conf(true);
    t.equal((await rig.task({ SLURM_JOB_ID: '610', SLURM_STEP_ID: '0', SLURM_JOB_GPUS: '0,1' })).code, 0, 'the TaskProlog ran');
    // Those facts, as a live process of the user's would send them again.
    const { name, proc, nonce } = factsAgain(t, rig.stateDir, '610');
    const before = reads();
    const a = await answerTask({ job: '610', pid: proc.pid!, fd: 87, view: name.split('.')[1]!, nonce, config: rig.config }, rig.config, new FsHost('/'));
    t.same([a.ok, reads() - before], [true, 0], 'judged, the table never read');
  });
}
