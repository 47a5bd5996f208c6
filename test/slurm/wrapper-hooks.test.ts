// slurm/*.sh across Slurm releases: settings from /etc/gdrgate/NAME.conf (configless), the hook told by SLURM_SCRIPT_CONTEXT, a killed fallback Node failing open and saying so in the system log.
// The wrappers run for real, as slurmd starts them (no PATH, cwd /); what they start is a stand-in for node + cli.js
// that prints its arguments and exits as told, so what is checked is the wrapper's own choice. The fixed settings
// directory /etc/gdrgate is this machine's: each copy names a private one instead (the one literal replaced).
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { slurmdShim } from '../agent/_agent.js';
import { REPO } from '../helpers/paths.js';
import { scratchDir } from '../helpers/scratch.js';
import { PROLOG_ENV, type Script, wrapperKit } from './_wrap.js';

if (process.getuid?.() !== 0) {
  t.skip('wrapper hooks: the wrappers read only root-owned settings files, so this runs as root', () => {});
} else {
  const dir = scratchDir('gdrgate-wraphooks-');
  const { etc, base, install, conf, run } = wrapperKit(dir);

  t.test('configless: a script with no .conf beside it reads /etc/gdrgate/NAME.conf', async (t) => {
    const want: Record<Script, string> = { prolog: 'args: prolog --config /etc/fixed.json\n', epilog: 'args: epilog --config /etc/fixed.json\n', taskprolog: 'args: task --config /etc/fixed.json\n' };
    for (const s of ['prolog', 'epilog', 'taskprolog'] as const) {
      // Where slurmd keeps a configless node's scripts: SlurmdSpoolDir/conf-cache, without the .conf.
      const file = install(s, path.join(dir, 'spool/conf-cache', `gdrgate-${s}.sh`));
      conf(path.join(etc, `gdrgate-${s}.conf`), `${base}CONFIG=/etc/fixed.json\n`);
      const r = run(file, PROLOG_ENV);
      t.same({ code: r.code, stdout: r.stdout, stderr: r.stderr }, { code: 0, stdout: want[s], stderr: '' }, s);
    }
  });

  t.test('both: the fixed file first, the one beside the script wins', async (t) => {
    const file = install('prolog', path.join(dir, 'beside/gdrgate-prolog.sh'));
    conf(path.join(etc, 'gdrgate-prolog.conf'), `${base}CONFIG=/etc/fixed.json\n`);
    conf(path.join(dir, 'beside/gdrgate-prolog.conf'), 'CONFIG=/etc/beside.json\n');
    t.equal(run(file, PROLOG_ENV).stdout, 'args: prolog --config /etc/beside.json\n');
  });

  t.test('the fixed file under the same trust check: one others may write is not read, and said so', async (t) => {
    const file = install('epilog', path.join(dir, 'untrusted/gdrgate-epilog.sh'));
    const fixed = path.join(etc, 'gdrgate-epilog.conf');
    conf(path.join(dir, 'untrusted/gdrgate-epilog.conf'), `${base}CONFIG=/etc/beside.json\n`);
    conf(fixed, 'CONFIG=/etc/fixed.json\n', 0o666);
    const r = run(file, PROLOG_ENV);
    t.equal(r.stdout, 'args: epilog --config /etc/beside.json\n');
    t.equal(r.stderr, `gdrgate: not reading ${fixed}: want it a regular file and it, and every directory above where it lies, owned by root and writable by root only\n`);
  });

  t.test("a TaskProlog's environment (the job's) cannot make it skip a settings file", async (t) => {
    const file = install('taskprolog', path.join(dir, 'job/gdrgate-taskprolog.sh'));
    conf(path.join(etc, 'gdrgate-taskprolog.conf'), `${base}CONFIG=/etc/fixed.json\nFAIL=1\n`);
    const fixed = path.join(etc, 'gdrgate-taskprolog.conf');
    const r = run(file, { SLURM_JOB_ID: '42', SLURM_SCRIPT_CONTEXT: 'prolog_task', gdrgate_read: fixed, gdrgate_conf: fixed });
    t.equal(r.stdout, 'args: task --config /etc/fixed.json --fail\n');
  });

  t.test('the hook from SLURM_SCRIPT_CONTEXT before the name', async (t) => {
    const named = install('prolog', path.join(dir, 'prolog.d/50-gpu-health.sh'), false);
    conf(path.join(dir, 'prolog.d/50-gpu-health.conf'), base);
    t.equal(run(named, PROLOG_ENV).stdout, 'args: prolog --config /etc/gdrgate/config.json\n', 'a Prolog named *health* (a glob Prolog=prolog.d/*) is a Prolog');
    t.equal(run(named, { SLURMD_NODENAME: 'vm' }).stdout, 'args: health --config /etc/gdrgate/config.json\n', 'by hand: the name');

    const plain = install('prolog', path.join(dir, 'hc/gate.sh'), false);
    conf(path.join(dir, 'hc/gate.conf'), base);
    const slurmd = slurmdShim(dir);
    t.equal(run(plain, { SLURMD_NODENAME: 'vm' }, slurmd).stdout, 'args: health --config /etc/gdrgate/config.json\n', 'HealthCheckProgram=…/gate.sh: slurmd starts it with SLURMD_NODENAME alone');
    t.equal(run(plain, { SLURMD_NODENAME: 'vm', SLURM_NODE_IS_HEALTHY: 'yes' }, slurmd).stdout, 'args: health --config /etc/gdrgate/config.json\n', "26.05's health environment");
    t.equal(run(plain, { SLURMD_NODENAME: 'vm' }).stdout, 'args: prolog --config /etc/gdrgate/config.json\n', 'the same environment typed in a shell: the name (the CLI then refuses a prolog outside Slurm)');
    t.equal(run(plain, PROLOG_ENV, slurmd).stdout, 'args: prolog --config /etc/gdrgate/config.json\n', 'a Prolog under slurmd');
    t.equal(run(plain, { SLURMD_NODENAME: 'vm', SLURM_SCRIPT_CONTEXT: 'epilog_slurmd', SLURM_JOB_ID: '42' }, slurmd).stdout, 'args: prolog --config /etc/gdrgate/config.json\n', 'another context: the name');
    // The file's name, not a directory above it: a Prolog kept under a site's health.d/ stays a Prolog by hand.
    const under = install('prolog', path.join(dir, 'site-health.d/gate-hc-dir.sh'), false);
    conf(path.join(dir, 'site-health.d/gate-hc-dir.conf'), base);
    t.equal(run(under, { SLURMD_NODENAME: 'vm' }).stdout, 'args: prolog --config /etc/gdrgate/config.json\n', 'a directory named *health* does not name the hook');
  });

  t.test('the fallback gate killed (the OOM killer in a RunInJob job cgroup): the Prolog fails open, says why', async (t) => {
    const file = install('prolog', path.join(dir, 'oom/gate-oom.sh'), false);
    conf(path.join(dir, 'oom/gate-oom.conf'), base);
    const killed = run(file, { ...PROLOG_ENV, RC: 'kill' });
    t.same(killed, { code: 0, stdout: 'args: prolog --config /etc/gdrgate/config.json\n', stderr: 'gdrgate prolog: /bin/sh ended without a verdict (killed by signal 9); not failing the prolog\n' });
    const missing = run(file, { ...PROLOG_ENV, RC: '127' });
    // (127 is also a timeout's that could not start Node: the gate once more without it, then the same 127.)
    t.same({ code: missing.code, stderr: missing.stderr }, { code: 0, stderr: 'gdrgate prolog: no verdict (exit 127) under /usr/bin/timeout: the gate once more without the hard bound\ngdrgate prolog: /bin/sh ended without a verdict (exit 127); not failing the prolog\n' });
    for (const rc of [0, 1]) t.equal(run(file, { ...PROLOG_ENV, RC: String(rc) }).code, rc, `gdrgate's verdict ${rc} passes through`);
    // gdrgate's 2 (usage) and 3 (an error outside the judgment: a drain, record or log that threw) are a broken tool.
    for (const rc of [2, 3]) {
      const r = run(file, { ...PROLOG_ENV, RC: String(rc) });
      t.same({ code: r.code, stderr: r.stderr }, { code: 0, stderr: `gdrgate prolog: gdrgate exited ${rc}; not failing the prolog\n` }, `gdrgate's own exit ${rc}: fails open, said`);
    }
    // Node's own exit 1 (the program missing, unreadable or cut short: an exception before gdrgate's code) or 0 (an
    // empty program) is no verdict: a 1 would drain the node with Slurm's "Prolog error".
    for (const rc of [1, 0]) {
      const r = run(file, { ...PROLOG_ENV, RC: String(rc), NOVERDICT: '1' });
      t.same({ code: r.code, stderr: r.stderr }, { code: 0, stderr: `gdrgate prolog: /bin/sh ended without a verdict (exit ${rc}, not written by gdrgate); not failing the prolog\n` });
    }
  });
  // The blob's run ends after writing its verdict (the OOM killer between the write and the exit): its line is no
  // verdict of the plain program's, which runs next. Left in the pipe, it was read first, and a real exit 1 failed open.
  t.test("the verdict is gdrgate's last line: not a killed blob's, not a child's before it, and a line never ended holds nothing", async (t) => {
    const where = path.join(dir, 'blobkill');
    const file = install('prolog', path.join(where, 'gate-blob.sh'), false);
    const node = path.join(where, 'node');
    writeFileSync(node, `#!/bin/sh\n[ "$1" = --snapshot-blob ] || exec /bin/sh "$@"\necho "$BLOB_RC" >"/proc/self/fd/$GDRGATE_VERDICT_FD"\nkill -KILL $$\n`, { mode: 0o755 });
    writeFileSync(path.join(where, 'gate.blob'), 'blob\n', { mode: 0o644 });
    conf(path.join(where, 'gate-blob.conf'), `${base}NODE=${node}\nBLOB=${path.join(where, 'gate.blob')}\nLOGGER=\n`);
    const said = (blob: number, rc: number) => {
      const r = run(file, { ...PROLOG_ENV, BLOB_RC: String(blob), RC: String(rc) });
      return { code: r.code, stdout: r.stdout, said: r.stderr.includes('without a verdict') };
    };
    const plain = (code: number) => ({ code, stdout: 'args: prolog --config /etc/gdrgate/config.json\n', said: false });
    t.same(said(0, 1), plain(1), 'the blob wrote 0, the plain program drains: 1');
    t.same(said(1, 0), plain(0), 'the blob wrote 1, the plain program passes: 0, and nothing said');
    // gdrgate's children (scontrol) inherit the pipe and its name: a line one wrote before gdrgate's own is not the verdict.
    const child = path.join(where, 'child.sh');
    writeFileSync(child, '#!/bin/sh\necho 0 >"/proc/self/fd/$GDRGATE_VERDICT_FD"\necho 1 >"/proc/self/fd/$GDRGATE_VERDICT_FD"\nexit 1\n', { mode: 0o755 });
    conf(path.join(where, 'gate-blob.conf'), `${base}CLI=${child}\nLOGGER=\n`);
    t.same(run(file, PROLOG_ENV), { code: 1, stdout: '', stderr: '' }, "a child's 0, then gdrgate's 1: 1");
    // A line begun and never ended (no writer of gdrgate's) holds the Prolog at most a second, never for ever.
    const partial = path.join(where, 'partial.sh');
    writeFileSync(partial, '#!/bin/sh\nprintf 1 >"/proc/self/fd/$GDRGATE_VERDICT_FD"\nexit 1\n', { mode: 0o755 });
    conf(path.join(where, 'gate-blob.conf'), `${base}CLI=${partial}\nLOGGER=\n`);
    const r = run(file, PROLOG_ENV);
    t.same({ code: r.code, stderr: r.stderr }, { code: 0, stderr: 'gdrgate prolog: /bin/sh ended without a verdict (exit 1, not written by gdrgate); not failing the prolog\n' }, 'a line never ended');
  });
  t.test("a .conf's shell options (set -eu; bash: pipefail, posix) do not reach the wrapper: a killed gate still fails open", async (t) => {
    const said: Record<Script, { code: number | null; stdout: string }> = {} as Record<Script, { code: number | null; stdout: string }>;
    for (const s of ['prolog', 'epilog', 'taskprolog'] as const) {
      const file = install(s, path.join(dir, `opts/opts-${s}.sh`));
      conf(path.join(dir, `opts/opts-${s}.conf`), `set -euo pipefail\nset -o posix\n${base}`);
      const r = run(file, { ...PROLOG_ENV, RC: 'kill' });
      said[s] = { code: r.code, stdout: r.stdout };
    }
    t.same(said, {
      prolog: { code: 0, stdout: 'args: prolog --config /etc/gdrgate/config.json\n' },
      epilog: { code: 0, stdout: 'args: epilog --config /etc/gdrgate/config.json\n' },
      taskprolog: { code: 0, stdout: 'args: task --config /etc/gdrgate/config.json\n' },
    });
  });

  // slurmd logs a Prolog's or Epilog's output only when it fails, and slurmstepd drops a TaskProlog's stderr: what a
  // wrapper says while not failing goes to the system log too, through LOGGER (here a stand-in that keeps its argv).
  t.test('what a wrapper says when it does not fail reaches the system log, once, and a hung logger does not hold it', async (t) => {
    const said = path.join(dir, 'syslog/said');
    const logger = path.join(dir, 'syslog/logger');
    mkdirSync(path.dirname(said), { recursive: true, mode: 0o755 });
    writeFileSync(logger, `#!/bin/sh\n[ "\${HANG-}" = 1 ] && exec /bin/sleep 30\nprintf '%s|' "$@" >>${said}\necho >>${said}\n`, { mode: 0o755 });
    const lines = (): string[] => (existsSync(said) ? readFileSync(said, 'utf8').split('\n').filter(Boolean) : []);
    const reset = (): void => writeFileSync(said, '');
    const conf2 = `${base}LOGGER=${logger}\n`;
    const at = (s: Script): string => {
      const file = install(s, path.join(dir, `syslog/${s}/gdrgate-${s}.sh`), false);
      conf(path.join(dir, `syslog/${s}/gdrgate-${s}.conf`), conf2);
      return file;
    };
    reset();
    t.equal(run(at('prolog'), { ...PROLOG_ENV, RC: 'kill' }).code, 0);
    t.same(lines(), ['-t|gdrgate|-p|daemon.err|--|gdrgate prolog: /bin/sh ended without a verdict (killed by signal 9); not failing the prolog (job 42)|']);
    reset();
    t.equal(run(at('epilog'), { ...PROLOG_ENV, RC: '3' }).code, 0);
    t.same(lines(), ['-t|gdrgate|-p|daemon.err|--|gdrgate epilog: gdrgate exited 3; not failing the Epilog (job 42)|']);
    // The TaskProlog: said by the task that judged; the view's later tasks print the kept answer and say nothing.
    const state = path.join(dir, 'syslog/state');
    mkdirSync(path.join(state, 'job-42'), { recursive: true, mode: 0o700 });
    const task = at('taskprolog');
    conf(path.join(dir, 'syslog/taskprolog/gdrgate-taskprolog.conf'), `${conf2}STATE=${state}\n`);
    reset();
    const env = { SLURM_JOB_ID: '42', SLURM_STEP_ID: '0', SLURM_SCRIPT_CONTEXT: 'prolog_task', RC: '3' };
    const first = run(task, { ...env, SLURM_LOCALID: '0' });
    const later = run(task, { ...env, SLURM_LOCALID: '1' });
    t.same([first.code, later.code], [0, 0]);
    t.same(lines(), ['-t|gdrgate|-p|user.err|--|gdrgate taskprolog: gdrgate exited 3; letting the task run (job 42)|']);
    // Nothing said on a passing run; nothing at all with LOGGER empty.
    reset();
    t.equal(run(at('prolog'), { ...PROLOG_ENV, RC: '0' }).code, 0);
    conf(path.join(dir, 'syslog/prolog/gdrgate-prolog.conf'), `${base}LOGGER=\n`);
    t.equal(run(path.join(dir, 'syslog/prolog/gdrgate-prolog.sh'), { ...PROLOG_ENV, RC: 'kill' }).code, 0);
    t.same(lines(), []);
    // A logger that never returns (a wedged journal): the Prolog still ends, failing open (timeout 2 s).
    conf(path.join(dir, 'syslog/prolog/gdrgate-prolog.conf'), conf2);
    // (Its logger sleeps 30 s: a wrapper that waited for it would be killed at 20 s, code null.)
    const hung = run(path.join(dir, 'syslog/prolog/gdrgate-prolog.sh'), { ...PROLOG_ENV, RC: 'kill', HANG: '1' }, undefined, 20_000);
    t.same({ code: hung.code, stderr: hung.stderr }, { code: 0, stderr: 'gdrgate prolog: /bin/sh ended without a verdict (killed by signal 9); not failing the prolog\n' });
  });

  t.test('an untrusted settings file is said in the system log too (the TaskProlog: by local task 0 only)', async (t) => {
    const said = path.join(dir, 'syslog2/said');
    const logger = path.join(dir, 'syslog2/logger');
    mkdirSync(path.dirname(said), { recursive: true, mode: 0o755 });
    writeFileSync(logger, `#!/bin/sh\nprintf '%s|' "$@" >>${said}\necho >>${said}\n`, { mode: 0o755 });
    const fixed = path.join(etc, 'gdrgate-taskprolog.conf');
    conf(fixed, `${base}LOGGER=${logger}\n`, 0o666);
    const file = install('taskprolog', path.join(dir, 'syslog2/gdrgate-taskprolog.sh'));
    // The script's own default LOGGER is /usr/bin/logger: point it at the stand-in in the file itself.
    writeFileSync(file, readFileSync(file, 'utf8').replace(/^LOGGER=.*$/m, `LOGGER=${logger}`));
    conf(path.join(dir, 'syslog2/gdrgate-taskprolog.conf'), base);
    const env = { SLURM_JOB_ID: '42', SLURM_SCRIPT_CONTEXT: 'prolog_task' };
    run(file, { ...env, SLURM_LOCALID: '0' });
    run(file, { ...env, SLURM_LOCALID: '3' });
    const why = `gdrgate: not reading ${fixed}: want it a regular file and it, and every directory above where it lies, owned by root and writable by root only`;
    t.same(readFileSync(said, 'utf8').split('\n').filter(Boolean), [`-t|gdrgate|-p|user.warning|--|${why} (job 42)|`]);
    conf(fixed, `${base}CONFIG=/etc/fixed.json\nFAIL=1\n`);
  });

  // A logger that fails (no /dev/log: exit 1) or hangs (a wedged journal: timeout's 124) while a .conf's set -e still
  // holds (the settings loop: the fixed file read, the one beside refused): said, never the wrapper's status.
  t.test("a failing logger under a .conf's set -e does not end the wrapper: the node is not drained for it", async (t) => {
    const logger = path.join(dir, 'seterr/logger');
    mkdirSync(path.dirname(logger), { recursive: true, mode: 0o755 });
    writeFileSync(logger, '#!/bin/sh\nexit 1\n', { mode: 0o755 });
    const codes: Record<string, number | null> = {};
    for (const s of ['prolog', 'epilog', 'taskprolog'] as const) {
      const file = install(s, path.join(dir, `seterr/seterr-${s}.sh`));
      conf(path.join(etc, `seterr-${s}.conf`), `set -e\n${base}LOGGER=${logger}\n`);
      conf(path.join(dir, `seterr/seterr-${s}.conf`), 'CONFIG=/etc/beside.json\n', 0o666);
      codes[s] = run(file, { ...PROLOG_ENV, RC: '0' }).code;
    }
    t.same(codes, { prolog: 0, epilog: 0, taskprolog: 0 });
  });

  // The real Node, with a program that never reaches gdrgate's code: what each exit is, and that the Prolog fails open.
  t.test("Node's own exits are no verdict: a missing, cut or empty program fails open, said; the real program's verdict passes", async (t) => {
    const where = path.join(dir, 'realnode');
    mkdirSync(where, { recursive: true, mode: 0o755 });
    const program = readFileSync(path.join(REPO, 'dist/gdrgate.cjs'), 'utf8');
    // Cut just after an opening brace past its middle: never a whole program (at a statement's end, half of it ran and exited 0).
    writeFileSync(path.join(where, 'cut.cjs'), program.slice(0, program.indexOf('{', Math.floor(program.length / 2)) + 1));
    writeFileSync(path.join(where, 'empty.cjs'), '');
    const file = install('prolog', path.join(where, 'gdrgate-prolog.sh'), false);
    const said = (cli: string) => {
      conf(path.join(where, 'gdrgate-prolog.conf'), `NODE=${process.execPath}\nCLI=${cli}\nBLOB=\nAGENT=\nLOGGER=\nCONFIG=${path.join(where, 'none.json')}\n`);
      const r = run(file, PROLOG_ENV);
      return { code: r.code, last: r.stderr.trimEnd().split('\n').pop(), stdout: r.stdout, stderr: r.stderr };
    };
    const none = (why: string) => ({ code: 0, last: `gdrgate prolog: ${process.execPath} ended without a verdict (${why}); not failing the prolog` });
    const brief = (r: ReturnType<typeof said>) => ({ code: r.code, last: r.last });
    const refused = (cli: string) => ({ code: 0, last: `gdrgate prolog: not starting ${process.execPath} ${cli} (${cli} is missing): want each a regular file there, and it and every directory above where it lies owned by root and writable by root only; not failing the prolog` });
    t.same(brief(said(path.join(where, 'missing.cjs'))), refused(path.join(where, 'missing.cjs')), 'a missing program: not started');
    t.same(brief(said(path.join(where, 'cut.cjs'))), none('exit 1, not written by gdrgate'), 'a program cut short: a SyntaxError, exit 1');
    t.same(brief(said(path.join(where, 'empty.cjs'))), none('exit 0, not written by gdrgate'), 'an empty program: exit 0, nothing judged');
    // The real program, its config missing: gdrgate's own verdict (a config error is no drain: exit 0), written.
    const real = said(path.join(REPO, 'dist/gdrgate.cjs'));
    t.equal(real.code, 0);
    t.match(real.stdout.trimEnd().split('\n').pop(), /^gdrgate prolog node=vm job=42 result=config-error exit=0 \d+ms action=none$/);
    t.equal(real.stderr.includes('ended without a verdict'), false, 'the real program wrote its verdict');
  });
}
