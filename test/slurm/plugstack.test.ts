// pyxis among the SPANK plugins, as pyxis's README installs it (plugstack.conf `include /etc/slurm/plugstack.conf.d/*`,
// pyxis.conf a link to the package's `required /usr/share/pyxis/../spank_pyxis.so`, its Makefile's line), and what
// `gdrgate slurm-config` then says of TaskProlog: optional, with why (a container step's TaskProlog runs inside its
// container, where Slurm ends the task when it cannot run it). Other layouts: PlugStackConfig, relative includes,
// optional plugins, comments; none (no plugstack.conf at all).
import t, { type Test } from 'tap';
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { FsHost } from '../../src/host/fs-host.js';
import { cli } from '../helpers/cli.js';
import { scratchDir } from '../helpers/scratch.js';
import { findPyxis, parsePlugstack } from '../../src/slurm/plugstack.js';

const PYXIS = 'required /usr/lib/x86_64-linux-gnu/slurm/spank_pyxis.so\n';

function tree(t: Test, files: Record<string, string>, links: Record<string, string> = {}): { dir: string; host: FsHost } {
  const dir = t.testdir();
  for (const [f, text] of Object.entries(files)) {
    mkdirSync(path.join(dir, path.dirname(f)), { recursive: true });
    writeFileSync(path.join(dir, f), text);
  }
  for (const [f, to] of Object.entries(links)) {
    mkdirSync(path.join(dir, path.dirname(f)), { recursive: true });
    symlinkSync(to, path.join(dir, f));
  }
  return { dir, host: new FsHost(dir) };
}

t.test('the plugstack lines: required, optional, include; comments and blank lines ignored', async (t) => {
  t.strictSame(parsePlugstack('# spank\n\nrequired /a/spank_pyxis.so container_scope=job\n  optional x.so # trailing\ninclude plugstack.conf.d/*\nbogus y\n', '/p'), [
    { file: '/p', line: 3, kind: 'required', target: '/a/spank_pyxis.so' },
    { file: '/p', line: 4, kind: 'optional', target: 'x.so' },
    { file: '/p', line: 5, kind: 'include', target: 'plugstack.conf.d/*' },
  ]);
});

t.test("pyxis's README layout: found through the include and the link", async (t) => {
  const { host } = tree(t, { 'etc/slurm/plugstack.conf': 'include /etc/slurm/plugstack.conf.d/*\n', 'usr/share/pyxis/pyxis.conf': PYXIS, 'etc/slurm/plugstack.conf.d/00-other.conf': 'optional /usr/lib/slurm/spank_other.so\n' }, { 'etc/slurm/plugstack.conf.d/pyxis.conf': '../../../usr/share/pyxis/pyxis.conf' });
  t.strictSame(await findPyxis(host, '/etc/slurm/plugstack.conf'), { at: { file: '/etc/slurm/plugstack.conf.d/pyxis.conf', line: 1 }, problems: [] });
});

t.test('a relative include (from the including file), optional pyxis; none at all; commented out', async (t) => {
  const rel = tree(t, { 'opt/slurm/etc/plug.conf': 'include conf.d/*.conf\n', 'opt/slurm/etc/conf.d/pyxis.conf': 'optional spank_pyxis.so\n' });
  t.strictSame(await findPyxis(rel.host, '/opt/slurm/etc/plug.conf'), { at: { file: '/opt/slurm/etc/conf.d/pyxis.conf', line: 1 }, problems: [] });
  const none = tree(t, { 'etc/slurm/slurm.conf': 'ClusterName=c\n' });
  t.strictSame(await findPyxis(none.host, '/etc/slurm/plugstack.conf'), { at: null, problems: [] }, 'no plugstack.conf: no SPANK plugin (Slurm: not an error)');
  const off = tree(t, { 'etc/slurm/plugstack.conf': '#required /usr/lib/slurm/spank_pyxis.so\ninclude /etc/slurm/plugstack.conf.d/*\n' });
  t.strictSame(await findPyxis(off.host, '/etc/slurm/plugstack.conf'), { at: null, problems: [] }, 'commented out; an include of a missing directory matches nothing');
});

