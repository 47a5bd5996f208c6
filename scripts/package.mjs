#!/usr/bin/env node
// `npm run package` (after npm run build): for each architecture (x86-64 and arm64, the same sources and this one
// script) a .deb (dpkg-deb) and an .rpm (rpmbuild) from one file list, so both install the same files (DESIGN §11):
// the pinned Node (/usr/lib/gdrgate/node, scripts/runtime.mjs) and the one-file program beside it
// (/usr/lib/gdrgate/gdrgate.cjs, scripts/shapes.mjs), /usr/sbin/gdrgate starting them, the Slurm wrappers in
// /usr/libexec/gdrgate, /etc/gdrgate/config.json (a preserved config file), the agent's unit, tmpfiles.d for
// /run/gdrgate, /var/lib/gdrgate, logrotate, the slurm.conf snippet, schemas and the example capture, and the man
// pages made from the CLI's own definitions (scripts/package-man.mjs). No startup snapshot is shipped: the package
// makes one on the node at install (`gdrgate startup-snapshot`), where its Node and CPU will load it.
// The architectures are built at once (two cores: each one's gzip is one process). The output directory gets
// inputs.sha256, the hash of everything the packages are made from (scripts/package-lib.mjs); --if-changed builds
// nothing when it still matches, so the packaging tests reuse one build per set of sources.
// Usage: node scripts/package.mjs [--arch x64|arm64|all] [--release N] [--out DIR] [--no-rpm] [--if-changed] (default dist/package/)
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import { inputsKey, repoRoot } from './package-lib.mjs';
import { ARCHES, nodeBinary, stripTool } from './runtime.mjs';
import { gdrgate8, gdrgateJson5 } from './package-man.mjs';
import { BLOB, LINTIAN_OVERRIDES, POSTINST, PRERM_REMOVE, PURGE } from './package-maint.mjs';

const { values: opt } = parseArgs({ options: { arch: { type: 'string', default: 'all' }, release: { type: 'string', default: '1' }, out: { type: 'string', default: 'dist/package' }, 'no-rpm': { type: 'boolean', default: false }, 'if-changed': { type: 'boolean', default: false } } });
// Modes the package's, not the builder's umask (002: a group-writable /var in the .deb; 027: DEBIAN 0750, refused).
process.umask(0o022);
const out = path.resolve(repoRoot, opt.out);
const arches = opt.arch === 'all' ? Object.keys(ARCHES) : [opt.arch];
for (const a of arches) if (!(a in ARCHES)) throw new Error(`--arch: one of ${Object.keys(ARCHES).join(', ')}, or all`);
const { version, description } = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8'));
const release = opt.release;
const read = (f) => readFileSync(path.join(repoRoot, f), 'utf8');

