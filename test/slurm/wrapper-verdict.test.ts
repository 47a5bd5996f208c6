// The class, not one input: for every wrapper, every exit code a program can end with and every way the verdict pipe can
// be left (gdrgate's own line, none, another code, a child's line before gdrgate's), the wrapper passes an exit code on
// only when it is the pipe's last line, and otherwise fails open and says so. The stand-in writes what it is told.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { REPO } from '../helpers/paths.js';
import { scratchDir } from '../helpers/scratch.js';

type Wrapper = 'prolog' | 'epilog' | 'taskprolog';
const CODES = [0, 1, 2, 3, 4, 10, 14, 125, 126, 127, 134, 137, 255];
/** What the stand-in writes into the pipe, in order, given the code it exits with. */
const WRITES: Record<string, (rc: number) => number[]> = {
  own: (rc) => [rc],
  none: () => [],
  other: (rc) => [rc === 0 ? 1 : 0],
  'child first': (rc) => [rc === 0 ? 1 : 0, rc],
};

/**
 * What each wrapper must do: its exit code, and whether it says the run ended without a verdict or that gdrgate broke.
 * Every wrapper passes only gdrgate's 1 (prolog.sh, epilog.sh: the drain; taskprolog.sh with FAIL=1: a finding);
 * gdrgate's 2 and 3 (usage; an error outside the judgment) are a broken tool, which never drains or fails a task.
 */
function expected(rc: number, written: number[]): { code: number; noVerdict: boolean; broke: boolean } {
  const verdict = rc <= 3 && written.at(-1) === rc;
  if (!verdict) return { code: 0, noVerdict: true, broke: false };
  return { code: rc === 1 ? 1 : 0, noVerdict: false, broke: rc >= 2 };
}

if (process.getuid?.() !== 0) {
  t.skip('wrapper verdicts: the wrappers read only root-owned settings files, so this runs as root', () => {});
} else {
  const dir = scratchDir('gdrgate-wrapverdict-');
  const fake = path.join(dir, 'fake-cli.sh');
  // The stand-in for node + cli.js: writes each code of $WRITE into the wrapper's pipe, then exits $RC.
  writeFileSync(fake, '#!/bin/sh\nfor c in $WRITE; do echo "$c" >"/proc/self/fd/$GDRGATE_VERDICT_FD"; done\nexit "$RC"\n', { mode: 0o755 });
  const install = (w: Wrapper): string => {
    const at = path.join(dir, w);
    mkdirSync(at, { recursive: true, mode: 0o755 });
    const file = path.join(at, `gdrgate-${w}.sh`);
    writeFileSync(file, readFileSync(path.join(REPO, `slurm/${w}.sh`), 'utf8').replace('"/etc/gdrgate/${0##*/}"', `"${at}/none/\${0##*/}"`));
    chmodSync(file, 0o755);
    writeFileSync(path.join(at, `gdrgate-${w}.conf`), `NODE=/bin/sh\nCLI=${fake}\nBLOB=\nAGENT=\nLOGGER=\nFAIL=1\nSTATE=\n`, { mode: 0o644 });
    return file;
  };
  const env = { SLURMD_NODENAME: 'vm', SLURM_JOB_ID: '42', SLURM_SCRIPT_CONTEXT: 'prolog_slurmd' };

  for (const w of ['prolog', 'epilog', 'taskprolog'] as const) {
    t.test(`slurm/${w}.sh: ${CODES.length} exit codes × ${Object.keys(WRITES).length} ways the pipe is left`, async (t) => {
      const file = install(w);
      const got: string[] = [];
      const want: string[] = [];
      for (const rc of CODES)
        for (const [how, write] of Object.entries(WRITES)) {
          const written = write(rc);
          const r = spawnSync(file, [], { encoding: 'utf8', env: { ...env, RC: String(rc), WRITE: written.join(' ') }, cwd: '/', timeout: 30_000 });
          const said = /ended without a verdict/.test(r.stderr);
          const broke = /: gdrgate exited [23]; (not failing|letting)/.test(r.stderr);
          const e = expected(rc, written);
          got.push(`${rc} ${how}: exit ${r.status}${said ? ', no verdict said' : ''}${broke ? ', broke said' : ''}`);
          want.push(`${rc} ${how}: exit ${e.code}${e.noVerdict ? ', no verdict said' : ''}${e.broke ? ', broke said' : ''}`);
        }
      t.same(got, want);
    });
  }
}
