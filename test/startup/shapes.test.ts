// Every shape gdrgate is built in (scripts/shapes.mjs) runs the same program: `check` on the bundled real capture
// from tsc's modules, the ESM bundle, the one-file program and its startup snapshot prints the same bytes and exit.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import t from 'tap';
import { REPO } from '../helpers/paths.js';

const CAPTURE = path.join(REPO, 'examples/h200-vm.tar.gz');
const ARGS = ['check', '--root', CAPTURE];
const MODULES = `const { runCli } = await import(${JSON.stringify(path.join(REPO, 'dist/cli/run.js'))}); process.exit(await runCli(process.argv.slice(1), 'modules'));`;
const shapes: Record<string, string[]> = {
  modules: ['--input-type=module', '-e', MODULES, '--', ...ARGS],
  esm: [path.join(REPO, 'dist/cli.js'), ...ARGS],
  program: [path.join(REPO, 'dist/gdrgate.cjs'), ...ARGS],
  blob: ['--snapshot-blob', path.join(REPO, 'dist/gate.blob'), ...ARGS],
};

const ran = Object.fromEntries(
  Object.entries(shapes).map(([name, args]) => {
    const r = spawnSync(process.execPath, args, { encoding: 'utf8', cwd: REPO, env: { PATH: '/usr/bin:/bin' }, timeout: 120_000 });
    return [name, { status: r.status, stdout: r.stdout, stderr: r.stderr }];
  }),
);

t.equal(ran.esm!.status, 0, ran.esm!.stderr);
t.match(ran.esm!.stdout, /^result: healthy \(exit 0\) — 0 fail, 0 error, 0 warn, 11 pass, 5 skip$/m, 'the README\'s report');
for (const name of ['modules', 'program', 'blob']) {
  t.equal(ran[name]!.status, ran.esm!.status, `${name}: the same exit`);
  t.equal(ran[name]!.stdout, ran.esm!.stdout, `${name}: the same report, byte for byte`);
}
