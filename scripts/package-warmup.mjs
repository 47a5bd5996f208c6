// Warm-up prologs for a startup snapshot inside the executable (scripts/package-sea.mjs --mode snapshot): the
// bundled capture and, when npm run build made it, the generated DGX-1 tree, each with a baseline captured from
// itself and a throwaway state directory, as scripts/build-blob.mjs warms dist/gate.blob.
import { execFileSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { repoRoot } from './package-lib.mjs';

export async function warmUpConfigs(tmp) {
  const trees = [['h200-vm', path.join(repoRoot, 'examples/h200-vm')]];
  const gen = path.join(repoRoot, 'dist/warm-up-tree.mjs');
  if (existsSync(gen)) {
    const { buildTree, node } = await import(pathToFileURL(gen).href);
    await buildTree(path.join(tmp, 'dgx1'), node);
    trees.push(['dgx1', path.join(tmp, 'dgx1')]);
  }
  return trees.map(([name, root]) => {
    const baseline = path.join(tmp, `${name}.baseline.json`);
    const cli = path.join(repoRoot, 'dist/cli.js');
    writeFileSync(baseline, execFileSync(process.execPath, [cli, 'baseline', 'capture', '--root', root, '--class', 'warm-up', '--match', '*']));
    const config = path.join(tmp, `${name}.config.json`);
    writeFileSync(config, JSON.stringify({ baseline, root, scontrol: process.execPath, logFile: '/dev/null', stateDir: path.join(tmp, `${name}.state`) }));
    return config;
  });
}
