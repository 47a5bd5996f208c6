#!/usr/bin/env node
// Builds the single executable (Node's single executable applications): every gdrgate command in one CommonJS
// bundle with every dependency and the precompiled JSON Schema validators inside, injected into a copy of this
// Node. Usage: node scripts/package-sea.mjs [--out FILE] [--mode code-cache|snapshot|plain]
//   snapshot (default: the faster, bench/package.mjs): a startup snapshot taken after warm-up prologs (useSnapshot),
//     as dist/gate.blob is; the gate's modules are evaluated in it, the other commands' on first use
//   code-cache: the bundle and V8's code cache for it (useCodeCache)
// The executable runs with no Node, no node_modules and no network; its Node is the one that built it, so a
// snapshot inside it can never be "made by another Node".
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';
import { bundlePlugins, repoRoot, findTool } from './package-lib.mjs';

const { values: opt } = parseArgs({ options: { out: { type: 'string', default: 'dist/package/gdrgate' }, mode: { type: 'string', default: 'snapshot' } } });
const modes = ['code-cache', 'snapshot', 'plain'];
if (!modes.includes(opt.mode)) throw new Error(`--mode: one of ${modes.join(', ')}`);
const out = path.resolve(repoRoot, opt.out);
const work = mkdtempSync(path.join(tmpdir(), 'gdrgate-sea-'));

// The entry: the gate's fast path for prolog/health, yargs for everything else (as src/cli.ts, without top-level
// await, which CommonJS lacks). `gdrgate /usr/sbin/gdrgate prolog` equals `gdrgate prolog`: the Slurm wrappers
// call "$NODE" "$CLI" with both set to the executable.
const entry = `
import path from 'node:path';
import { startupSnapshot } from 'node:v8';
import { exitCodeOf } from './src/cli/top.ts';
import { parseGateArgv } from './src/cli/fast-argv.ts';
import { gateCommand } from './src/cli/gate.ts';
import { provideValidators } from './src/schema.ts';
import { setLogFile } from './src/log.ts';
import baseline from 'gdrgate-validator:baseline';
import config from 'gdrgate-validator:config';
import report from 'gdrgate-validator:report';
// Loaded by gateCommand only on a passing prolog: here it is in the bundle (and the snapshot) from the start.
import './src/state/prolog.ts';
provideValidators({ baseline, config, report });
const SNAPSHOT = ${JSON.stringify(opt.mode === 'snapshot')};
function run() {
  const argv = process.argv.slice(2);
  if (argv.length && path.resolve(argv[0]) === process.execPath) argv.shift();
  void exitCodeOf(async () => {
    const gate = parseGateArgv(argv);
    return gate ? gateCommand(gate, undefined, SNAPSHOT ? 'snapshot' : 'modules') : (await import('./src/cli/commands.ts')).main(argv);
  }).then((code) => process.exit(code));
}
if (SNAPSHOT) {
  startupSnapshot.setDeserializeMainFunction(run);
  const configs = JSON.parse(process.env.GDRGATE_SNAPSHOT_WARMUP ?? '[]');
  void configs
    .reduce((before, config) => before.then(() => gateCommand({ mode: 'prolog', config, dryRun: false })), Promise.resolve())
    .finally(() => setLogFile(undefined));
} else run();
`;

await build({
  stdin: { contents: entry, resolveDir: repoRoot, sourcefile: 'sea-entry.ts', loader: 'ts' },
  outfile: path.join(work, 'gdrgate.cjs'),
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  plugins: bundlePlugins({ snapshot: opt.mode === 'snapshot' }),
  // import.meta.url (the agent watches its own code; yargs finds its locale files) is the executable itself.
  define: { 'import.meta.url': '__gdrgateSelf.url' },
  banner: { js: "var __gdrgateSelf = { get url() { return require('node:url').pathToFileURL(process.execPath).href; } };" },
  minifyWhitespace: true,
  minifySyntax: true,
  logLevel: 'warning',
  legalComments: 'none',
});

const config = {
  main: path.join(work, 'gdrgate.cjs'),
  output: path.join(work, 'sea.blob'),
  disableExperimentalSEAWarning: true,
  useSnapshot: opt.mode === 'snapshot',
  useCodeCache: opt.mode === 'code-cache',
};
writeFileSync(path.join(work, 'sea.json'), JSON.stringify(config));

function must(cmd, args, env = {}) {
  const r = spawnSync(cmd, args, { cwd: repoRoot, encoding: 'utf8', env: { ...process.env, ...env }, timeout: 300_000 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status ?? r.signal}\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

try {
  const warm = opt.mode === 'snapshot' ? await (await import('./package-warmup.mjs')).warmUpConfigs(work) : [];
  // The warm-up prologs run as a job of this user would (scripts/build-blob.mjs does the same).
  const job = { SLURMD_NODENAME: 'warm-up', SLURM_JOB_ID: '1', SLURM_JOB_UID: String(process.getuid()), SLURM_JOB_GID: String(process.getgid()) };
  must(process.execPath, ['--experimental-sea-config', path.join(work, 'sea.json')], { ...job, GDRGATE_SNAPSHOT_WARMUP: JSON.stringify(warm) });
  mkdirSync(path.dirname(out), { recursive: true });
  const fresh = `${out}.${process.pid}`;
  copyFileSync(process.execPath, fresh);
  chmodSync(fresh, 0o755);
  // Node's debug symbols are 13 MiB that no node needs (binutils' strip; the blob is injected after).
  if (spawnSync('strip', ['--version']).status === 0) must('strip', ['--strip-all', fresh]);
  const postject = findTool('postject');
  must(postject[0], [...postject.slice(1), fresh, 'NODE_SEA_BLOB', path.join(work, 'sea.blob'), '--sentinel-fuse', 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2']);
  // Proven before it replaces the old one: it runs, with its own Node, and says its version.
  must(fresh, ['--version']);
  copyFileSync(fresh, out);
  rmSync(fresh, { force: true });
  chmodSync(out, 0o755);
  console.log(`${path.relative(repoRoot, out)}: single executable (${opt.mode}), Node ${process.version}`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