function must(cmd, args, env = {}) {
  const r = spawnSync(cmd, args, { cwd: repoRoot, encoding: 'utf8', env: { ...process.env, ...env }, timeout: 600_000, maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status ?? r.signal}\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

/** must, without blocking: the other architecture's build goes on meanwhile. */
function mustAsync(cmd, args) {
  return new Promise((resolve, reject) => {
    const c = spawn(cmd, args, { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'], timeout: 600_000 });
    let text = '';
    c.stdout.on('data', (d) => (text += d));
    c.stderr.on('data', (d) => (text += d));
    c.on('error', reject);
    c.on('close', (code, signal) => (code === 0 ? resolve(text) : reject(new Error(`${cmd} ${args.join(' ')} exited ${code ?? signal}\n${text}`))));
  });
}

/** Sets `NAME=value` where the file has a `NAME=` line; a wrapper that lost one fails the build, never ships unrewritten. */
function setVars(file, vars) {
  // Said at the top, under the shebang, for the admin who opens the installed copy.
  let text = read(file).replace(/\n/, `\n# Installed by the gdrgate package: ${Object.keys(vars).join(', ')} set for the Node and program it carries in /usr/lib/gdrgate.\n`);
  for (const [k, v] of Object.entries(vars)) {
    const re = new RegExp(`^${k}=.*$`, 'm');
    if (!re.test(text)) throw new Error(`${file}: no ${k}= line to point at the installed gdrgate`);
    text = text.replace(re, `${k}=${v}`);
  }
  return confNames(text);
}
// The checkout's settings files named as the installed wrappers read them (/etc/gdrgate/prolog.conf, then beside it).
const confNames = (text) => text.replace(/(?:\/etc\/(gdrgate|slurm)\/)?gdrgate-(prolog|epilog|taskprolog|health)\.conf/g, (_, dir, w) => `${dir === 'slurm' ? '/usr/libexec/gdrgate' : '/etc/gdrgate'}/${w}.conf`);

/** Replaces every `from`; one that is no longer there fails the build (the source changed: look again). */
function rewrite(file, pairs) {
  return pairs.reduce((text, [from, to]) => {
    if (!text.includes(from)) throw new Error(`${file}: "${from}" not found`);
    return text.replaceAll(from, to);
  }, read(file));
}

// The Slurm wrappers run the carried Node on the program, from the startup snapshot the package makes on the node.
const [LIB, SBIN] = ['/usr/lib/gdrgate', '/usr/sbin/gdrgate'];
const WORKERS = { 'fleet-read-worker.cjs': "the fleet report's reader thread", 'config-read-worker.cjs': "the agent's PCI config read-ahead thread" }; // beside it
const wrapperVars = { NODE: `${LIB}/node`, CLI: `${LIB}/gdrgate.cjs` };
const snippetPaths = ['prolog', 'epilog', 'taskprolog', 'health'].map((w) => [`/etc/slurm/gdrgate-${w}.sh`, `/usr/libexec/gdrgate/${w}.sh`]);
const unit = rewrite('examples/systemd/gdrgate-agent.service', [
  ['ExecStart=/usr/bin/node --max-semi-space-size=16 --expose-gc /usr/lib/node_modules/gdrgate/dist/gdrgate.cjs agent', `ExecStart=${LIB}/node --max-semi-space-size=16 --expose-gc ${LIB}/gdrgate.cjs agent`],
  ['ExecStartPre=-/usr/bin/node /usr/lib/node_modules/gdrgate/dist/gdrgate.cjs startup-snapshot --if-needed --out /usr/lib/node_modules/gdrgate/dist/gate.blob', `ExecStartPre=-${SBIN} startup-snapshot --if-needed`],
  ['Install as /etc/systemd/system/gdrgate-agent.service.', 'Enable with: systemctl enable --now gdrgate-agent'],
  ['(slurm/prolog.sh, AGENT=/run/gdrgate-agent)', '(/usr/libexec/gdrgate/prolog.sh, AGENT=/run/gdrgate-agent)'],
  ['the view slurm/taskprolog.sh read', 'the view /usr/libexec/gdrgate/taskprolog.sh read'],
  // (The package's blob lies in /var/lib/gdrgate, which ProtectSystem=full leaves writable: no ReadWritePaths under /usr.)
  ['the startup snapshot beside the program, under /usr, which ProtectSystem=full makes read-only but for this.\nProtectSystem=full\nReadWritePaths=/usr/lib/node_modules/gdrgate/dist\n', 'the startup snapshot, in /var/lib/gdrgate.\nProtectSystem=full\n'],
]);
const config = read('packaging/config.json');
const MAINTAINER = process.env.GDRGATE_MAINTAINER ?? 'gdrgate maintainers <gdrgate@example.org>';
// Description lines for both packages (Debian and rpmlint want them under 80 columns).
const about = [...wrap(`${description}.`), ...wrap('It carries its own Node.js: no Node, npm packages or network needed on the node.')];
function wrap(text) {
  const lines = [''];
  for (const w of text.split(' ')) lines[lines.length - 1].length + w.length < 76 ? (lines[lines.length - 1] += `${lines[lines.length - 1] ? ' ' : ''}${w}`) : lines.push(w);
  return lines;
}
// Dated by the last commit, so a rebuild of the same commit writes the same changelog.
const date = new Date(Number(must('git', ['log', '-1', '--format=%ct']).trim() || 0) * 1000);
const changelog = `gdrgate (${version}-${release}) unstable; urgency=medium\n\n  * gdrgate ${version}.\n\n -- ${MAINTAINER}  ${date.toUTCString().replace('GMT', '+0000')}\n`;
const SH_EXE = `#!/bin/sh\n# gdrgate: the program (${LIB}/gdrgate.cjs) on the Node.js this package carries (${LIB}/node).\nexec ${LIB}/node ${LIB}/gdrgate.cjs "$@"\n`;

/** The file list both packages install: dest, mode, contents (a file to copy or a string), what it is (for FILES in gdrgate(8)). */
function fileList(node) {
  const files = [
    { dest: SBIN, mode: 0o755, text: SH_EXE, about: 'starts gdrgate (every command) on the Node.js the package carries' },
    { dest: `${LIB}/node`, mode: 0o755, from: node.file, about: `Node.js ${node.version}, the runtime gdrgate carries (Node's own release build)` },
    // Run only by /usr/sbin/gdrgate with the Node beside it: scripts/build.mjs leaves it no #! line (rpmlint: non-executable-script).
    { dest: `${LIB}/gdrgate.cjs`, mode: 0o644, from: path.join(repoRoot, 'dist/gdrgate.cjs'), about: 'gdrgate: every command and dependency in one file' },
    ...Object.entries(WORKERS).map(([w, about]) => ({ dest: `${LIB}/${w}`, mode: 0o644, from: path.join(repoRoot, 'dist', w), about })),
    { dest: '/etc/gdrgate/config.json', mode: 0o644, text: config, conffile: true, about: 'the configuration (gdrgate.json(5)); kept on upgrade and removal, removed on purge' },
    { dest: '/etc/logrotate.d/gdrgate', mode: 0o644, text: read('packaging/gdrgate.logrotate'), conffile: true, about: 'rotation of /var/log/gdrgate/*.log' },
    { dest: '/usr/libexec/gdrgate/prolog.sh', mode: 0o755, text: setVars('slurm/prolog.sh', { ...wrapperVars, BLOB }), about: 'Slurm Prolog wrapper (settings: /etc/gdrgate/prolog.conf, then /usr/libexec/gdrgate/prolog.conf)' },
    // The same script: it runs the health mode when called by this name.
    { dest: '/usr/libexec/gdrgate/health.sh', link: 'prolog.sh', about: 'Slurm HealthCheckProgram wrapper (settings: /etc/gdrgate/health.conf, then /usr/libexec/gdrgate/health.conf)' },
    ...['epilog', 'taskprolog'].map((w) => ({ dest: `/usr/libexec/gdrgate/${w}.sh`, mode: 0o755, text: setVars(`slurm/${w}.sh`, w === 'taskprolog' ? { ...wrapperVars, BLOB } : wrapperVars), about: `Slurm ${w === 'epilog' ? 'Epilog' : 'TaskProlog'} wrapper (settings: /etc/gdrgate/${w}.conf, then /usr/libexec/gdrgate/${w}.conf)` })),
    { dest: '/usr/lib/systemd/system/gdrgate-agent.service', mode: 0o644, text: unit, about: 'the resident agent the Prolog asks first (systemctl enable --now gdrgate-agent)' },
    { dest: '/usr/lib/tmpfiles.d/gdrgate.conf', mode: 0o644, text: read('packaging/gdrgate.tmpfiles'), about: 'creates /run/gdrgate, the per-job state directory, at boot' },
    { dest: '/usr/share/doc/gdrgate/slurm.conf.snippet', mode: 0o644, text: confNames(rewrite('slurm/slurm.conf.snippet', [...snippetPaths, ['(examples/systemd)', '(systemctl enable --now gdrgate-agent)']])), about: 'the lines to add to slurm.conf' },
    ...readdirSync(path.join(repoRoot, 'schemas')).sort().map((f) => ({ dest: `/usr/share/doc/gdrgate/schemas/${f}`, mode: 0o644, from: path.join(repoRoot, 'schemas', f), about: 'JSON Schema of a gdrgate file or report' })),
    { dest: '/usr/share/gdrgate/examples/h200-vm.tar.gz', mode: 0o644, from: path.join(repoRoot, 'examples/h200-vm.tar.gz'), about: 'a real H200 node captured by gdrgate snapshot: gdrgate check --root FILE' },
    { dest: '/usr/share/doc/gdrgate/copyright', mode: 0o644, text: read('packaging/copyright'), about: 'licenses' },
    { dest: '/usr/share/doc/gdrgate/changelog.Debian.gz', mode: 0o644, text: gzipSync(changelog, { level: 9 }), about: 'changes' },
  ];
  const dirs = [
    { dest: '/var/lib/gdrgate', mode: 0o755, about: 'the epilog sample spool (config spool), the drain reason gdrgate last wrote (drain-reason.json) and the startup snapshot made on this node (gate.blob)' },
    { dest: '/var/log/gdrgate', mode: 0o755, about: 'the run log (config logFile)' },
  ];
  return { files, dirs };
}

const pages = {}; // gdrgate(8) by the carried Node's version (named in FILES), whichever Node runs this script
/** Writes the tree under `root`; returns the file list with the man pages added. */
async function stage(root, node, strip) {
  rmSync(root, { recursive: true, force: true });
  const { files, dirs } = fileList(node);
  const man = [
    { dest: '/usr/share/man/man8/gdrgate.8.gz', mode: 0o644, about: 'this page' },
    { dest: '/usr/share/man/man5/gdrgate.json.5.gz', mode: 0o644, about: 'the configuration and baseline files' },
  ];
  const all = [...files, ...man];
  // The pages are made by this machine's Node running the same program (the commands do not depend on the
  // architecture; FILES names the carried Node's version): made once for all architectures whose Node is the same.
  pages[node.version] ??= gdrgate8({ exe: [process.execPath, path.join(repoRoot, 'dist/gdrgate.cjs')], version, files: [...all, ...dirs] });
  man[0].text = gzipSync(await pages[node.version], { level: 9 });
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
  // Node's debug symbols are 13 MiB that no node needs (binutils' strip for that architecture, where this machine has one).
  if (strip) await mustAsync(strip, ['--strip-all', path.join(root, LIB, 'node')]);
  for (const d of dirs) {
    mkdirSync(path.join(root, d.dest), { recursive: true });
    chmodSync(path.join(root, d.dest), d.mode);
  }
  return { files: all, dirs };
}

async function deb(root, list, arch) {
  const DEB = path.join(root, 'DEBIAN');
  mkdirSync(DEB, { mode: 0o755 });
  const kib = Math.ceil(list.files.reduce((n, f) => n + lstatSync(path.join(root, f.dest)).size, 0) / 1024);
  writeFileSync(
    path.join(DEB, 'control'),
    [
      'Package: gdrgate',
      `Version: ${version}-${release}`,
      `Architecture: ${ARCHES[arch].deb}`,
      `Maintainer: ${MAINTAINER}`,
      `Installed-Size: ${kib}`,
      'Depends: libc6 (>= 2.28), libstdc++6 (>= 5.2), libgcc-s1 | libgcc1', // what the carried Node needs: depends.test.ts
      // Sites run their own Slurm build: never pull Debian's in.
      'Recommends: logrotate',
      'Enhances: slurmd',
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
  writeFileSync(path.join(DEB, 'prerm'), `#!/bin/sh\nset -e\nif [ "$1" = remove ]; then\n${PRERM_REMOVE}fi\n`);
  writeFileSync(path.join(DEB, 'postrm'), `#!/bin/sh\nset -e\nif [ "$1" = purge ]; then\n${PURGE}fi\n[ -d /run/systemd/system ] && systemctl daemon-reload || true\n`);
  for (const f of ['postinst', 'prerm', 'postrm']) chmodSync(path.join(DEB, f), 0o755);
  for (const f of ['control', 'conffiles', 'md5sums']) chmodSync(path.join(DEB, f), 0o644);
  const file = path.join(out, `gdrgate_${version}-${release}_${ARCHES[arch].deb}.deb`);
  await mustAsync('dpkg-deb', ['--build', '--root-owner-group', '-Zgzip', root, file]);
  rmSync(DEB, { recursive: true });
  return file;
}

// A directory and those above it still named gdrgate (/usr/share/gdrgate): rpm -e removes only the ones it owns.
const ours = (dir) => (/\/gdrgate(\/|$)/.test(dir) ? [dir, ...ours(path.dirname(dir))] : []);
async function rpm(root, list, arch) {
  const top = path.join(out, `rpmbuild-${arch}`);
  rmSync(top, { recursive: true, force: true });
  const attr = (m) => `%attr(${m.toString(8).padStart(4, '0')},root,root)`;
  const target = ARCHES[arch].rpm;
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
    // Sites run their own Slurm build: never pull a distribution's in.
    'Enhances: slurm-slurmd',
    // Node.js's release binary, as Node ships it: no debug package, no post-install rewriting of it.
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
    // $1 is 0 on erase, 1 on upgrade (%systemd_preun's test, written out: not every rpmbuild has the systemd macros).
    '%preun',
    `if [ "$1" = 0 ]; then\n${PRERM_REMOVE}fi`,
    // On erase the per-job state and the unit's links go; the sample spool and the log stay if they hold anything
    // (rpm removes the directories it owns once empty).
    '%postun',
    'if [ "$1" = 0 ]; then\nrm -rf /run/gdrgate\nrm -f /etc/systemd/system/multi-user.target.wants/gdrgate-agent.service\nfi\n[ -d /run/systemd/system ] && systemctl daemon-reload || true',
    '%files',
    ...list.dirs.map((d) => `%dir ${attr(d.mode)} ${d.dest}`),
    ...[...new Set(list.files.flatMap((f) => ours(path.dirname(f.dest))))].filter((d) => !list.dirs.some((x) => x.dest === d)).sort().map((d) => `%dir ${attr(0o755)} ${d}`),
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
  await mustAsync('rpmbuild', ['-bb', '--define', `_topdir ${top}`, '--target', target, path.join(top, 'SPECS/gdrgate.spec')]);
  const built = path.join(top, 'RPMS', target);
  const name = readdirSync(built)[0];
  copyFileSync(path.join(built, name), path.join(out, name));
  rmSync(top, { recursive: true, force: true });
  return path.join(out, name);
}

for (const f of ['dist/gdrgate.cjs', ...Object.keys(WORKERS).map((w) => `dist/${w}`), 'dist/runner/policy.js'])
  if (!existsSync(path.join(repoRoot, f))) throw new Error(`${f} is missing: npm run build first`);
mkdirSync(out, { recursive: true });
// The stamp: the inputs' hash, then the files made from them (a build that did not finish leaves none).
const stamp = path.join(out, 'inputs.sha256');
const key = inputsKey({ arches, release, rpm: !opt['no-rpm'], maintainer: MAINTAINER, strip: arches.map(stripTool) });
const [was, ...made] = existsSync(stamp) ? readFileSync(stamp, 'utf8').trim().split('\n') : [];
if (opt['if-changed'] && was === key && made.length && made.every((f) => existsSync(path.join(out, f)))) {
  console.log(`${path.relative(repoRoot, out) || '.'}: ${made.join(', ')} already made from these sources (${key.slice(0, 12)})`);
  process.exit(0);
}
rmSync(stamp, { force: true });
const work = mkdtempSync(path.join(tmpdir(), 'gdrgate-package-'));
try {
  const lines = await Promise.all(
    arches.map(async (arch) => {
      const node = nodeBinary(arch, work);
      const strip = stripTool(arch);
      const root = path.join(work, `root-${arch}`);
      const list = await stage(root, node, strip);
      // The lintian overrides are the .deb's alone (rpm has no such file).
      const overrides = path.join(root, 'usr/share/lintian/overrides/gdrgate');
      const files = [];
      if (!opt['no-rpm']) files.push(await rpm(root, list, arch));
      mkdirSync(path.dirname(overrides), { recursive: true });
      writeFileSync(overrides, LINTIAN_OVERRIDES);
      list.files.push({ dest: '/usr/share/lintian/overrides/gdrgate', mode: 0o644 });
      files.unshift(await deb(root, list, arch));
      return files.map((f) => ({ f, line: `${path.relative(repoRoot, f)} ${(statSync(f).size / 2 ** 20).toFixed(1)} MiB (Node ${node.version} ${arch}, ${node.from}${strip ? '' : ', not stripped: no strip(1) for it here'})` }));
    }),
  );
  for (const { line } of lines.flat()) console.log(line);
  writeFileSync(stamp, [key, ...lines.flat().map(({ f }) => path.basename(f))].join('\n') + '\n');
} finally {
  rmSync(work, { recursive: true, force: true });
}
