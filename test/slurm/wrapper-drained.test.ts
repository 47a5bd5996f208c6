// A Prolog whose gdrgate wrote its drain and then died (killed at the hard bound or by the OOM killer, its stdout
// full): the node is drained by us, so the job must not start there. gdrgate says "drained" into the wrappers' verdict
// pipe as soon as its drain is written, before its verdict; the wrapper fails the Prolog on it whatever came after,
// said; one that died before saying so still fails open. The real program against a broken node (Slurm 22.05.8's
// answers), and the wrapper with a stand-in that says "drained" and dies.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { breakLink, makeGateEnv } from '../helpers/gate-env.js';
import { REPO } from '../helpers/paths.js';
import { scratchDir } from '../helpers/scratch.js';
import { PROLOG_ENV, wrapperKit } from './_wrap.js';

t.test('gdrgate: "drained" in the verdict pipe once the drain is written, then its verdict; nothing of it on a pass', async (t) => {
  const said = (broken: boolean): string => {
    const e = makeGateEnv();
    if (broken) breakLink(e.tree);
    const r = spawnSync(process.execPath, [path.join(REPO, 'dist/gdrgate.cjs'), 'prolog', '--config', e.config], { env: { SLURMD_NODENAME: 'vm', SLURM_JOB_ID: '42', GDRGATE_VERDICT_FD: '3' }, stdio: ['ignore', 'pipe', 'pipe', 'pipe'], encoding: 'utf8' });
    return String(r.output[3]);
  };
  t.equal(said(true), 'drained\n1\n', 'a broken node: drained, then 1');
  t.equal(said(false), '0\n', 'a healthy node: 0 alone');
});

t.test('the wrapper: a gdrgate that said "drained" and then died fails the Prolog; one that died before fails open', async (t) => {
  const dir = scratchDir('gdrgate-drained-');
  const kit = wrapperKit(dir);
  const file = kit.install('prolog', path.join(dir, 'gdrgate-prolog.sh'));
  const run = (body: string): { code: number | null; last: string | undefined } => {
    const cli = path.join(dir, 'cli.sh');
    writeFileSync(cli, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
    kit.conf(path.join(kit.etc, 'gdrgate-prolog.conf'), `NODE=/bin/sh\nCLI=${cli}\nBLOB=\nAGENT=\nLOGGER=\nHARD_TIMEOUT=0\n`);
    const r = kit.run(file, PROLOG_ENV);
    return { code: r.code, last: r.stderr.trimEnd().split('\n').pop() };
  };
  const pipe = '"/proc/self/fd/$GDRGATE_VERDICT_FD"';
  t.same(run(`echo drained >${pipe}; kill -KILL $$`), { code: 1, last: `gdrgate prolog: /bin/sh ended (exit 137) after gdrgate drained this node; failing the prolog` }, 'killed after the drain');
  t.same(run(`echo drained >${pipe}; echo 3 >${pipe}; exit 3`), { code: 1, last: `gdrgate prolog: /bin/sh exited 3 after gdrgate drained this node; failing the prolog` }, 'an error after the drain (stdout full)');
  t.same(run(`echo drained >${pipe}; echo 1 >${pipe}; exit 1`), { code: 1, last: '' }, 'drained and its verdict: 1, nothing more said');
  t.same(run('kill -KILL $$'), { code: 0, last: `gdrgate prolog: /bin/sh ended without a verdict (killed by signal 9); not failing the prolog` }, 'killed before any drain: fails open');
});
