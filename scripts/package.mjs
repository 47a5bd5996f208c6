#!/usr/bin/env node
// `npm run package` (after npm run build): the single executable, then the .deb (dpkg-deb) and the .rpm (rpmbuild)
// from one file list, so both install the same files (DESIGN §11): /usr/sbin/gdrgate, the Slurm wrappers in
// /usr/libexec/gdrgate, /etc/gdrgate/config.json (a preserved config file), the agent's unit, tmpfiles.d for
// /run/gdrgate, /var/lib/gdrgate, logrotate, the slurm.conf snippet, schemas and the example capture under
// /usr/share/doc/gdrgate, and the man pages made from the CLI's own definitions (scripts/package-man.mjs).
// Usage: node scripts/package.mjs [--release N] [--out DIR] [--exe FILE] [--no-rpm]   Writes dist/package/ by default.
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import { repoRoot } from './package-lib.mjs';
import { gdrgate8, gdrgateJson5 } from './package-man.mjs';

const { values: opt } = parseArgs({
  options: { release: { type: 'string', default: '1' }, out: { type: 'string', default: 'dist/package' }, exe: { type: 'string' }, 'no-rpm': { type: 'boolean', default: false } },
});
const out = path.resolve(repoRoot, opt.out);
// --exe FILE: package that executable (already built) instead of building one into the output directory.
const exe = opt.exe ? path.resolve(opt.exe) : path.join(out, 'gdrgate');
const { version, description } = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8'));
const release = opt.release;
const read = (f) => readFileSync(path.join(repoRoot, f), 'utf8');

