// slurm/prolog.sh's and epilog.sh's hard bound: Node runs under /usr/bin/timeout, killed HARD_TIMEOUT seconds after
// the hook first started it; the hook then fails open and says so, and the Prolog never starts the plain program after a blob run
// so killed. A gate
// that loops or blocks in a read stops its own deadline's timer: without the bound, slurmd's PrologEpilogTimeout
// (none by default) killed the Prolog and drained the node. A gate that ends in time, or a kill before the bound
// (the OOM killer's), is as before. The stand-in for Node: test/slurm/_wrap.ts's fake (RC=hang: never ends).
import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { scratchDir } from '../helpers/scratch.js';
import { PROLOG_ENV, wrapperKit } from './_wrap.js';

if (process.getuid?.() !== 0) {
  t.skip('the hard bound: the wrappers read only root-owned settings files, so this runs as root', () => {});
} else {
  const dir = scratchDir('gdrgate-hard-');
  const { base, install, conf, run, timedRun, underTimeout } = wrapperKit(dir);
  const file = install('prolog', path.join(dir, 'hard/gdrgate-prolog.sh'), false);
  const settings = (extra: string): void => conf(path.join(dir, 'hard/gdrgate-prolog.conf'), `${base}LOGGER=\n${extra}`);
  const ARGS = 'args: prolog --config /etc/gdrgate/config.json\n';
  const killedAt = (s: number): string => `gdrgate prolog: /bin/sh killed at the hard bound, ${s}s after the gate started, without a verdict; not failing the prolog\n`;

  t.test('a gate that never ends: killed at the bound, the Prolog fails open and says so', async (t) => {
    settings('HARD_TIMEOUT=2\n');
    const { r, s } = timedRun(file, { ...PROLOG_ENV, RC: 'hang' });
    t.same(r, { code: 0, stdout: ARGS, stderr: killedAt(2) });
    t.ok(s >= 1 && s < 25, `ended after ${s.toFixed(1)} s: at the bound, not the stand-in's 30 s sleep`);
  });

  t.test('zero-padded, HARD_TIMEOUT=0000002 is 2 s (not the 6-digit cap)', async (t) => {
    settings('HARD_TIMEOUT=0000002\n');
    t.same(run(file, { ...PROLOG_ENV, RC: 'hang' }, undefined, 30_000), { code: 0, stdout: ARGS, stderr: killedAt(2) });
  });

  // The wall clock set back while a blob run hangs: the kill at the bound once read as an early SIGKILL (the wrapper
  // decided on the clock, timeout's timer does not step), and the plain program then ran with the bound anew: 13 s
  // for a bound of 3. The bound is on /proc/uptime now. The step: an LD_PRELOAD shim that shifts gettimeofday,
  // clock_gettime(CLOCK_REALTIME) and time by the seconds in a file, for bash alone (timeout and the stand-in clean).
  t.test('the clock set back during a hung blob run: killed at the bound, no second run', { skip: existsSync('/usr/bin/cc') ? false : 'no C compiler for the clock shim' }, async (t) => {
    const shim = path.join(dir, 'clock.c');
    writeFileSync(shim, [
      '#define _GNU_SOURCE',
      '#include <dlfcn.h>',
      '#include <stdio.h>',
      '#include <stdlib.h>',
      '#include <sys/time.h>',
      '#include <time.h>',
      'static long shift(void) { const char *f = getenv("CLOCK_SHIFT_FILE"); long o = 0; FILE *p = f ? fopen(f, "r") : 0; if (p) { if (fscanf(p, "%ld", &o) != 1) o = 0; fclose(p); } return o; }',
      'int gettimeofday(struct timeval *tv, void *tz) { static int (*real)(struct timeval *, void *); if (!real) real = dlsym(RTLD_NEXT, "gettimeofday"); int r = real(tv, tz); if (tv) tv->tv_sec += shift(); return r; }',
      'int clock_gettime(clockid_t c, struct timespec *ts) { static int (*real)(clockid_t, struct timespec *); if (!real) real = dlsym(RTLD_NEXT, "clock_gettime"); int r = real(c, ts); if (ts && c == CLOCK_REALTIME) ts->tv_sec += shift(); return r; }',
      'time_t time(time_t *t) { struct timeval tv; gettimeofday(&tv, 0); if (t) *t = tv.tv_sec; return tv.tv_sec; }',
      '',
    ].join('\n'));
    const so = path.join(dir, 'clock.so');
    const cc = spawnSync('/usr/bin/cc', ['-shared', '-fPIC', '-o', so, shim, '-ldl'], { encoding: 'utf8' });
    t.equal(cc.status, 0, cc.stderr);
    const node = path.join(dir, 'hard/step-node');
    // The stand-in runs without the shim (as timeout does: env -u), so only the wrapper's bash sees the step.
    writeFileSync(node, '#!/bin/sh\n[ "$1" = --snapshot-blob ] || exec /usr/bin/env -u LD_PRELOAD /bin/sh "$@"\nexec /usr/bin/env -u LD_PRELOAD /bin/sleep 30\n', { mode: 0o755 });
    writeFileSync(path.join(dir, 'hard/gate.blob'), 'blob\n', { mode: 0o644 });
    settings(`NODE=${node}\nBLOB=${path.join(dir, 'hard/gate.blob')}\nHARD_TIMEOUT=3\n`);
    const shift = path.join(dir, 'shift');
    writeFileSync(shift, '0\n');
    const stepper = spawnSync('/bin/sh', ['-c', `(/bin/sleep 1.5; echo -10 > ${shift}) & exec ${file}`], { encoding: 'utf8', cwd: '/', timeout: 40_000, env: { ...PROLOG_ENV, LD_PRELOAD: so, CLOCK_SHIFT_FILE: shift } });
    t.same({ code: stepper.status, stdout: stepper.stdout, stderr: stepper.stderr }, { code: 0, stdout: '', stderr: killedAt(3).replace('/bin/sh', node) }, 'one kill, at the bound; the plain program never started');
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
    t.same(run(epilog, { ...PROLOG_ENV, RC: 'hang' }, undefined, 30_000), { code: 0, stdout: EARGS, stderr: 'gdrgate epilog: /bin/sh killed at the hard bound, 2s after the gate started, without a verdict; not failing the Epilog\n' });
    t.same(run(epilog, { ...PROLOG_ENV, RC: '1', PARENT: '1' }), { code: 1, stdout: `${EARGS}parent: timeout\n`, stderr: '' }, "gdrgate's drain passes through");
    conf(at, `${base}LOGGER=\n`);
    t.same(run(epilog, { ...PROLOG_ENV, RC: 'kill' }), { code: 0, stdout: EARGS, stderr: 'gdrgate epilog: /bin/sh ended without a verdict (killed by signal 9); not failing the Epilog\n' }, 'default 55 s: a SIGKILL before it, as before');
    conf(at, `${base}LOGGER=\nHARD_TIMEOUT=0\n`);
    t.same(run(epilog, { ...PROLOG_ENV, PARENT: '1' }).stdout, `${EARGS}parent: gdrgate-epilog.\n`, 'HARD_TIMEOUT=0: unbounded');
  });

  // A /usr/bin/timeout that fails itself (here a stand-in bind-mounted over it in a mount namespace of the test's own):
  // every Prolog was left without a verdict, failing open: the gate switched off. It runs once more, unbounded.
  t.test("a timeout that fails itself: the gate once more without it, and its verdict stands", { skip: existsSync('/usr/bin/unshare') ? false : 'needs unshare' }, async (t) => {
    const broken = path.join(dir, 'hard/broken-timeout');
    writeFileSync(broken, '#!/bin/sh\nexit 125\n', { mode: 0o755 });
    settings('');
    const r = underTimeout(broken, file, { ...PROLOG_ENV, RC: '1' });
    t.same(r, { code: 1, stdout: ARGS, stderr: 'gdrgate prolog: no verdict (exit 125) under /usr/bin/timeout: the gate once more without the hard bound\n' }, "gdrgate's 1 (its drain) passes through");
    const epilog = install('epilog', path.join(dir, 'hard/gdrgate-epilog.sh'), false);
    conf(path.join(dir, 'hard/gdrgate-epilog.conf'), `${base}LOGGER=\n`);
    const e = underTimeout(broken, epilog, { ...PROLOG_ENV, RC: '1' });
    t.same(e, { code: 1, stdout: 'args: epilog --config /etc/gdrgate/config.json\n', stderr: 'gdrgate epilog: no verdict (exit 125) under /usr/bin/timeout: the gate once more without the hard bound\n' }, 'the Epilog too');
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
