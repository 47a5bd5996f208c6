// Hostile lines in files a capture root holds (gres.conf, /proc/<pid>/limits): parsed in time linear in their size, so a Prolog keeps its deadline, skips what it cannot read, and drains nothing.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { makeGateEnv } from '../helpers/gate-env.js';
import { CLI } from '../helpers/paths.js';
import { GRES_MAX_BYTES } from '../../src/inventory/placement.js';
import { logicalLines } from '../../src/parsers/slurm-syntax.js';

t.setTimeout(600_000);

/** The CLI as slurmd starts it, killed outright at 60 s (a SIGTERM would wait for a synchronous parse to end). */
const gate = (args: string[]) =>
  spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env: { ...process.env, SLURMD_NODENAME: 'vm', SLURM_JOB_ID: '42' }, timeout: 60_000, killSignal: 'SIGKILL' });

t.test('logicalLines: a run of backslashes not at the end of its line continues nothing', async (t) => {
  t.same(logicalLines('\\\\\\x\n'), [{ line: 1, body: '\\x' }, { line: 2, body: '' }]);
  t.same(logicalLines('a\\\\ \\ \nb\n'), [{ line: 1, body: 'a\\ b' }, { line: 3, body: '' }]);
  t.same(logicalLines('a\\\\\\\t\nb'), [{ line: 1, body: 'a\\b' }]);
});

t.test('gres.conf of one line of 256 KiB of backslashes: the Prolog ends within its deadline, job-placement skipped, no drain', async (t) => {
  const e = makeGateEnv();
  e.writeConfig({ deadlineMs: 20_000 });
  mkdirSync(path.join(e.tree, 'etc/slurm'), { recursive: true });
  writeFileSync(path.join(e.tree, 'etc/slurm/gres.conf'), '\\'.repeat(GRES_MAX_BYTES - 2) + '!\n');
  const r = gate(['prolog', '--config', e.config]);
  t.equal(r.status, 0, 'exited 0 (before the change the parse ran for minutes, past the deadline, until killed: no exit code)');
  t.equal(r.stdout.trim().replace(/ \d+ms /, ' Nms '), 'gdrgate prolog node=vm job=42 result=healthy exit=0 Nms action=none');
  const c = gate(['check', '--root', e.tree]);
  const skip = c.stdout.split('\n').find((l) => l.startsWith('SKIP    job-placement'));
  t.equal(skip?.slice(0, 110), 'SKIP    job-placement          /etc/slurm/gres.conf  gres.conf not usable: /etc/slurm/gres.conf: line 1: "\\\\\\\\', 'check --root: skipped, saying why');
  t.same(e.drainCalls(), [], 'no drain');
});

t.test('/proc/self/limits with a 1 MiB row of spaces: the Prolog ends within its deadline, memlock still judged, no drain', async (t) => {
  const e = makeGateEnv();
  e.writeConfig({ deadlineMs: 20_000 });
  const file = path.join(e.tree, 'proc/self/limits');
  writeFileSync(file, readFileSync(file, 'utf8') + 'Max ' + ' '.repeat(1 << 20) + 'x\n');
  const r = gate(['prolog', '--config', e.config]);
  t.equal(r.status, 0, 'exited 0 (before the change the parse ran on past the deadline until killed: no exit code)');
  t.equal(r.stdout.trim().replace(/ \d+ms /, ' Nms '), 'gdrgate prolog node=vm job=42 result=healthy exit=0 Nms action=none');
  const c = gate(['check', '--root', e.tree]);
  t.equal(c.stdout.split('\n').find((l) => l.startsWith('PASS    memlock-limit')), 'PASS    memlock-limit          self          memlock unlimited', 'the row that is no limit is passed over');
  t.same(e.drainCalls(), [], 'no drain');
});