function must(cmd, args, env = {}) {
  const r = spawnSync(cmd, args, { cwd: repoRoot, encoding: 'utf8', env: { ...process.env, ...env }, timeout: 600_000, maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status ?? r.signal}\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

/** Sets `NAME=value` where the file has a `NAME=` line; a wrapper that lost one fails the build, never ships unrewritten. */
function setVars(file, vars) {
  // Said at the top, under the shebang, for the admin who opens the installed copy.
  let text = read(file).replace(/\n/, `\n# Installed by the gdrgate package: ${Object.keys(vars).join(', ')} set for /usr/sbin/gdrgate, which carries its own Node and startup snapshot.\n`);
  for (const [k, v] of Object.entries(vars)) {
    const re = new RegExp(`^${k}=.*$`, 'm');
    if (!re.test(text)) throw new Error(`${file}: no ${k}= line to point at the installed gdrgate`);
    text = text.replace(re, `${k}=${v}`);
  }
  return text;
}

/** Replaces every `from`; one that is no longer there fails the build (the source changed: look again). */
function rewrite(file, pairs) {
  let text = read(file);
  for (const [from, to] of pairs) {
    if (!text.includes(from)) throw new Error(`${file}: "${from}" not found`);
    text = text.replaceAll(from, to);
  }
  return text;
}

// The Slurm wrappers run the executable: "$NODE" "$CLI" <mode> is `/usr/sbin/gdrgate /usr/sbin/gdrgate <mode>`, which
// the executable reads as `gdrgate <mode>`. No BLOB: the executable carries its own startup snapshot.
const SBIN = '/usr/sbin/gdrgate';
const wrapperVars = { NODE: SBIN, CLI: SBIN };
const snippetPaths = ['prolog', 'epilog', 'taskprolog', 'health'].map((w) => [`/etc/slurm/gdrgate-${w}.sh`, `/usr/libexec/gdrgate/${w}.sh`]);
const unit = rewrite('examples/systemd/gdrgate-agent.service', [
  // No V8 flags (NODE_OPTIONS=--max-semi-space-size=2 included): the executable's startup snapshot then refuses to load
  // (exit 14, "built with ... different V8 configurations"); MemoryMax still bounds the agent.
  ['# A young generation of 2 MiB semi-spaces: ~70 MiB resident instead of ~115 MiB, the same answer time (README, Agent).\n', '# /usr/sbin/gdrgate takes no V8 flags: its startup snapshot loads only with the flags it was built with.\n'],
  ['ExecStart=/usr/bin/node --max-semi-space-size=2 /usr/lib/node_modules/gdrgate/dist/cli.js agent', `ExecStart=${SBIN} agent`],
  ['Install as /etc/systemd/system/gdrgate-agent.service.', 'Enable with: systemctl enable --now gdrgate-agent'],
  ['(slurm/prolog.sh, AGENT=/run/gdrgate-agent)', '(/usr/libexec/gdrgate/prolog.sh, AGENT=/run/gdrgate-agent)'],
]);
const config = read('packaging/config.json');
const MAINTAINER = process.env.GDRGATE_MAINTAINER ?? 'gdrgate maintainers <gdrgate@example.org>';
// Description lines for both packages (Debian and rpmlint want them under 80 columns).
const about = [
  ...wrap(`${description}.`),
  ...wrap('One executable with its own Node.js: no Node, npm packages or network needed on the node.'),
];
function wrap(text) {
  const lines = [''];
  for (const w of text.split(' ')) lines[lines.length - 1].length + w.length < 76 ? (lines[lines.length - 1] += `${lines[lines.length - 1] ? ' ' : ''}${w}`) : lines.push(w);
  return lines;
}
// Dated by the last commit, so a rebuild of the same commit writes the same changelog.
const date = new Date(Number(must('git', ['log', '-1', '--format=%ct']).trim() || 0) * 1000);
const changelog = `gdrgate (${version}-${release}) unstable; urgency=medium\n\n  * gdrgate ${version}.\n\n -- ${MAINTAINER}  ${date.toUTCString().replace('GMT', '+0000')}\n`;

/** The file list both packages install: dest, mode, contents (a file to copy or a string), what it is (for FILES in gdrgate(8)). */
function fileList() {
  const files = [
    { dest: SBIN, mode: 0o755, from: exe, about: 'the gdrgate executable: Node.js and gdrgate in one file, every command' },
    { dest: '/etc/gdrgate/config.json', mode: 0o644, text: config, conffile: true, about: 'the configuration (gdrgate.json(5)); kept on upgrade and removal, removed on purge' },
    { dest: '/etc/logrotate.d/gdrgate', mode: 0o644, text: read('packaging/gdrgate.logrotate'), conffile: true, about: 'rotation of /var/log/gdrgate/*.log' },
    { dest: '/usr/libexec/gdrgate/prolog.sh', mode: 0o755, text: setVars('slurm/prolog.sh', { ...wrapperVars, BLOB: '' }), about: 'Slurm Prolog wrapper (settings: /usr/libexec/gdrgate/prolog.conf)' },
    // The same script: it runs the health mode when called by this name.
    { dest: '/usr/libexec/gdrgate/health.sh', link: 'prolog.sh', about: 'Slurm HealthCheckProgram wrapper (settings: /usr/libexec/gdrgate/health.conf)' },
    ...['epilog', 'taskprolog'].map((w) => ({ dest: `/usr/libexec/gdrgate/${w}.sh`, mode: 0o755, text: setVars(`slurm/${w}.sh`, wrapperVars), about: `Slurm ${w === 'epilog' ? 'Epilog' : 'TaskProlog'} wrapper (settings: /usr/libexec/gdrgate/${w}.conf)` })),
    { dest: '/usr/lib/systemd/system/gdrgate-agent.service', mode: 0o644, text: unit, about: 'the resident agent the Prolog asks first (systemctl enable --now gdrgate-agent)' },
    { dest: '/usr/lib/tmpfiles.d/gdrgate.conf', mode: 0o644, text: read('packaging/gdrgate.tmpfiles'), about: 'creates /run/gdrgate, the per-job state directory, at boot' },
    { dest: '/usr/share/doc/gdrgate/slurm.conf.snippet', mode: 0o644, text: rewrite('slurm/slurm.conf.snippet', snippetPaths), about: 'the lines to add to slurm.conf' },
    ...readdirSync(path.join(repoRoot, 'schemas')).sort().map((f) => ({ dest: `/usr/share/doc/gdrgate/schemas/${f}`, mode: 0o644, from: path.join(repoRoot, 'schemas', f), about: 'JSON Schema of a gdrgate file or report' })),
    { dest: '/usr/share/gdrgate/examples/h200-vm.tar.gz', mode: 0o644, from: path.join(repoRoot, 'examples/h200-vm.tar.gz'), about: 'a real H200 node captured by gdrgate snapshot: gdrgate check --root FILE' },
    { dest: '/usr/share/doc/gdrgate/copyright', mode: 0o644, text: read('packaging/copyright'), about: 'licenses' },
    { dest: '/usr/share/doc/gdrgate/changelog.Debian.gz', mode: 0o644, text: gzipSync(changelog, { level: 9 }), about: 'changes' },
  ];
  const dirs = [
    { dest: '/var/lib/gdrgate', mode: 0o755, about: 'the epilog sample spool (config spool)' },
    { dest: '/var/log/gdrgate', mode: 0o755, about: 'the run log (config logFile)' },
  ];
  return { files, dirs };
}

/** Writes the tree under `root`; returns the file list with the man pages added. */
async function stage(root) {
  rmSync(root, { recursive: true, force: true });
  const { files, dirs } = fileList();
  const man = [
    { dest: '/usr/share/man/man8/gdrgate.8.gz', mode: 0o644, about: 'this page' },
    { dest: '/usr/share/man/man5/gdrgate.json.5.gz', mode: 0o644, about: 'the configuration and baseline files' },
  ];
  const all = [...files, ...man];
  man[0].text = gzipSync(await gdrgate8({ exe: [exe], version, files: [...all, ...dirs] }), { level: 9 });
  man[1].text = gzipSync(gdrgateJson5({ version, example: config }), { level: 9 });
  for (const f of all) {
    const to = path.join(root, f.dest);
    mkdirSync(path.dirname(to), { recursive: true, mode: 0o755 });
    if (f.link) {
      symlinkSync(f.link, to);
      continue;
    }
    if (f.from) copyFileSync(f.from, to);
    else writeFileSync(to, f.text);
    chmodSync(to, f.mode);
  }
  for (const d of dirs) {
    mkdirSync(path.join(root, d.dest), { recursive: true });
    chmodSync(path.join(root, d.dest), d.mode);
  }
  return { files: all, dirs };
}

// Maintainer scripts, the same steps for both: /run/gdrgate now (not only at next boot), systemd told of the unit.
const POSTINST = 'command -v systemd-tmpfiles >/dev/null && systemd-tmpfiles --create gdrgate.conf || true\n[ -d /run/systemd/system ] && systemctl daemon-reload || true\n';
// Purge: what gdrgate itself wrote (run log, sample spool, per-job state); an admin's own files in /etc/gdrgate stay.
const PURGE = 'rm -rf /var/lib/gdrgate /var/log/gdrgate /run/gdrgate\n';

function deb(root, list) {
  const arch = must('dpkg', ['--print-architecture']).trim();
  const DEB = path.join(root, 'DEBIAN');
  mkdirSync(DEB, { mode: 0o755 });
  const kib = Math.ceil(list.files.reduce((n, f) => n + lstatSync(path.join(root, f.dest)).size, 0) / 1024);
  writeFileSync(
    path.join(DEB, 'control'),
    [
      'Package: gdrgate',
      `Version: ${version}-${release}`,
      `Architecture: ${arch}`,
      `Maintainer: ${MAINTAINER}`,
      `Installed-Size: ${kib}`,
      'Depends: libc6 (>= 2.28), libstdc++6 (>= 10), libgcc-s1',
      'Recommends: slurmd, logrotate',
      'Section: admin',
      'Priority: optional',
      'Homepage: https://www.npmjs.com/package/gdrgate',
      `Description: ${description.split(':')[0]}`,
      ...about.map((l) => ` ${l}`),
      '',
    ].join('\n'),
  );
  writeFileSync(path.join(DEB, 'conffiles'), list.files.filter((f) => f.conffile).map((f) => `${f.dest}\n`).join(''));
  writeFileSync(path.join(DEB, 'md5sums'), list.files.filter((f) => !f.link).map((f) => `${createHash('md5').update(readFileSync(path.join(root, f.dest))).digest('hex')}  ${f.dest.slice(1)}\n`).join(''));
  writeFileSync(path.join(DEB, 'postinst'), `#!/bin/sh\nset -e\nif [ "$1" = configure ]; then\n${POSTINST}fi\n`);
  writeFileSync(path.join(DEB, 'postrm'), `#!/bin/sh\nset -e\nif [ "$1" = purge ]; then\n${PURGE}fi\n[ -d /run/systemd/system ] && systemctl daemon-reload || true\n`);
  for (const f of ['postinst', 'postrm']) chmodSync(path.join(DEB, f), 0o755);
  for (const f of ['control', 'conffiles', 'md5sums']) chmodSync(path.join(DEB, f), 0o644);
  const file = path.join(out, `gdrgate_${version}-${release}_${arch}.deb`);
  must('dpkg-deb', ['--build', '--root-owner-group', '-Zgzip', root, file]);
  rmSync(DEB, { recursive: true });
  return file;
}

function rpm(root, list) {
  const top = path.join(out, 'rpmbuild');
  rmSync(top, { recursive: true, force: true });
  const attr = (m) => `%attr(${m.toString(8).padStart(4, '0')},root,root)`;
  const spec = [
    'Name: gdrgate',
    `Version: ${version}`,
    `Release: ${release}`,
    `Summary: ${description.split(':')[0]}`,
    'License: Apache-2.0',
    'Group: System Environment/Base',
    `Packager: ${MAINTAINER}`,
    'Requires: logrotate',
    'URL: https://www.npmjs.com/package/gdrgate',
    'Recommends: slurm-slurmd',
    // The executable is Node.js with gdrgate inside: stripping it would drop what makes it gdrgate.
    '%global debug_package %{nil}',
    '%global __os_install_post %{nil}',
    '%global _build_id_links none',
    '%define _binary_payload w6.gzdio',
    '%description',
    ...about,
    '%install',
    `cp -a ${root}/. %{buildroot}/`,
    '%post',
    POSTINST.trimEnd(),
    '%postun',
    `if [ "$1" = 0 ]; then\n${PURGE}fi`,
    '%files',
    ...list.dirs.map((d) => `%dir ${attr(d.mode)} ${d.dest}`),
    ...[...new Set(list.files.map((f) => path.dirname(f.dest)))].filter((d) => /\/gdrgate(\/|$)/.test(d)).sort().map((d) => `%dir ${attr(0o755)} ${d}`),
    ...list.files.map((f) => {
      if (f.link) return f.dest;
      const doc = f.dest.startsWith('/usr/share/doc/') && !f.dest.includes('/schemas/') ? '%doc ' : '';
      return `${f.conffile ? '%config(noreplace) ' : ''}${doc}${attr(f.mode)} ${f.dest}`;
    }),
    '%changelog',
    `* ${date.toUTCString().replace(/^(\w+), (\d+) (\w+) (\d+).*/, '$1 $3 $2 $4')} ${MAINTAINER} - ${version}-${release}`,
    `- gdrgate ${version}.`,
    '',
  ].join('\n');
  mkdirSync(path.join(top, 'SPECS'), { recursive: true });
  writeFileSync(path.join(top, 'SPECS/gdrgate.spec'), spec);
  must('rpmbuild', ['-bb', '--define', `_topdir ${top}`, '--target', must('uname', ['-m']).trim(), path.join(top, 'SPECS/gdrgate.spec')]);
  const built = path.join(top, 'RPMS', must('uname', ['-m']).trim());
  const name = readdirSync(built)[0];
  copyFileSync(path.join(built, name), path.join(out, name));
  rmSync(top, { recursive: true, force: true });
  return path.join(out, name);
}

for (const f of ['dist/cli.js', 'dist/runner/policy.js', 'dist/warm-up-tree.mjs'])
  if (!existsSync(path.join(repoRoot, f))) throw new Error(`${f} is missing: npm run build first`);
if (!opt.exe) must(process.execPath, [path.join(repoRoot, 'scripts/package-sea.mjs'), '--out', exe]);
const root = path.join(out, 'root');
const list = await stage(root);
mkdirSync(out, { recursive: true });
const made = [exe, deb(root, list)];
if (!opt['no-rpm']) made.push(rpm(root, list));
rmSync(root, { recursive: true, force: true });
for (const f of made) console.log(`${path.relative(repoRoot, f)} ${(statSync(f).size / 2 ** 20).toFixed(1)} MiB`);
