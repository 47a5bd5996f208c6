// startup-snapshot into a directory its user cannot write in (another's, a read-only file system): a refusal said
// before the build (exit 2, one line), never an internal error with a stack in the installer's output.
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { REPO } from '../helpers/paths.js';
import { reachableNode } from '../helpers/reachable.js';
import { scratchDir } from '../helpers/scratch.js';

const NOBODY = 65534;

if (process.getuid?.() !== 0) t.skip('needs root (the program run as another uid)', () => {});
else
  t.test("a directory root's and 0555, the program run as nobody: exit 2, said before the build", async (t) => {
    const work = scratchDir('gdrgate-out-unwritable-', '/tmp');
    chmodSync(work, 0o755);
    const lib = path.join(work, 'lib');
    mkdirSync(lib, { mode: 0o755 });
    const program = path.join(lib, 'gdrgate.cjs');
    copyFileSync(path.join(REPO, 'dist/gdrgate.cjs'), program);
    chmodSync(program, 0o644);
    const ro = path.join(work, 'ro');
    mkdirSync(ro, { mode: 0o555 });
    chmodSync(ro, 0o555);
    const out = path.join(ro, 'gate.blob');
    // tap's spawn adds its own NODE_OPTIONS (a file under the checkout, which nobody may write): left out.
    const r = spawnSync('/usr/bin/env', ['-u', 'NODE_OPTIONS', reachableNode(program), program, 'startup-snapshot', '--out', out, '--warm-up', path.join(REPO, 'examples/h200-vm.tar.gz')], { encoding: 'utf8', uid: NOBODY, gid: NOBODY, cwd: work, timeout: 120_000, env: { PATH: '/usr/bin:/bin' } });
    t.equal(r.status, 2, 'before: exit 3 after the build');
    t.equal(r.stderr, `gdrgate: not making ${out}: ${ro}: EACCES (this user cannot make a file there)\n`, 'before: "internal error" and a JSON stack');
    t.equal(r.stdout, '');
    t.notOk(existsSync(out));
  });
