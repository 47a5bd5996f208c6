// slurm/epilog.sh: settings from the .conf beside it, and the exit-code policy (a non-zero Epilog drains the node
// with Slurm's "Epilog error": only gdrgate's own drain, exit 1, passes through; a broken gdrgate never drains).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';

import path from 'node:path';
import t from 'tap';
import { REPO } from '../helpers/paths.js';
import { scratchDir } from '../helpers/scratch.js';

const dir = scratchDir('gdrgate-epiwrap-');
t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
const wrapper = path.join(dir, 'gdrgate-epilog.sh');
fs.copyFileSync(path.join(REPO, 'slurm/epilog.sh'), wrapper);
fs.chmodSync(wrapper, 0o755);
// A stand-in for node + cli.js: prints its arguments, writes $RC into the wrapper's verdict pipe as gdrgate does
// (src/host/verdict.ts; not with NOVERDICT=1: Node's own exit) and exits with $RC.
const fake = path.join(dir, 'fake-cli.sh');
fs.writeFileSync(fake, '#!/bin/sh\necho "args: $*"\n[ "${PARTIAL-}" = 1 ] && printf "$RC" >"/proc/self/fd/$GDRGATE_VERDICT_FD" && exit "$RC"\n[ -z "${GDRGATE_VERDICT_FD-}" ] || [ "${NOVERDICT-}" = 1 ] || echo "${RC:-0}" >"/proc/self/fd/$GDRGATE_VERDICT_FD"\nexit "${RC:-0}"\n', { mode: 0o755 });

function run(rc: number, noVerdict = false, partial = false): { code: number | null; stdout: string; stderr: string } {
  fs.writeFileSync(path.join(dir, 'gdrgate-epilog.conf'), `NODE=/bin/sh\nCLI=${fake}\nCONFIG=/etc/x.json\nLOGGER=\n`);
  // As slurmd runs it: no PATH, cwd elsewhere.
  const r = spawnSync(wrapper, [], { encoding: 'utf8', env: { RC: String(rc), SLURM_JOB_ID: '7', ...(noVerdict ? { NOVERDICT: '1' } : {}), ...(partial ? { PARTIAL: '1' } : {}) }, cwd: '/', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

t.test('arguments from the .conf, no PATH needed', async (t) => {
  t.equal(run(0).stdout, 'args: epilog --config /etc/x.json\n');
});

t.test('exit codes', async (t) => {
  t.equal(run(0).code, 0, '0 → 0');
  t.equal(run(1).code, 1, 'gdrgate drained the node itself → 1');
  for (const rc of [2, 3]) {
    const r = run(rc);
    t.same({ code: r.code, stderr: r.stderr }, { code: 0, stderr: `gdrgate epilog: gdrgate exited ${rc}; not failing the Epilog\n` }, `gdrgate exit ${rc} (usage, internal) → 0`);
  }
  // Exits gdrgate did not write: a crash (a signal), and Node's own 1 (the program missing or cut short), which would
  // drain the node with Slurm's "Epilog error".
  for (const [rc, why] of [[134, 'killed by signal 6'], [1, 'exit 1, not written by gdrgate']] as const) {
    const r = run(rc, true);
    t.same({ code: r.code, stderr: r.stderr }, { code: 0, stderr: `gdrgate epilog: /bin/sh ended without a verdict (${why}); not failing the Epilog\n` }, `${why} → 0`);
  }
});

// A line begun in the pipe and never ended (no writer of gdrgate's: it writes "<code>\n" at once) holds the Epilog for
// at most a second, the node COMPLETING meanwhile; it used to wait for ever (the wrapper holds the pipe's write end).
t.test('a verdict line never ended: the Epilog ends, failing open', async (t) => {
  const r = run(1, false, true);
  t.same({ code: r.code, stderr: r.stderr }, { code: 0, stderr: 'gdrgate epilog: /bin/sh ended without a verdict (exit 1, not written by gdrgate); not failing the Epilog\n' });
});
