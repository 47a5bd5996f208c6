// Root never goes into a job user's mount in the job's directory, whichever way the config spells the state directory
// (through a link, as /var/run is to /run; with a trailing slash): the mount table names mount points by their real
// path, and a check that compared it with the config's spelling found no mount, went in, and waited on the user's FUSE
// daemon. Here the daemon never answers (helpers/dead-fuse.ts), as a user's can hold root on allow_other: the agent's
// sweep after a Prolog wedged it (every later Prolog waited its AGENT_TIMEOUT and ran gdrgate itself) and the Epilog
// never returned (slurmd drains a node whose Epilog times out).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { canMountDeadFuse, deadFuse, type DeadFuse } from '../helpers/dead-fuse.js';
import { startRig, USER } from '../task/_agent-rig.js';

const SPELLINGS: readonly { readonly name: string; readonly stateDir: (work: string) => string }[] = [
  {
    name: 'through a link',
    stateDir: (work) => {
      fs.symlinkSync('.', path.join(work, 'via'));
      return path.join(work, 'via', 'run');
    },
  },
  { name: 'with a trailing slash', stateDir: (work) => `${path.join(work, 'run')}/` },
  {
    // As an admin may give it a tmpfs of its own: its jobs' directories lie on that mount, not on their parent's.
    name: 'a mount point of its own (tmpfs)',
    stateDir: (work) => {
      const run = path.join(work, 'run');
      fs.mkdirSync(run, { mode: 0o711 });
      if (spawnSync('/usr/bin/mount', ['-t', 'tmpfs', '-o', 'size=4m,mode=0711', 'tmpfs', run]).status !== 0) throw new Error(`no tmpfs on ${run}`);
      return run;
    },
  },
];

if (!canMountDeadFuse()) t.skip('needs root, /dev/fuse and mount(8) that may mount a FUSE file system here', () => {});
else for (const s of SPELLINGS) await t.test(`the state directory spelled ${s.name}`, (t) => main(t, s.stateDir));

async function main(t: Test, spell: (work: string) => string): Promise<void> {
  const rig = await startRig({ stateDir: spell });
  const real = path.join(rig.work, 'run');
  let fuse: DeadFuse | null = null;
  // The connection closed first: nothing left waiting on it when the rig's directory is removed.
  // (The state directory's own tmpfs, where there is one, detached after: the rig's removal would stop at it.)
  t.teardown(() => (fuse?.release(), spawnSync('/usr/bin/umount', ['--lazy', real], { stdio: 'ignore' }), rig.close()));
  t.equal(rig.prolog('700'), 0, "prolog: job 700 is USER's");
  t.equal(rig.prolog('701'), 0, 'prolog: job 701 (the agent now reads two jobs)');
  fuse = deadFuse(path.join(real, 'job-700'), USER);
  t.not(fuse, null, "the user's dead FUSE mounted on job-700");
  const before = rig.runs();
  t.equal(rig.prolog('702'), 0, 'a Prolog answered, after which the agent sweeps its jobs');
  t.equal(rig.prolog('703'), 0, 'and the next Prolog');
  t.equal(rig.runs() - before, 0, 'both answered by the agent: it did not wait on the mount');
  const e = spawnSync(process.execPath, [rig.cli, 'epilog', '--config', rig.config], {
    encoding: 'utf8',
    env: { PATH: '/usr/bin:/bin', SLURMD_NODENAME: 'gpu001', SLURM_JOB_ID: '700', SLURM_JOB_UID: String(USER) },
    timeout: 30_000,
    killSignal: 'SIGKILL',
  });
  t.same([e.status, e.signal], [0, null], `job 700's Epilog returned: ${e.stderr.slice(-600)}`);
  const mounted = fs.readFileSync('/proc/self/mountinfo', 'utf8').includes(` ${real}/job-700 `);
  t.equal(mounted, false, 'the mount detached');
  // Looked at only once nothing is mounted there: this process would wait on the mount as root does.
  t.equal(!mounted && fs.existsSync(path.join(real, 'job-700')), false, "job-700's directory removed");
}
