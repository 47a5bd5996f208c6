// The built artifacts, opened as an admin or a packer would: the packaged gdrgate alone (its own Node, no startup
// snapshot made here), the .deb and the .rpm (same files, the bundled H200 capture inside each still showing its GPU),
// the npm tarball (no symlinked tree, docs/ shipped), the man pages rendered by man(1) and covering every command and
// config key, lintian silent and rpmlint showing only the signature (packaging/rpmlint.toml says why for the rest).
import t from 'tap';
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { REPO } from '../helpers/paths.js';
import { H200_GPU, artifacts, debPaths, missing, run, unpackDeb } from './_artifacts.js';

t.setTimeout(900_000);
const why = missing(['dpkg-deb', 'rpmbuild', 'rpm2cpio', 'cpio', 'man']);
if (why) {
  t.skip(`packaging tests skipped: ${why}`, () => {});
} else {
  const a = artifacts();
  const tmp = mkdtempSync(path.join(tmpdir(), 'gdrgate-artifacts-'));
  t.teardown(() => rmSync(tmp, { recursive: true, force: true }));
  const version = (JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { version: string }).version;
  // Nothing inherited: no PATH (so no Node), as slurmd starts a Prolog.
  const bare = { LANG: 'C.UTF-8' };

  const { root: debRoot, gdrgate } = unpackDeb(a.deb, tmp);
  const exe = (args: string[], env: NodeJS.ProcessEnv = bare) => run(gdrgate[0]!, [...gdrgate.slice(1), ...args], { env, cwd: tmp });

  t.test('the packaged gdrgate runs alone: its own Node, no Node on PATH, no node_modules beside it', async (t) => {
    t.equal(exe(['--version']).stdout, `gdrgate ${version} (Node ${process.versions.node}, OpenSSL ${process.versions.openssl}, V8 ${process.versions.v8}, linux-x64)\n`);
    const r = exe(['check', '--root', path.join(REPO, 'examples/h200-vm.tar.gz')]);
    t.equal(r.status, 0, r.stderr);
    t.match(r.stdout, H200_GPU);
    t.equal(exe(['no-such-command']).status, 2);
    t.equal(readFileSync(path.join(debRoot, 'usr/sbin/gdrgate'), 'utf8').split('\n').at(-2), 'exec /usr/lib/gdrgate/node /usr/lib/gdrgate/gdrgate.cjs "$@"', '/usr/sbin/gdrgate starts them');
    t.same(run('find', [debRoot, '-name', '*.blob']).stdout, '', 'no startup snapshot made on this machine is shipped');
  });

  t.test('the packaged agent unit runs the carried Node and makes the startup snapshot when it is needed', async (t) => {
    const unit = readFileSync(path.join(debRoot, 'usr/lib/systemd/system/gdrgate-agent.service'), 'utf8');
    t.match(unit, /^ExecStart=\/usr\/lib\/gdrgate\/node --max-semi-space-size=16 --expose-gc \/usr\/lib\/gdrgate\/gdrgate\.cjs agent --config \/etc\/gdrgate\/config\.json --dir \/run\/gdrgate-agent$/m);
    t.match(unit, /^ExecStartPre=-\/usr\/sbin\/gdrgate startup-snapshot --if-needed$/m);
    t.notMatch(unit, /node_modules|\/usr\/bin\/node/);
  });

  // The wrappers read /etc/gdrgate/NAME.conf, then /usr/libexec/gdrgate/NAME.conf (NAME: the script's name less .sh):
  // a settings file the installed snippet or a wrapper's header names otherwise (the checkout's gdrgate-NAME.conf)
  // would be written by an admin and never read (FAIL=1 in it: a TaskProlog that still only warns).
  t.test('the installed snippet and wrappers name only the settings files the installed wrappers read', async (t) => {
    const texts = ['usr/share/doc/gdrgate/slurm.conf.snippet', ...['prolog', 'epilog', 'taskprolog'].map((w) => `usr/libexec/gdrgate/${w}.sh`)].map((f) => readFileSync(path.join(debRoot, f), 'utf8'));
    const named = texts.flatMap((text) => [...text.matchAll(/[\w/.-]*(?:prolog|epilog|health)\.conf\b/g)].map((m) => m[0]));
    t.same(named, ['/etc/gdrgate/prolog.conf', '/etc/gdrgate/taskprolog.conf', '/etc/gdrgate/prolog.conf', '/usr/libexec/gdrgate/prolog.conf', '/etc/gdrgate/epilog.conf', '/usr/libexec/gdrgate/epilog.conf']);
    t.same(texts[0]!.match(/examples\/\S*/g), null, 'the snippet names no file of the checkout');
  });

  t.test('the committed snapshot file replays as the capture tree it was made from', async (t) => {
    const json = (root: string) => (JSON.parse(exe(['check', '--json', '--root', root]).stdout) as { findings: unknown[] }).findings;
    t.same(json(path.join(REPO, 'examples/h200-vm.tar.gz')), json(path.join(REPO, 'examples/h200-vm')));
  });

  t.test('.deb and .rpm install the same files; rpm owns only its own directories', async (t) => {
    const deb = debPaths(a.deb);
    const q = run('rpm', ['-qp', '--qf', '[%{FILEMODES:perms} %{FILENAMES}\n]', a.rpm]).stdout.trim().split('\n');
    const rpmFiles = q.filter((l) => !l.startsWith('d')).map((l) => l.split(' ')[1]!);
    const rpmDirs = q.filter((l) => l.startsWith('d')).map((l) => l.split(' ')[1]!);
    // The lintian overrides are the .deb's alone.
    t.same(rpmFiles.sort(), deb.files.filter((f) => f !== '/usr/share/lintian/overrides/gdrgate').sort());
    t.same(rpmDirs.filter((d) => !deb.dirs.includes(d)), []);
    t.ok(rpmDirs.every((d) => /\/gdrgate(\/|$)/.test(d)), 'no system directory owned');
    t.same(run('rpm', ['-qcp', a.rpm]).stdout.trim().split('\n'), ['/etc/gdrgate/config.json', '/etc/logrotate.d/gdrgate']);
    t.same(run('dpkg-deb', ['-f', a.deb, 'Package']).stdout.trim(), 'gdrgate');
    t.equal(run('dpkg-deb', ['-I', a.deb, 'conffiles']).stdout, '/etc/gdrgate/config.json\n/etc/logrotate.d/gdrgate\n');
  });

  // Each artifact unpacked, its own copy of the capture read by its own gdrgate.
  const unpacked: Record<string, (dir: string) => string[]> = {
    deb: (dir) => (
      run('dpkg-deb', ['-x', a.deb, dir]),
      [path.join(dir, 'usr/lib/gdrgate/node'), path.join(dir, 'usr/lib/gdrgate/gdrgate.cjs'), 'check', '--root', path.join(dir, 'usr/share/gdrgate/examples/h200-vm.tar.gz')]
    ),
    rpm: (dir) => (
      run('/bin/sh', ['-c', `rpm2cpio "${a.rpm}" | cpio -idm --quiet`], { cwd: dir }),
      [path.join(dir, 'usr/lib/gdrgate/node'), path.join(dir, 'usr/lib/gdrgate/gdrgate.cjs'), 'check', '--root', path.join(dir, 'usr/share/gdrgate/examples/h200-vm.tar.gz')]
    ),
    npm: (dir) => {
      const packed = run('npm', ['pack', '--ignore-scripts', '--pack-destination', dir], { cwd: REPO }).stdout.trim().split('\n').pop()!;
      run('tar', ['xzf', path.join(dir, packed), '-C', dir]);
      // The developer's package runs on the project's own dependencies (what npm install would fetch).
      symlinkSync(path.join(REPO, 'node_modules'), path.join(dir, 'package/node_modules'));
      return [process.execPath, path.join(dir, 'package/dist/cli.js'), 'check', '--root', path.join(dir, 'package/examples/h200-vm.tar.gz')];
    },
  };
  for (const [kind, unpack] of Object.entries(unpacked))
    t.test(`${kind}: the example capture inside shows the H200's GPU at 0000:00:06.0`, async (t) => {
      const dir = mkdtempSync(path.join(tmp, `${kind}-`));
      const [cmd, ...args] = unpack(dir);
      const r = run(cmd!, args, { env: bare, cwd: dir });
      t.equal(r.status, 0, r.stderr);
      t.match(r.stdout, H200_GPU);
    });

  t.test('npm tarball: docs/ and the snapshot file, no symlinked tree, no packages', async (t) => {
    const list = run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: REPO });
    const files = (JSON.parse(list.stdout) as { files: { path: string }[] }[])[0]!.files.map((f) => f.path);
    t.ok(files.includes('docs/incident.md'));
    t.ok(files.includes('examples/h200-vm.tar.gz'));
    t.same(files.filter((f) => f.startsWith('examples/h200-vm/') || f.startsWith('dist/package/')), []);
    const pkg = JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    // Only what the bundles load from node_modules at run time (src/host/exec.ts's execa; ajv's runtime helpers).
    t.same(Object.keys(pkg.dependencies).sort(), ['ajv', 'execa']);
  });

  t.test('man -l renders both pages: every command, the exit codes, every config key', async (t) => {
    const dir = mkdtempSync(path.join(tmp, 'man-'));
    run('dpkg-deb', ['-x', a.deb, dir]);
    const page = (f: string) => run('man', ['-l', '-P', 'cat', path.join(dir, f)], { env: { ...bare, PATH: '/usr/bin:/bin', MANWIDTH: '100' } });
    const eight = page('usr/share/man/man8/gdrgate.8.gz');
    t.equal(eight.status, 0, eight.stderr);
    t.equal(eight.stderr, '');
    const help = exe(['--help']).stdout;
    const commands = [...help.matchAll(/^ {2}gdrgate (\S+)/gm)].map((m) => m[1]!);
    t.ok(commands.length >= 10, `${commands.length} commands in --help`);
    for (const c of commands) t.match(eight.stdout, new RegExp(`^ {3}gdrgate ${c}\\b`, 'm'), `gdrgate(8) has ${c}`);
    t.match(eight.stdout, /EXIT STATUS[\s\S]*\b3\b[\s\S]*FILES[\s\S]*\/usr\/libexec\/gdrgate\/prolog\.sh/);
    const five = page('usr/share/man/man5/gdrgate.json.5.gz');
    t.equal(five.status, 0, five.stderr);
    const schema = JSON.parse(readFileSync(path.join(REPO, 'schemas/config.schema.json'), 'utf8')) as { properties: Record<string, unknown> };
    for (const k of Object.keys(schema.properties).filter((k) => k !== '$schema')) t.match(five.stdout, new RegExp(`^ {7}${k.replace('$', '\\$')}\\b`, 'm'), `gdrgate.json(5) has ${k}`);
    t.match(five.stdout, /BASELINE[\s\S]*classes/);
  });

  // lintian: nothing (its overrides for Node.js's binary ship in the .deb, each with its reason). rpmlint, with
  // packaging/rpmlint.toml (its settings and filters, each with its reason): only no-signature, the publisher's step.
  t.test('lintian and rpmlint: nothing but the signature; any new tag fails', { skip: missing(['lintian', 'rpmlint']) ?? false }, async (t) => {
    const lintian = run('lintian', ['--tag-display-limit', '0', a.deb], { timeoutMs: 600_000 });
    const rpmlint = run('rpmlint', ['-c', 'packaging/rpmlint.toml', a.rpm], { timeoutMs: 300_000 });
    const tags = (out: string) => [...out.matchAll(/^(?:[EW]|gdrgate\.\S+: [EW]): (?:gdrgate(?: \w+)?: )?(\S+)/gm)].map((m) => m[1]!);
    t.equal(lintian.status, 0, `lintian ran: ${lintian.stderr}`);
    t.match(rpmlint.stdout, /^ 1 packages and 0 specfiles checked;/m, 'rpmlint ran');
    t.match(rpmlint.stdout, /^ {4}packaging\/rpmlint\.toml$/m, 'with our settings');
    t.same(tags(lintian.stdout), [], lintian.stdout);
    t.same(tags(rpmlint.stdout), ['no-signature'], rpmlint.stdout);
  });
}
