// slurm/prolog.sh's and epilog.sh's hard bound: Node runs under /usr/bin/timeout, killed HARD_TIMEOUT seconds after
// the hook began; the hook then fails open and says so, and the Prolog never starts the plain program after a blob run
// so killed. A gate
// that loops or blocks in a read stops its own deadline's timer: without the bound, slurmd's PrologEpilogTimeout
// (none by default) killed the Prolog and drained the node. A gate that ends in time, or a kill before the bound
// (the OOM killer's), is as before. The stand-in for Node: test/slurm/_wrap.ts's fake (RC=hang: never ends).
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { scratchDir } from '../helpers/scratch.js';
import { PROLOG_ENV, wrapperKit } from './_wrap.js';

if (process.getuid?.() !== 0) {
  t.skip('the hard bound: the wrappers read only root-owned settings files, so this runs as root', () => {});
} else {
  const dir = scratchDir('gdrgate-hard-');
  const { base, install, conf, run } = wrapperKit(dir);
  const file = install('prolog', path.join(dir, 'hard/gdrgate-prolog.sh'), false);
  const settings = (extra: string): void => conf(path.join(dir, 'hard/gdrgate-prolog.conf'), `${base}LOGGER=\n${extra}`);
  const ARGS = 'args: prolog --config /etc/gdrgate/config.json\n';
  const killedAt = (s: number): string => `gdrgate prolog: /bin/sh killed at the hard bound, ${s}s after the prolog began, without a verdict; not failing the prolog\n`;

  t.test('a gate that never ends: killed at the bound, the Prolog fails open and says so', async (t) => {
    settings('HARD_TIMEOUT=2\n');
    const began = performance.now();
    const r = run(file, { ...PROLOG_ENV, RC: 'hang' }, undefined, 30_000);
    const s = (performance.now() - began) / 1000;
    t.same(r, { code: 0, stdout: ARGS, stderr: killedAt(2) });
    t.ok(s >= 1 && s < 25, `ended after ${s.toFixed(1)} s: at the bound, not the stand-in's 30 s sleep`);
  });

  t.test('HARD_TIMEOUT=0 or empty: unbounded, as before (started by the wrapper itself); malformed: the default', async (t) => {
    const parent = (v: string): string => {
      settings(`HARD_TIMEOUT=${v}\n`);
      return run(file, { ...PROLOG_ENV, PARENT: '1' }).stdout.split('\n')[1]!;
    };
    t.same(['0', '', '00', '1x', '-1', '45'].map((v) => [v, parent(v)]), [['0', 'parent: gdrgate-prolog.'], ['', 'parent: gdrgate-prolog.'], ['00', 'parent: gdrgate-prolog.'], ['1x', 'parent: timeout'], ['-1', 'parent: timeout'], ['45', 'parent: timeout']]);
  });

  t.test('in time, the gate runs under the bound: its verdict and output as before', async (t) => {
    settings('');
    for (const rc of [0, 1]) t.same(run(file, { ...PROLOG_ENV, RC: String(rc), PARENT: '1' }), { code: rc, stdout: `${ARGS}parent: timeout\n`, stderr: '' }, `exit ${rc}`);
  });

  t.test('killed before the bound (the OOM killer): no verdict, said as before', async (t) => {
    settings('HARD_TIMEOUT=45\n');
    t.same(run(file, { ...PROLOG_ENV, RC: 'kill' }), { code: 0, stdout: ARGS, stderr: 'gdrgate prolog: /bin/sh ended without a verdict (killed by signal 9); not failing the prolog\n' });
  });

  t.test('the Epilog: the same bound (default 55 s), the same fail-open', async (t) => {
    const epilog = install('epilog', path.join(dir, 'hard/gdrgate-epilog.sh'), false);
    const at = path.join(dir, 'hard/gdrgate-epilog.conf');
    const EARGS = 'args: epilog --config /etc/gdrgate/config.json\n';
    conf(at, `${base}LOGGER=\nHARD_TIMEOUT=2\n`);
    t.same(run(epilog, { ...PROLOG_ENV, RC: 'hang' }, undefined, 30_000), { code: 0, stdout: EARGS, stderr: 'gdrgate epilog: /bin/sh killed at the hard bound, 2s after the Epilog began, without a verdict; not failing the Epilog\n' });
    t.same(run(epilog, { ...PROLOG_ENV, RC: '1', PARENT: '1' }), { code: 1, stdout: `${EARGS}parent: timeout\n`, stderr: '' }, "gdrgate's drain passes through");
    conf(at, `${base}LOGGER=\n`);
    t.same(run(epilog, { ...PROLOG_ENV, RC: 'kill' }), { code: 0, stdout: EARGS, stderr: 'gdrgate epilog: /bin/sh ended without a verdict (killed by signal 9); not failing the Epilog\n' }, 'default 55 s: a SIGKILL before it, as before');
    conf(at, `${base}LOGGER=\nHARD_TIMEOUT=0\n`);
    t.same(run(epilog, { ...PROLOG_ENV, PARENT: '1' }).stdout, `${EARGS}parent: gdrgate-epilog.\n`, 'HARD_TIMEOUT=0: unbounded');
  });

  t.test('a blob run killed at the bound: the plain program is not started after it', async (t) => {
    const node = path.join(dir, 'hard/node');
    writeFileSync(node, '#!/bin/sh\n[ "$1" = --snapshot-blob ] || exec /bin/sh "$@"\nexec /bin/sleep 30\n', { mode: 0o755 });
    writeFileSync(path.join(dir, 'hard/gate.blob'), 'blob\n', { mode: 0o644 });
    settings(`NODE=${node}\nBLOB=${path.join(dir, 'hard/gate.blob')}\nHARD_TIMEOUT=2\n`);
    const r = run(file, PROLOG_ENV, undefined, 30_000);
    t.same(r, { code: 0, stdout: '', stderr: killedAt(2).replace('/bin/sh', node) });
  });
}
