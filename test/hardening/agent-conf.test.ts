// The Slurm wrappers source the .conf beside them as root (the TaskProlog as the job's user): only the file they
// opened, if root owns it and every directory above where it really lies, none writable by group or others (a
// sticky directory may be: nobody can replace root's entry in it). A link into a directory another user controls,
// or one that renames the file, is refused. Anything else is left unread, said on stderr, and the wrapper goes on
// with the settings written in it. Each wrapper, as slurmd runs it (no PATH, cwd /).
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, copyFileSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';

import path from 'node:path';
import t from 'tap';
import { REPO } from '../helpers/paths.js';
import { scratchDir } from '../helpers/scratch.js';

const base = scratchDir('gdrgate-conf-');
t.teardown(() => void spawnSync('/bin/rm', ['-rf', base]));
// A stand-in for node + cli.js that says it ran: the .conf was read when its output shows.
const fake = path.join(base, 'fake-cli.sh');
writeFileSync(fake, '#!/bin/sh\necho "args: $*"\n[ -z "${GDRGATE_VERDICT_FD-}" ] || echo 0 >"/proc/self/fd/$GDRGATE_VERDICT_FD"\n', { mode: 0o755 });

type Setup = { what: string; file?: number; dir?: number; owner?: number; read: boolean; link?: { dir: number; name?: string } };
const setups: Setup[] = [
  { what: "root's, 0644, in root's 0700 directory", read: true },
  { what: "root's, 0600, in root's 0755 directory", file: 0o600, dir: 0o755, read: true },
  { what: 'group-writable (0664)', file: 0o664, read: false },
  { what: 'world-writable (0646)', file: 0o646, read: false },
  // The sticky bit protects a directory's entries, never a file's bytes (the review of e8e7aec found 1666 read).
  { what: 'world-writable with the sticky bit (1666)', file: 0o1666, read: false },
  { what: "another user's (uid 65534)", owner: 65534, read: false },
  { what: 'in a group-writable directory (0770)', dir: 0o770, read: false },
  { what: 'in a world-writable sticky directory (1777)', dir: 0o1777, read: true },
  // The .conf beside the wrapper a link to a root-owned file in a directory anyone may write (non-sticky): the file
  // there could be swapped between a check and the source, so it is never read.
  { what: 'a link into a world-writable directory (0777)', link: { dir: 0o777 }, read: false },
  { what: "a link into root's 0755 directory", link: { dir: 0o755 }, read: true },
  { what: "a link to another name in root's directory", link: { dir: 0o755, name: 'other.conf' }, read: false },
];
const wrappers = ['prolog', 'epilog', 'taskprolog'];

let n = 0;
for (const w of wrappers) {
  t.test(`slurm/${w}.sh`, async (t) => {
    for (const s of setups) {
      const dir = path.join(base, `${w}-${n++}`);
      mkdirSync(dir);
      const script = path.join(dir, `gdrgate-${w}.sh`);
      copyFileSync(path.join(REPO, `slurm/${w}.sh`), script);
      chmodSync(script, 0o755);
      const conf = path.join(dir, `gdrgate-${w}.conf`);
      const target = s.link ? path.join(base, `${w}-${n++}-target`, s.link.name ?? `gdrgate-${w}.conf`) : conf;
      if (s.link) mkdirSync(path.dirname(target));
      writeFileSync(target, `NODE=/bin/sh\nCLI=${fake}\nCONFIG=/etc/x.json\nBLOB=\nAGENT=\n`);
      chmodSync(target, s.file ?? 0o644);
      if (s.owner !== undefined) chownSync(target, s.owner, s.owner);
      if (s.link) {
        symlinkSync(target, conf);
        chmodSync(path.dirname(target), s.link.dir);
      }
      chmodSync(dir, s.dir ?? 0o700);
      const r = spawnSync(script, [], { encoding: 'utf8', env: { SLURM_JOB_ID: '7' }, cwd: '/', timeout: 30_000 });
      if (s.read) {
        t.match(r.stdout, /^args: \S+ --config \/etc\/x\.json/, `${s.what}: read`);
        t.notMatch(r.stderr, /not reading/, `${s.what}: nothing said`);
      } else {
        t.notMatch(r.stdout, /args:/, `${s.what}: not read`);
        t.match(r.stderr, new RegExp(`^gdrgate: not reading ${conf.replace(/[.]/g, '\\.')}: want it a regular file and it, and every directory above where it lies, owned by root and writable by root only$`, 'm'), `${s.what}: said on stderr`);
      }
    }
  });
}
