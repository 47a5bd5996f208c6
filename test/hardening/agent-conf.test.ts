// The Slurm wrappers source the .conf beside them as root (the TaskProlog as the job's user): only a file root owns,
// in a directory root owns, neither writable by group or others. Anything else is left unread, said on stderr,
// and the wrapper goes on with the settings written in it. Each wrapper, as slurmd runs it (no PATH, cwd /).
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, copyFileSync, mkdirSync, writeFileSync } from 'node:fs';

import path from 'node:path';
import t from 'tap';
import { REPO } from '../helpers/paths.js';
import { scratchDir } from '../helpers/scratch.js';

const base = scratchDir('gdrgate-conf-');
t.teardown(() => void spawnSync('/bin/rm', ['-rf', base]));
// A stand-in for node + cli.js that says it ran: the .conf was read when its output shows.
const fake = path.join(base, 'fake-cli.sh');
writeFileSync(fake, '#!/bin/sh\necho "args: $*"\n', { mode: 0o755 });

type Setup = { what: string; file?: number; dir?: number; owner?: number; read: boolean };
const setups: Setup[] = [
  { what: "root's, 0644, in root's 0700 directory", read: true },
  { what: "root's, 0600, in root's 0755 directory", file: 0o600, dir: 0o755, read: true },
  { what: 'group-writable (0664)', file: 0o664, read: false },
  { what: 'world-writable (0646)', file: 0o646, read: false },
  { what: "another user's (uid 65534)", owner: 65534, read: false },
  { what: 'in a group-writable directory (0770)', dir: 0o770, read: false },
  { what: 'in a world-writable sticky directory (1777)', dir: 0o1777, read: false },
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
      writeFileSync(conf, `NODE=/bin/sh\nCLI=${fake}\nCONFIG=/etc/x.json\nBLOB=\nAGENT=\n`);
      chmodSync(conf, s.file ?? 0o644);
      if (s.owner !== undefined) chownSync(conf, s.owner, s.owner);
      chmodSync(dir, s.dir ?? 0o700);
      const r = spawnSync(script, [], { encoding: 'utf8', env: { SLURM_JOB_ID: '7' }, cwd: '/', timeout: 30_000 });
      if (s.read) {
        t.match(r.stdout, /^args: \S+ --config \/etc\/x\.json/, `${s.what}: read`);
        t.notMatch(r.stderr, /not reading/, `${s.what}: nothing said`);
      } else {
        t.notMatch(r.stdout, /args:/, `${s.what}: not read`);
        t.match(r.stderr, new RegExp(`gdrgate: not reading ${conf.replace(/[.]/g, '\\.')}: want it and its directory owned by root and writable by root only`), `${s.what}: said on stderr`);
      }
    }
  });
}
