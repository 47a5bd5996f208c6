// A job's user may mount on their own job's directory (fusermount mounts on what the user owns); with allow_other a
// FUSE daemon there holds root's every look uninterruptibly (the review of e8e7aec wedged the agent and the Epilog so).
// Root reads the mount table first and never enters: the agent refuses that job's TaskProlog requests (the TaskProlog
// then runs gdrgate itself), the Epilog detaches the mount without asking it anything, then removes the directory.
// A tmpfs mounted as the user's stands in for the FUSE file system: what is tested is that root does not go in.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { mountsBelow } from '../../src/host/mounts.js';
import { startRig, USER } from '../task/_agent-rig.js';

const MOUNT = '/usr/bin/mount';
const canMount = (): boolean => {
  if (process.getuid?.() !== 0 || !fs.existsSync(MOUNT)) return false;
  const d = fs.mkdtempSync('/tmp/gdrgate-mount-probe-');
  const ok = spawnSync(MOUNT, ['-t', 'tmpfs', 'tmpfs', d]).status === 0;
  if (ok) spawnSync('/usr/bin/umount', [d]);
  fs.rmdirSync(d);
  return ok;
};

if (!canMount()) t.skip('needs root and mount(8) that may mount a tmpfs here', () => {});
else await main();

async function main(): Promise<void> {
  const rig = await startRig();
  t.teardown(() => {
    for (const m of mountsBelow(rig.stateDir)) spawnSync('/usr/bin/umount', ['--lazy', m]);
    rig.close();
  });
  await t.test("a mount on a job's directory: the agent does not go in, the Epilog detaches it and removes the directory", async (t) => {
    t.equal(rig.prolog('700'), 0, "prolog: job 700 is USER's");
    const dir = path.join(rig.stateDir, 'job-700');
    t.equal(spawnSync(MOUNT, ['-t', 'tmpfs', '-o', `uid=${USER},gid=${USER},mode=0700`, 'tmpfs', dir]).status, 0, "the user's mount on job-700 (a tmpfs as theirs)");
    t.same(mountsBelow(rig.stateDir), [dir], 'the mount table has it');
    rig.conf(true, 'AGENT_TIMEOUT=2');
    const before = rig.runs();
    const r = await rig.task({ SLURM_JOB_ID: '700', SLURM_STEP_ID: '0' });
    t.equal(r.code, 0, 'the TaskProlog passes');
    t.equal(rig.runs() - before, 1, 'it ran gdrgate itself: the agent did not answer');
    t.equal(rig.agentErr().includes(`"why":"${dir} is a mount: not entered"`), true, 'the agent said why', { agent: rig.agentErr().slice(-1500) });
    const runsBefore = rig.runs();
    t.equal(rig.prolog('701'), 0, "another job's Prolog after it (the agent's sweep runs after each)");
    t.equal(rig.runs() - runsBefore, 0, 'answered by the agent');
    const e = spawnSync(process.execPath, [rig.cli, 'epilog', '--config', rig.config], { encoding: 'utf8', env: { PATH: '/usr/bin:/bin', SLURMD_NODENAME: 'vm', SLURM_JOB_ID: '700', SLURM_JOB_UID: String(USER) }, timeout: 60_000 });
    t.equal(e.status, 0, `the Epilog passes: ${e.stderr.slice(-400)}`);
    t.same(mountsBelow(rig.stateDir), [], 'the mount detached');
    t.equal(fs.existsSync(dir), false, "job-700's directory removed");
  });
}
