// A wrapper's settings file (.conf) is shell that root sources: whatever it does while it is read (an IFS of its own, a
// command failing under its own set -e, set -u and a name never set, exit), the wrapper neither trusts what it must not
// nor ends with a status that drains the node; Node and the program are started only when root's alone; and an output
// whose reader left never ends a wrapper with SIGPIPE's 141.
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { scratchDir } from '../helpers/scratch.js';
import { PROLOG_ENV, SCRIPTS, wrapperKit } from './_wrap.js';

if (process.getuid?.() !== 0) {
  t.skip('wrapper settings faults: the wrappers read only root-owned settings files, so this runs as root', () => {});
} else {
  const dir = scratchDir('gdrgate-wrapconf-');
  const { etc, fake, base, install, conf, run } = wrapperKit(dir);
  const TASK_ENV = { SLURM_JOB_ID: '42', SLURM_SCRIPT_CONTEXT: 'prolog_task' };
  const args = { prolog: 'args: prolog --config', epilog: 'args: epilog --config', taskprolog: 'args: task --config' };
  const refused = (file: string) => `gdrgate: not reading ${file}: want it a regular file and it, and every directory above where it lies, owned by root and writable by root only\n`;

  // Others may write the directory, and the .conf in it: a .conf there must never be read, whatever IFS root's own set.
  const open = path.join(dir, 'open');
  mkdirSync(open, { mode: 0o777 });
  chmodSync(open, 0o777);

  t.test("an IFS set by root's .conf does not make another's .conf or blob trusted", async (t) => {
    for (const ifs of ['IFS=,', "IFS=''", 'IFS=0:']) {
      const file = install('prolog', path.join(open, 'gdrgate-prolog.sh'));
      conf(path.join(etc, 'gdrgate-prolog.conf'), `${ifs}\n${base}CONFIG=/etc/fixed.json\nLOGGER=\n`);
      conf(path.join(open, 'gdrgate-prolog.conf'), 'CONFIG=/etc/theirs.json\n', 0o666);
      const r = run(file, PROLOG_ENV);
      t.same(r, { code: 0, stdout: `${args.prolog} /etc/fixed.json\n`, stderr: refused(path.join(open, 'gdrgate-prolog.conf')) }, ifs);
      // A blob others may write, named by root's .conf: never handed to Node (the plain program runs).
      writeFileSync(path.join(open, 'gate.blob'), 'blob\n', { mode: 0o666 });
      chmodSync(path.join(open, 'gate.blob'), 0o666);
      conf(path.join(etc, 'gdrgate-prolog.conf'), `${ifs}\n${base}BLOB=${path.join(open, 'gate.blob')}\nLOGGER=\n`);
      rmSync(path.join(open, 'gdrgate-prolog.conf'));
      t.same(run(file, PROLOG_ENV), { code: 0, stdout: `${args.prolog} /etc/gdrgate/config.json\n`, stderr: '' }, `${ifs}: the blob`);
    }
  });

  t.test("a command failing under the .conf's own set -e: the whole .conf is read, the wrapper runs", async (t) => {
    const got: Record<string, unknown> = {};
    for (const s of SCRIPTS) {
      const file = install(s, path.join(dir, `errexit/gdrgate-${s}.sh`));
      // The shell idiom that ends a script under set -e when the test fails: the line after it must still be read.
      conf(path.join(dir, `errexit/gdrgate-${s}.conf`), `set -e\n${base}[ -x /nonexistent/node ] && NODE=/nonexistent/node\nfalse\nCONFIG=/etc/after.json\n`);
      const r = run(file, s === 'taskprolog' ? TASK_ENV : PROLOG_ENV);
      got[s] = { code: r.code, stdout: r.stdout };
    }
    t.same(got, Object.fromEntries(SCRIPTS.map((s) => [s, { code: 0, stdout: `${args[s]} /etc/after.json\n` }])));
  });

  t.test('a .conf that ends the script while it is read (set -u, exit, a fatal error) fails open, said', async (t) => {
    const cases = { 'set -u': 'set -u\nAGENT=$AGENT_DIR\n', exit: 'exit 3\n', 'fatal': 'x=${y:?no y}\n' };
    for (const [name, text] of Object.entries(cases))
      for (const s of SCRIPTS) {
        const file = install(s, path.join(dir, `ended/gdrgate-${s}.sh`));
        const at = path.join(dir, `ended/gdrgate-${s}.conf`);
        conf(at, `${base}LOGGER=\n${text}`);
        const r = run(file, s === 'taskprolog' ? TASK_ENV : PROLOG_ENV);
        const last = r.stderr.trimEnd().split('\n').pop();
        const rc = name === 'exit' ? 3 : 1;
        t.same({ code: r.code, stdout: r.stdout, last }, { code: 0, stdout: '', last: `gdrgate: ${at} ended gdrgate-${s}.sh (exit ${rc}) while its settings were read; not failing it` }, `${name}: ${s}`);
      }
  });

  t.test("Node and the program are started only when root's alone: else not started, said, and the hook fails open", async (t) => {
    const theirs = path.join(open, 'cli.sh');
    copyFileSync(fake, theirs);
    chmodSync(theirs, 0o755);
    const writable = path.join(dir, 'cli-666.sh');
    copyFileSync(fake, writable);
    chmodSync(writable, 0o666);
    for (const s of ['prolog', 'epilog'] as const)
      for (const cli of [theirs, writable, path.join(dir, 'missing.sh')]) {
        const file = install(s, path.join(dir, `cli/gdrgate-${s}.sh`));
        conf(path.join(dir, `cli/gdrgate-${s}.conf`), `${base}CLI=${cli}\nLOGGER=\n`);
        const hook = s === 'prolog' ? 'prolog' : 'Epilog';
        const bad = cli.endsWith('missing.sh') ? `${cli} is missing` : `${cli}, or a directory above where it lies, is not root's alone or not a regular file`;
        const why = `gdrgate ${s}: not starting /bin/sh ${cli} (${bad}): want each a regular file there, and it and every directory above where it lies owned by root and writable by root only; not failing the ${hook}\n`;
        t.same(run(file, { ...PROLOG_ENV, RC: '1' }), { code: 0, stdout: '', stderr: why }, `${s}: ${path.basename(cli)}`);
      }
  });

  // A FIFO nobody writes where a file is read (a .conf sourced, a program started): its open would wait for ever, and
  // the hook's deadline with it. Root's alone, it is still not a file: not read, not started, said.
  t.test('a FIFO as the settings file or as the program: passed over at once, said', async (t) => {
    const fifo = (at: string): string => {
      rmSync(at, { force: true });
      t.equal(spawnSync('/usr/bin/mkfifo', ['-m', '644', at]).status, 0);
      return at;
    };
    const got: Record<string, unknown> = {};
    const want: Record<string, unknown> = {};
    for (const s of SCRIPTS) {
      const file = install(s, path.join(dir, `fifo/gdrgate-${s}.sh`));
      conf(path.join(etc, `gdrgate-${s}.conf`), `${base}CONFIG=/etc/fixed.json\nLOGGER=\n`);
      const beside = fifo(path.join(dir, `fifo/gdrgate-${s}.conf`));
      const r = run(file, s === 'taskprolog' ? TASK_ENV : PROLOG_ENV, undefined, 20_000);
      got[`${s}: .conf`] = r;
      want[`${s}: .conf`] = { code: 0, stdout: `${args[s]} /etc/fixed.json\n`, stderr: refused(beside) };
      rmSync(path.join(etc, `gdrgate-${s}.conf`));
      if (s === 'taskprolog') continue;
      const cli = fifo(path.join(dir, `fifo/cli-${s}.sh`));
      rmSync(beside);
      conf(beside, `${base}CLI=${cli}\nLOGGER=\n`);
      got[`${s}: CLI`] = run(file, PROLOG_ENV, undefined, 20_000);
      const hook = s === 'prolog' ? 'prolog' : 'Epilog';
      want[`${s}: CLI`] = { code: 0, stdout: '', stderr: `gdrgate ${s}: not starting /bin/sh ${cli} (${cli}, or a directory above where it lies, is not root's alone or not a regular file): want each a regular file there, and it and every directory above where it lies owned by root and writable by root only; not failing the ${hook}\n` };
    }
    t.same(got, want);
  });

  t.test("an output whose reader left: the wrapper still fails open (never SIGPIPE's 141)", async (t) => {
    for (const s of ['prolog', 'epilog'] as const) {
      const file = install(s, path.join(dir, `pipe/gdrgate-${s}.sh`));
      conf(path.join(dir, `pipe/gdrgate-${s}.conf`), `${base}LOGGER=\n`);
      // fd 5: a FIFO's writing end whose only reader (fd 4) was closed; the wrapper's stdout and stderr are it.
      const script = `cd ${path.join(dir, 'pipe')} && rm -f p && /usr/bin/mkfifo p && exec 4<>p 5>p && exec 4<&- && { ${file} >&5 2>&5; echo "rc=$?"; }`;
      const r = spawnSync('/bin/bash', ['-c', script], { encoding: 'utf8', env: { ...PROLOG_ENV, RC: 'kill' }, timeout: 60_000 });
      t.equal(r.stdout, 'rc=0\n', s);
    }
  });

  // A .conf saved with CRLF line ends (edited on another system): each value read ends with a carriage return, and
  // NODE=/bin/sh\r is no file, so the hook would never judge (fail open on every job). The values the admin wrote hold.
  t.test('a .conf with CRLF line ends: its values, less the carriage return, hold', async (t) => {
    const got: Record<string, unknown> = {};
    for (const s of SCRIPTS) {
      const file = install(s, path.join(dir, `crlf/gdrgate-${s}.sh`));
      const text = `${base}CONFIG=/etc/crlf.json\nLOGGER=\nHARD_TIMEOUT=30\n`;
      conf(path.join(dir, `crlf/gdrgate-${s}.conf`), text.replaceAll('\n', '\r\n'));
      got[s] = run(file, s === 'taskprolog' ? TASK_ENV : PROLOG_ENV);
    }
    t.same(got, Object.fromEntries(SCRIPTS.map((s) => [s, { code: 0, stdout: `${args[s]} /etc/crlf.json\n`, stderr: '' }])));
  });
}
