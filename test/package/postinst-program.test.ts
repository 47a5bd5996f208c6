// The package's postinst (the .deb's, the .rpm's %post) makes the startup snapshot with the package's own program,
// /usr/sbin/gdrgate, whatever the caller's PATH holds: sudo's secure_path and dpkg put /usr/local/bin before /usr/sbin,
// where `npm install -g gdrgate` puts its own gdrgate (its blob goes beside itself, never to /var/lib/gdrgate).
// Run as the maintainer script runs it (sh -e), /usr/sbin/gdrgate moved into the test's own directory.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { scratchDir } from '../helpers/scratch.js';

// (A module of the build's scripts, plain JavaScript: imported by its path as a string, typed here.)
const MAINT: string = '../../scripts/package-maint.mjs';
const { POSTINST } = (await import(MAINT)) as { POSTINST: string };
const dir = scratchDir('gdrgate-postinst-');
const SBIN = '/usr/sbin/gdrgate';
const calls = path.join(dir, 'calls');
/** A gdrgate at `file` that records which one ran and with what. */
const gdrgate = (file: string, name: string): string => {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `#!/bin/sh\necho "${name} $*" >> "${calls}"\n`, { mode: 0o755 });
  return file;
};
const pkg = gdrgate(path.join(dir, 'usr/sbin/gdrgate'), 'package');
const npm = gdrgate(path.join(dir, 'usr/local/bin/gdrgate'), 'npm');

t.test('the package’s gdrgate makes the snapshot, not the one earlier on PATH', async (t) => {
  t.equal(POSTINST.split('\n').filter((l) => l.startsWith(`${SBIN} `)).length, 1, 'the postinst runs /usr/sbin/gdrgate by its path, once');
  // The PATH sudo gives (secure_path), /usr/local/bin first, with nothing else on it: no systemctl or systemd-tmpfiles
  // of this machine is run, and its systemd is never asked (/run/systemd/system moved to a directory that is not there).
  const script = POSTINST.replaceAll(SBIN, pkg).replaceAll('/run/systemd/system', path.join(dir, 'no-systemd'));
  const r = spawnSync('/bin/sh', ['-ec', script], { encoding: 'utf8', env: { PATH: `${path.dirname(npm)}:${path.dirname(pkg)}` }, timeout: 30_000 });
  t.same({ code: r.status, stderr: r.stderr }, { code: 0, stderr: '' });
  t.equal(readFileSync(calls, 'utf8'), 'package startup-snapshot\n');
});
