// Directories the gate makes (stateDir, the spool, the drain lock's directory) are made one component at a time:
// Node's recursive mkdir retried for ever where the kernel answers ENOENT under a parent that is there (a path under
// /proc), in a synchronous loop that neither the deadline nor SIGTERM ends (the review of 44e9a6d: a draining Prolog
// whose spool was /proc/gdrgate-spool spun at full CPU for 20 minutes). Now that answer is an error, and the run goes on.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { makeDirs } from '../../src/host/dirs.js';
import { breakLink, makeGateEnv } from '../helpers/gate-env.js';
import { CLI, REPO } from '../helpers/paths.js';

t.test('makeDirs: the missing components made with the mode asked, what is there no error', async (t) => {
  const base = mkdtempSync(path.join(tmpdir(), 'gdrgate-mkdirs-'));
  makeDirs(path.join(base, 'a/b/c'), 0o711);
  t.same(['a', 'a/b', 'a/b/c'].map((p) => statSync(path.join(base, p)).mode & 0o777), [0o711, 0o711, 0o711]);
  makeDirs(path.join(base, 'a/b/c'), 0o711);
  t.equal(statSync(path.join(base, 'a/b/c')).isDirectory(), true, 'made again: no error');
});

t.test('under /proc: ENOENT at once, in a process that ends', async (t) => {
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', `import { makeDirs } from '${path.join(REPO, 'dist/host/dirs.js')}'; try { makeDirs('/proc/gdrgate-test-spool/x', 0o755); } catch (e) { console.log(e.code); }`], { encoding: 'utf8', timeout: 30_000, killSignal: 'SIGKILL' });
  t.same([r.signal, r.status, r.stdout], [null, 0, 'ENOENT\n'], 'no endless loop: ENOENT');
});

t.test("a Prolog draining with its spool under /proc: drained, exit 1, the record's failure logged", async (t) => {
  const env = makeGateEnv();
  env.writeConfig({ spool: '/proc/gdrgate-spool' });
  breakLink(env.tree);
  // (SIGKILL at 60 s: the spinning loop ran past SIGTERM.)
  const r = spawnSync(process.execPath, [CLI, 'prolog', '--config', env.config], { encoding: 'utf8', env: { ...process.env, SLURMD_NODENAME: 'vm', SLURM_JOB_ID: '42' }, timeout: 60_000, killSignal: 'SIGKILL' });
  t.same([r.signal, r.status], [null, 1], 'the verdict, in time');
  t.same(env.drainCalls(), ['update nodename=vm state=drain reason=gdrgate: pcie-link 0000:00:06.0 Gen5 x8 (want Gen5 x16) job=42']);
  const lines = readFileSync(env.log, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { msg: string; why?: string });
  t.same(lines.filter((l) => l.msg.startsWith('drain written')).map((l) => [l.msg, l.why]), [["drain written, its record not kept: an earlier record of this node leaves it for gdrgate resume, none the prefix rule", "ENOENT: no such file or directory, mkdir '/proc/gdrgate-spool'"]]);
});
