// FIFOs and links planted where the gate keeps its files must not hang or redirect it: the prolog with its log file,
// the epilog with its spool, stamp and findings file, `gdrgate samples` with its spool. Each runs as a child with a
// timeout, so a regression shows as a failed assertion, not a hung suite.
import t from 'tap';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CLI } from '../helpers/paths.js';
import { makeGateEnv } from '../helpers/gate-env.js';
import { healthy, probes } from '../epilog/_cli.js';

/** Far above a run's few hundred ms even on a loaded CI machine; a blocked open(2) never ends. */
const LIMIT_MS = 30_000;
const mkfifo = (p: string): void => void execFileSync('/usr/bin/mkfifo', [p]);

function run(args: string[], env: Record<string, string> = {}): { code: number | null; killed: boolean; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env: { ...process.env, ...env }, timeout: LIMIT_MS });
  return { code: r.status, killed: r.signal !== null, stdout: r.stdout, stderr: r.stderr };
}

t.test('a FIFO at logFile: the prolog logs to stderr with one warning and ends', async (t) => {
  const g = makeGateEnv();
  mkfifo(g.log);
  const r = run(['prolog', '--config', g.config], { SLURMD_NODENAME: 'vm', SLURM_JOB_ID: '42' });
  t.equal(r.killed, false, 'not hung in open(2)');
  t.equal(r.code, 0, r.stderr);
  t.equal(r.stderr.match(/cannot open log file/g)?.length, 1, 'one warning');
  t.equal(r.stderr.split('\n')[0], `gdrgate: cannot open log file: ${g.log} is not a regular file (a FIFO or socket); logging to stderr`);
  t.match(r.stderr, /^\{"level":30,"time":"[^"]+","tool":"gdrgate","pid":\d+,"mode":"prolog","node":"vm","job":"42","durationMs":\d+,"afterMs":\d+,"startup":"modules","result":"healthy","exitCode":0,"failedOpen":false,"reason":null,"action":"none","summary":\{"pass":11,"warn":0,"fail":0,"skip":5,"error":0\},"msg":"gdrgate run"\}$/m, "the run line went to stderr");
});

t.test('a link at logFile: never appended through', async (t) => {
  const g = makeGateEnv();
  const victim = path.join(g.dir, 'victim');
  writeFileSync(victim, 'precious\n');
  symlinkSync(victim, g.log);
  const r = run(['prolog', '--config', g.config], { SLURMD_NODENAME: 'vm', SLURM_JOB_ID: '42' });
  t.equal(r.code, 0, r.stderr);
  t.equal(r.stderr.split('\n')[0], `gdrgate: cannot open log file: ${g.log} is a symbolic link; logging to stderr`);
  t.equal(readFileSync(victim, 'utf8'), 'precious\n', 'target untouched');
});

t.test('FIFOs at the stamp, the spool and the findings file: the epilog ends, samples not written, exit 0', async (t) => {
  const e = await healthy(0);
  const prom = path.join(e.dir, 'gdrgate.prom');
  e.writeConfig(probes('healthy', { promFile: prom, sampling: { minIntervalS: 60 } }));
  mkdirSync(e.spool, { recursive: true });
  for (const f of ['probe-stamp.json', 'samples.jsonl', 'task-findings.jsonl']) mkfifo(path.join(e.spool, f));
  const r = run(['epilog', '--config', e.config], { SLURMD_NODENAME: 'gpu001', SLURM_JOB_ID: '7', SLURM_SCRIPT_CONTEXT: 'epilog_slurmd' });
  t.equal(r.killed, false, 'not hung');
  t.equal(r.code, 0, r.stdout + r.stderr);
  t.match(r.stdout, /^gdrgate epilog node=gpu001 job=7 view=none removed=false probes=ran samples=3 result=healthy exit=0 \d+ms action=none$/m);
  const log = readFileSync(e.log, 'utf8');
  const unwritten = log.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>).filter((o) => o.level === 50).map(({ time: _t, pid: _p, ...o }) => o);
  t.same(unwritten.map(({ writeErrors: _w, ...o }) => o), [{ level: 50, tool: 'gdrgate', node: 'gpu001', job: '7', msg: 'epilog: samples or textfile not written' }]);
  const fifo = path.join(e.spool, 'samples.jsonl');
  t.same(unwritten.map((o) => o.writeErrors), [[`spool ${e.spool}: EUNSAFE ${fifo} is not a regular file`, `textfile ${prom} not written: cannot read the spool ${e.spool}: ${fifo} is not a regular file`]]);
  // None of the spool could be read: no textfile from it (it would read as a fresh history of this run's samples with
  // nothing skipped), as gdrgate samples --prom refuses; the log says why.
  t.equal(existsSync(prom), false, 'no textfile from a spool that could not be read');
  const errs = log.trim().split('\n').map((l) => JSON.parse(l) as { writeErrors?: string[] }).flatMap((l) => l.writeErrors ?? []);
  t.equal(errs.find((w) => w.startsWith('textfile ')), `textfile ${prom} not written: cannot read the spool ${e.spool}: ${path.join(e.spool, 'samples.jsonl')} is not a regular file`);
});

t.test('gdrgate samples over a spool of FIFOs: none read, said, exit 2 (never an empty healthy spool); --prom into a shared directory refused', async (t) => {
  const e = await healthy(0);
  mkdirSync(e.spool, { recursive: true });
  for (const f of ['samples.1.jsonl', 'samples.jsonl', 'task-findings.jsonl']) mkfifo(path.join(e.spool, f));
  const r = run(['samples', '--spool', e.spool, '--window', '5']);
  t.equal(r.killed, false, 'not hung');
  const first = path.join(e.spool, 'samples.1.jsonl');
  t.same([r.code, r.stdout, r.stderr], [2, '', `gdrgate: cannot read the spool ${e.spool}: ${first} is not a regular file (+1 more)\n`]);
  const shared = path.join(e.dir, 'shared');
  mkdirSync(shared, { mode: 0o777 });
  execFileSync('/bin/chmod', ['0777', shared]);
  const empty = path.join(e.dir, 'empty-spool');
  mkdirSync(empty);
  const p = run(['samples', '--spool', empty, '--window', '5', '--prom', path.join(shared, 'gdrgate.prom')]);
  t.not(p.code, 0, 'refused');
  t.equal(p.stderr.split('\n')[0], `gdrgate: ${shared} is writable by anyone (mode 0777)`);
});
