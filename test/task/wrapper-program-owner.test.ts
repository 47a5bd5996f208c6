// slurm/taskprolog.sh starts NODE and CLI only where root alone can change them, as slurm/prolog.sh and epilog.sh do:
// a program another user may write would run as every job's user in their tasks. Such a task runs, ungated, said.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { taskWrapperDir } from './_wrapper-dir.js';

const NOBODY = 65534;
if (process.getuid?.() !== 0) t.skip('TaskProlog program owner: needs root (files of another user, a task as the job user)', () => {});
else main();

function main(): void {
  // A stand-in for node + cli.js that says it ran, writing its verdict as gdrgate does (src/host/verdict.ts).
  const { dir, wrapper, fake } = taskWrapperDir('gdrgate-taskowner-', () => '#!/bin/sh\necho "print ran: $*"\n[ -z "${GDRGATE_VERDICT_FD-}" ] || echo 0 >"/proc/self/fd/$GDRGATE_VERDICT_FD"\nexit 0\n', 0o755);
  const theirs = path.join(dir, 'theirs');
  fs.mkdirSync(theirs, { mode: 0o755 });
  const inTheirs = path.join(theirs, 'cli.sh');
  fs.copyFileSync(fake, inTheirs);
  fs.chmodSync(inTheirs, 0o755);
  fs.chownSync(theirs, NOBODY, NOBODY);
  const run = (cli: string): { code: number | null; stdout: string; stderr: string } => {
    fs.writeFileSync(path.join(dir, 'gdrgate-taskprolog.conf'), `NODE=/bin/sh\nCLI=${cli}\nCONFIG=/etc/x.json\nLOGGER=\nBLOB=\nAGENT=\nSTATE=\n`, { mode: 0o644 });
    const r = spawnSync(wrapper, [], { encoding: 'utf8', env: { PATH: '/usr/bin:/bin' }, cwd: '/', uid: NOBODY, gid: NOBODY, timeout: 30_000 });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };
  const refused = (cli: string, missing = false) => ({
    code: 0,
    stdout: '',
    stderr: `gdrgate taskprolog: not starting /bin/sh ${cli} (${cli}${missing ? ' is missing' : ", or a directory above where it lies, is not root's alone or not a regular file"}): want each a regular file there, and it and every directory above where it lies owned by root and writable by root only; letting the task run\n`,
  });

  t.test("root's program: started", async (t) => {
    t.same(run(fake), { code: 0, stdout: 'print ran: task --config /etc/x.json\n', stderr: '' });
  });

  t.test('a program another user can change: not started, the task runs and it is said', async (t) => {
    fs.chownSync(fake, NOBODY, NOBODY);
    t.same(run(fake), refused(fake), 'the file is theirs');
    fs.chownSync(fake, 0, 0);
    fs.chmodSync(fake, 0o777);
    t.same(run(fake), refused(fake), 'the file is writable by anyone');
    fs.chmodSync(fake, 0o755);
    t.same(run(inTheirs), refused(inTheirs), 'root\'s file in a directory that is theirs');
    const missing = path.join(dir, 'none.sh');
    t.same(run(missing), refused(missing, true), 'no program there');
  });

  t.test("in a user namespace, a container's, root's files read as nobody's: who may change them cannot be told there, so the program is started as given", async (t) => {
    // The settings written into the script (a .conf of root's reads as nobody's there too, and is rightly not read).
    const baked = path.join(dir, 'baked.sh');
    const text = fs.readFileSync(wrapper, 'utf8').replace(/^NODE=.*$/m, 'NODE=/bin/sh').replace(/^CLI=.*$/m, `CLI=${fake}`).replace(/^CONFIG=.*$/m, 'CONFIG=/etc/x.json').replace(/^STATE=.*$/m, 'STATE=').replace(/^AGENT=.*$/m, 'AGENT=').replace(/^BLOB=.*$/m, 'BLOB=').replace(/^LOGGER=.*$/m, 'LOGGER=');
    fs.writeFileSync(baked, text, { mode: 0o755 });
    const r = spawnSync('/usr/bin/unshare', ['--user', `--map-user=${NOBODY}`, `--map-group=${NOBODY}`, '--', baked], { encoding: 'utf8', env: { PATH: '/usr/bin:/bin' }, cwd: '/', timeout: 30_000 });
    t.same({ code: r.status, stdout: r.stdout, stderr: r.stderr }, { code: 0, stdout: 'print ran: task --config /etc/x.json\n', stderr: '' });
  });
}
