// A copy of slurm/taskprolog.sh in a scratch directory of its own, beside `fake-cli.sh`: a stand-in for node + cli.js
// (its text given; the wrapper's .conf names it with NODE=/bin/sh CLI=<fake>).
import fs from 'node:fs';
import path from 'node:path';
import { REPO } from '../helpers/paths.js';
import { scratchDir } from '../helpers/scratch.js';

export function taskWrapperDir(prefix: string, fakeText: (dir: string) => string, mode?: number): { dir: string; wrapper: string; fake: string } {
  const dir = scratchDir(prefix);
  if (mode !== undefined) fs.chmodSync(dir, mode);
  const wrapper = path.join(dir, 'gdrgate-taskprolog.sh');
  fs.copyFileSync(path.join(REPO, 'slurm/taskprolog.sh'), wrapper);
  fs.chmodSync(wrapper, 0o755);
  const fake = path.join(dir, 'fake-cli.sh');
  fs.writeFileSync(fake, fakeText(dir), { mode: 0o755 });
  return { dir, wrapper, fake };
}
