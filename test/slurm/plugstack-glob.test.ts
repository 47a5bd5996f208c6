// plugstack.conf include globs matched as glob(3) matches them (spank.c), never through a regular expression: a `[` left open is a plain `[`, `[!x]` is "not x", and a glob of many stars against a long name ends at once.
import t, { type Test } from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { FsHost } from '../../src/host/fs-host.js';
import { CLI } from '../helpers/paths.js';
import { findPyxis } from '../../src/slurm/plugstack.js';

const PYXIS = 'required /usr/lib/x86_64-linux-gnu/slurm/spank_pyxis.so\n';

function tree(t: Test, files: Record<string, string>): string {
  const dir = t.testdir();
  for (const [f, text] of Object.entries(files)) {
    mkdirSync(path.join(dir, path.dirname(f)), { recursive: true });
    writeFileSync(path.join(dir, f), text);
  }
  return dir;
}

t.test('a `[` never closed is the character itself: the file of that name is followed, nothing thrown', async (t) => {
  const dir = tree(t, { 'etc/slurm/plugstack.conf': 'include /etc/slurm/plug/[x*.conf\n', 'etc/slurm/plug/[x1.conf': PYXIS, 'etc/slurm/plug/x1.conf': '' });
  t.strictSame(await findPyxis(new FsHost(dir), '/etc/slurm/plugstack.conf'), { at: { file: '/etc/slurm/plug/[x1.conf', line: 1 }, problems: [] });
});

t.test('bracket expressions: [!a] and [^a] are "not a", ranges, a `]` first is itself, `\\` escapes', async (t) => {
  const files = { 'etc/slurm/plug/a.conf': PYXIS, 'etc/slurm/plug/b.conf': '', 'etc/slurm/plug/].conf': PYXIS, 'etc/slurm/plug/*.conf': PYXIS };
  const at = async (glob: string) => (await findPyxis(new FsHost(tree(t, { ...files, 'etc/slurm/plugstack.conf': `include /etc/slurm/plug/${glob}\n` })), '/etc/slurm/plugstack.conf')).at?.file ?? null;
  t.equal(await at('[!a].conf'), '/etc/slurm/plug/*.conf', '[!a]: *, ] and b, in order; a skipped');
  t.equal(await at('[^a*].conf'), '/etc/slurm/plug/].conf', '[^a*]: ] and b; * and a skipped');
  t.equal(await at('[a-b].conf'), '/etc/slurm/plug/a.conf');
  t.equal(await at('[]].conf'), '/etc/slurm/plug/].conf');
  t.equal(await at('\\*.conf'), '/etc/slurm/plug/*.conf');
  t.equal(await at('[b-c]*'), null);
});

t.test('as glob(3) also reads them: a character class, a `\\` inside brackets, a leading `.` matched only by a `.`', async (t) => {
  const files = { 'etc/slurm/plug/x.conf': PYXIS, 'etc/slurm/plug/].conf': PYXIS, 'etc/slurm/plug/.p.conf': PYXIS, 'etc/slurm/plug/[.conf': '' };
  const at = async (glob: string) => (await findPyxis(new FsHost(tree(t, { ...files, 'etc/slurm/plugstack.conf': `include /etc/slurm/plug/${glob}\n` })), '/etc/slurm/plugstack.conf')).at?.file ?? null;
  t.equal(await at('[[:alpha:]].conf'), '/etc/slurm/plug/x.conf', '[[:alpha:]] is any letter, not one of "[:alph" followed by "]"');
  t.equal(await at('[![:alpha:]].conf'), '/etc/slurm/plug/].conf', '[![:alpha:]]: [ (no pyxis) and ], not x');
  t.equal(await at('[\\]].conf'), '/etc/slurm/plug/].conf', '[\\]]: the escaped ] is in the set, the next one closes it');
  t.equal(await at('.p*'), '/etc/slurm/plug/.p.conf', 'a leading . in the glob matches a name that starts with one');
  t.equal(await at('*p.conf'), null, 'a * never matches the leading . of .p.conf');
});

t.test('slurm-config: `include *a*a…*b` (40 stars) beside a name of 250 a: answered, not backtracked for ever', async (t) => {
  const dir = tree(t, { 'slurm.conf': 'ClusterName=c\n', 'plugstack.conf': `include plug/${'*a'.repeat(40)}*b\n`, [`plug/${'a'.repeat(250)}`]: PYXIS, 'plug/ab': PYXIS });
  // Killed outright at 60 s: a SIGTERM waits for a synchronous match to end.
  const r = spawnSync(process.execPath, [CLI, 'slurm-config', '--conf', path.join(dir, 'slurm.conf'), '--slurm-version', '24.11', '--json'], { encoding: 'utf8', timeout: 60_000, killSignal: 'SIGKILL' });
  t.equal(r.status, 0, 'exited 0 (before the change: killed, no exit code)');
  const tp = r.status === 0 ? (JSON.parse(r.stdout) as { changes: { key: string; action: string }[] }).changes.find((c) => c.key === 'TaskProlog') : undefined;
  t.equal(tp?.action, 'add', 'neither name matches: no pyxis, TaskProlog added');
});
