#!/usr/bin/env node
// Makes dist/gate.blob, the gate's V8 startup snapshot, from dist/gate-snapshot.cjs with the Node that runs
// this script. A blob loads only in the Node build that made it: after a Node upgrade the Slurm wrappers fall
// back to dist/cli.js (and the gate logs so); run this again, as root, with the Node that Slurm's wrappers use:
//   /usr/bin/node /usr/lib/node_modules/gdrgate/scripts/build-blob.mjs
// Before the snapshot is taken, the gate runs passing prologs (on the bundled capture, examples/h200-vm, and on
// the generated DGX-1 tree of dist/warm-up-tree.mjs, each with a throwaway config, baseline and state directory)
// so that what a prolog runs is compiled in the blob; the new blob then must pass those prologs itself before it
// replaces the old one (rename: a prolog starting meanwhile reads either the old or the new file, whole).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist');
const blob = path.join(dist, 'gate.blob');
// The capture as a tree in a clone; as its snapshot file (examples/h200-vm.tar.gz) in the npm package, which ships no tree.
const capture = [path.join(root, 'examples/h200-vm'), path.join(root, 'examples/h200-vm.tar.gz')].find((p) => existsSync(p));
const node = process.execPath;

function run(args, env = {}) {
  const r = spawnSync(node, args, { cwd: root, encoding: 'utf8', env: { ...process.env, ...env }, timeout: 120_000 });
  if (r.status !== 0) throw new Error(`${path.basename(node)} ${args.join(' ')} exited ${r.status ?? r.signal}\n${r.stderr}`);
  return r.stdout;
}

/** A passing prolog's config for the tree at `treeRoot`: a baseline captured from it, a throwaway state directory. */
function warmUpConfig(tmp, name, treeRoot) {
  const baseline = path.join(tmp, `${name}.baseline.json`);
  writeFileSync(baseline, run([path.join(dist, 'cli.js'), 'baseline', 'capture', '--root', treeRoot, '--class', 'warm-up', '--match', '*']));
  const config = path.join(tmp, `${name}.config.json`);
  writeFileSync(config, JSON.stringify({ baseline, root: treeRoot, scontrol: node, logFile: '/dev/null', stateDir: path.join(tmp, `${name}.state`) }));
  return config;
}

const tmp = mkdtempSync(path.join(tmpdir(), 'gdrgate-blob-'));
try {
  const configs = [warmUpConfig(tmp, 'h200-vm', capture)];
  // Built by npm run build from the test generator (dist/warm-up-tree.mjs); a copy of dist without it warms up on the capture only.
  const gen = path.join(dist, 'warm-up-tree.mjs');
  if (existsSync(gen)) {
    const { buildTree, node: topology } = await import(pathToFileURL(gen).href);
    await buildTree(path.join(tmp, 'dgx1'), topology);
    configs.push(warmUpConfig(tmp, 'dgx1', path.join(tmp, 'dgx1')));
  }
  const fresh = path.join(dist, `.gate.blob.${process.pid}`);
  try {
    const job = { SLURMD_NODENAME: 'warm-up', SLURM_JOB_ID: '1', SLURM_JOB_UID: String(process.getuid()), SLURM_JOB_GID: String(process.getgid()) };
    run(['--snapshot-blob', fresh, '--build-snapshot', path.join(dist, 'gate-snapshot.cjs')], { ...job, GDRGATE_SNAPSHOT_WARMUP: JSON.stringify(configs) });
    for (const config of configs) {
      const out = run(['--snapshot-blob', fresh, 'prolog', '--config', config], job);
      if (!/ result=healthy exit=0 /.test(out)) throw new Error(`the new blob's prolog with ${config} did not pass:\n${out}`);
    }
    renameSync(fresh, blob);
  } finally {
    rmSync(fresh, { force: true });
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