t.test('slurm-config under pyxis (the built command): TaskProlog optional, and why', async (t) => {
  /** `files` given the directory they are written to (a slurm.conf names absolute paths). */
  const run = (files: (dir: string) => Record<string, string>): { changes: { key: string; action: string; why: string }[]; warnings: string[] } => {
    const dir = scratchDir('gdrgate-plugstack-');
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    for (const [f, text] of Object.entries(files(dir))) {
      mkdirSync(path.join(dir, path.dirname(f)), { recursive: true });
      writeFileSync(path.join(dir, f), text);
    }
    const r = cli(['slurm-config', '--conf', path.join(dir, 'slurm.conf'), '--slurm-version', '24.11', '--json']);
    if (r.code !== 0) throw new Error(r.stderr);
    return JSON.parse(r.stdout) as { changes: { key: string; action: string; why: string }[]; warnings: string[] };
  };
  const caged = run(() => ({ 'slurm.conf': 'ClusterName=c\n', 'plugstack.conf': 'include plugstack.conf.d/*\n', 'plugstack.conf.d/pyxis.conf': PYXIS }));
  const tp = caged.changes.find((c) => c.key === 'TaskProlog');
  t.strictSame([tp?.action, tp?.why.replace(/\(\/.*\/plugstack\.conf\.d\//, '(DIR/')], ['optional', "optional here: pyxis is loaded (DIR/pyxis.conf:1), and a container step's TaskProlog must then be in its container (see the warning)"]);
  t.strictSame(caged.warnings.filter((w) => w.startsWith('pyxis is loaded')).length, 1, 'the warning, once');
  t.strictSame(caged.changes.filter((c) => c.key === 'Prolog' || c.key === 'Epilog').map((c) => c.action), ['add', 'add'], 'the Prolog and Epilog as without pyxis');
  const named = run((dir) => ({ 'slurm.conf': `ClusterName=c\nPlugStackConfig=${dir}/spank/stack.conf\nTaskProlog=/usr/libexec/gdrgate/taskprolog.sh\n`, 'spank/stack.conf': PYXIS }));
  t.strictSame([named.changes.find((c) => c.key === 'TaskProlog')?.action, named.warnings.filter((w) => /^pyxis is loaded \(\/.*\/spank\/stack\.conf:1\)/.test(w)).length], ['keep', 1], "PlugStackConfig's file; gdrgate's TaskProlog already there: kept, and warned");
  const site = run((dir) => ({ 'slurm.conf': `ClusterName=c\nTaskProlog=${dir}/site-task.sh\n`, 'site-task.sh': '#!/bin/sh\n', 'plugstack.conf': PYXIS }));
  const stp = site.changes.find((c) => c.key === 'TaskProlog');
  t.strictSame([stp?.action, /^not chained: pyxis is loaded /.test(stp?.why ?? '')], ['keep', true], "the site's own TaskProlog under pyxis: kept, never a chain wrapper that would end container steps");
  t.equal(/on Slurm 24\.11\.0-24\.11\.6 and 25\.05\.0-25\.05\.1, which run it through slurmstepd itself/.test(site.warnings.find((w) => w.startsWith('pyxis')) ?? ''), true, 'the releases that need slurmstepd\'s libraries in the image, named');
  const plain = run(() => ({ 'slurm.conf': 'ClusterName=c\n' }));
  t.strictSame([plain.changes.find((c) => c.key === 'TaskProlog')?.action, plain.warnings.filter((w) => w.startsWith('pyxis')).length], ['add', 0], 'no pyxis: added as before');
});

t.test('CRLF lines as spank.c reads them: the carriage return is part of the last word, so no pyxis is loaded', async (t) => {
  t.strictSame(parsePlugstack('required /a/spank_pyxis.so\r\noptional\r\ninclude /etc/p.d/*\r\n', '/p'), [
    { file: '/p', line: 1, kind: 'required', target: '/a/spank_pyxis.so\r' },
    { file: '/p', line: 3, kind: 'include', target: '/etc/p.d/*\r' },
  ]);
  const { host } = tree(t, { 'etc/slurm/plugstack.conf': 'required /usr/lib/slurm/spank_pyxis.so\r\n' });
  t.strictSame(await findPyxis(host, '/etc/slurm/plugstack.conf'), { at: null, problems: [] });
  const args = tree(t, { 'etc/slurm/plugstack.conf': 'required /usr/lib/slurm/spank_pyxis.so container_scope=job\r\n' });
  t.strictSame(await findPyxis(args.host, '/etc/slurm/plugstack.conf'), { at: { file: '/etc/slurm/plugstack.conf', line: 1 }, problems: [] }, 'a CR after an argument leaves the plugin word whole');
});

t.test('a relative PlugStackConfig is opened from slurmstepd\'s working directory: not guessed, said', async (t) => {
  const { host } = tree(t, { 'etc/slurm/plug.conf': PYXIS });
  t.strictSame(await findPyxis(host, 'plug.conf'), { at: null, problems: ['PlugStackConfig=plug.conf: a relative path, which slurmstepd opens from its working directory; not followed (give it whole)'] });
});
