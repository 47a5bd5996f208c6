// What the gate trusts as root is judged along the path a read takes, not only at its end: a link in a directory another
// user can write (they swap it between the check and the read), a directory above the gate's own state, spool or log
// that they own (they re-point the whole path) are refused, each with the place named; the same files reached through
// root's own links and directories are accepted. Real files and links, an unprivileged owner (uid 65534); needs root.
import t from 'tap';
import { chmodSync, chownSync, existsSync, lchownSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { untrustedReason } from '../../src/host/trust.js';
import { ensureSafeDir, writeAtomic } from '../../src/host/files.js';
import { ensureStateDir } from '../../src/state/store.js';
import { makeGateEnv } from '../helpers/gate-env.js';
import { scratchDir } from '../helpers/scratch.js';
import { thrown } from '../helpers/thrown.js';

const USER = 65534;


if (process.getuid?.() !== 0) t.skip('needs root: files of another owner', () => {});
else main();

function main(): void {
  const top = scratchDir('gdrgate-trust-');
  chmodSync(top, 0o755);
  const file = path.join(top, 'config.json');
  writeFileSync(file, '{}\n', { mode: 0o644 });
  const user = path.join(top, 'user');
  mkdirSync(user, { mode: 0o755 });
  chownSync(user, USER, USER);
  const rootDir = path.join(top, 'root');
  mkdirSync(rootDir, { mode: 0o755 });
  const sticky = path.join(top, 'sticky');
  mkdirSync(sticky);
  chmodSync(sticky, 0o1777);

  t.test('reads: every directory passed through and every link in a shared directory is judged', async (t) => {
    symlinkSync(file, path.join(rootDir, 'link'));
    t.equal(untrustedReason(path.join(rootDir, 'link')), null, "root's link in root's directory to root's file");
    symlinkSync('../config.json', path.join(rootDir, 'rel'));
    t.equal(untrustedReason(path.join(rootDir, 'rel')), null, 'a relative link, .. walked back to root\'s directory');
    symlinkSync(file, path.join(user, 'link'));
    t.equal(untrustedReason(path.join(user, 'link')), `${user} is owned by uid ${USER}, not root (on the way to ${user}/link)`, "a link in the user's directory: they can swap it");
    symlinkSync(path.join(user, 'link'), path.join(rootDir, 'via-user'));
    t.equal(untrustedReason(path.join(rootDir, 'via-user')), `${user} is owned by uid ${USER}, not root (on the way to ${rootDir}/via-user)`, "root's link whose target passes the user's directory");
    symlinkSync(file, path.join(sticky, 'root-link'));
    t.equal(untrustedReason(path.join(sticky, 'root-link')), null, "root's link in a sticky shared directory (only root may rename it)");
    symlinkSync(file, path.join(sticky, 'user-link'));
    lchownSync(path.join(sticky, 'user-link'), USER, USER);
    t.equal(untrustedReason(path.join(sticky, 'user-link')), `${sticky}/user-link sits in a shared sticky directory and is not root's`, "the user's link in a sticky directory: theirs to replace");
    // `..` after a link is the parent of where the link leads (the kernel's), not the link's own directory.
    const sub = path.join(user, 'sub');
    mkdirSync(sub, { mode: 0o755 });
    writeFileSync(path.join(user, 'config.json'), '{"onConfigError":"closed"}\n');
    symlinkSync(sub, path.join(rootDir, 'current'));
    writeFileSync(path.join(rootDir, 'config.json'), '{}\n');
    t.equal(untrustedReason(path.join(rootDir, 'current') + '/../config.json'), `${user} is owned by uid ${USER}, not root (on the way to ${rootDir}/current/../config.json)`, "link/.. walks back from the link's target, into the user's directory");
    symlinkSync('loop-b', path.join(rootDir, 'loop-a'));
    symlinkSync('loop-a', path.join(rootDir, 'loop-b'));
    t.equal(untrustedReason(path.join(rootDir, 'loop-a')), `${rootDir}/loop-a: more than 40 symbolic links to follow`, 'a loop ends');
    t.equal(untrustedReason(path.join(rootDir, 'none')), `${rootDir}/none: ENOENT: no such file or directory, lstat '${rootDir}/none'`, 'absent');
    t.equal(untrustedReason(path.join(file, 'x')), `${file}/x: ${file} is not a directory`, 'a file used as a directory');
    chmodSync(rootDir, 0o775);
    t.equal(untrustedReason(path.join(rootDir, 'link')), `${rootDir} is writable by its group (mode 775) (on the way to ${rootDir}/link)`, 'a group-writable directory holding the link');
    chmodSync(rootDir, 0o755);
  });

  t.test("writes: a directory above the gate's own that another user can re-point is refused, nothing made there", async (t) => {
    const target = path.join(top, 'rootonly');
    mkdirSync(target, { mode: 0o700 });
    symlinkSync(target, path.join(user, 'run'));
    const stateDir = path.join(user, 'run', 'gdrgate');
    t.equal(thrown(() => ensureStateDir(stateDir)), `${stateDir} would lie where another user could redirect it: ${user} is owned by uid ${USER}, not root (on the way to ${user}/run)`);
    const spool = path.join(user, 'run', 'spool');
    t.equal(thrown(() => ensureSafeDir(spool)), `${spool} would lie where another user could redirect it: ${user} is owned by uid ${USER}, not root (on the way to ${user}/run)`);
    t.same(readdirSync(target), [], 'nothing made in the directory the link leads to');
    mkdirSync(path.join(target, 'gdrgate'), { mode: 0o711 }); // made by root earlier: the path is still refused
    t.equal(thrown(() => ensureStateDir(stateDir)), `stateDir ${stateDir} lies where another user could redirect it: ${user} is owned by uid ${USER}, not root (on the way to ${stateDir})`);
    t.equal(thrown(() => writeAtomic(path.join(stateDir, 'x'), 'x')), `${stateDir} lies where another user could redirect it: ${user} is owned by uid ${USER}, not root (on the way to ${stateDir})`);
    t.same(readdirSync(path.join(target, 'gdrgate')), [], 'no file written there');
    const prom = path.join(user, 'textfile');
    mkdirSync(prom, { mode: 0o755 }); // node_exporter's textfile directory is root's, its parent another user's (Debian)
    chownSync(prom, 0, 0);
    writeAtomic(path.join(prom, 'gdrgate.prom'), 'x 1\n', { above: false });
    t.equal(existsSync(path.join(prom, 'gdrgate.prom')), true, 'the textfile: its own directory judged only');
  });

  t.test("the log file: its own directory root's under a group-writable one (Ubuntu's /var/log, group syslog): opened", async (t) => {
    const e = makeGateEnv();
    chmodSync(e.dir, 0o755);
    const varlog = path.join(e.dir, 'var-log');
    mkdirSync(path.join(varlog, 'gdrgate'), { recursive: true, mode: 0o755 });
    chmodSync(varlog, 0o775);
    e.writeConfig({ logFile: path.join(varlog, 'gdrgate', 'gdrgate.log') });
    const r = e.prolog();
    t.equal(r.code, 0, r.stdout);
    t.equal(r.stderr, '', 'nothing said on stderr');
    t.equal(existsSync(path.join(varlog, 'gdrgate', 'gdrgate.log')), true, 'the log written');
  });

  t.test("the log file: in a directory another user owns, never opened (the run logs to stderr)", async (t) => {
    const e = makeGateEnv();
    const logs = path.join(e.dir, 'logs');
    mkdirSync(logs, { mode: 0o755 });
    chownSync(logs, USER, USER);
    chmodSync(e.dir, 0o755);
    e.writeConfig({ logFile: path.join(logs, 'gate.log') });
    const r = e.prolog();
    t.equal(r.code, 0, r.stdout);
    t.equal(r.stderr.split('\n')[0], `gdrgate: cannot open log file: ${logs}/gate.log: ${logs} is owned by uid ${USER}: another user could plant files there; logging to stderr`);
    t.equal(existsSync(path.join(logs, 'gate.log')), false, 'no file made there');
  });
}
