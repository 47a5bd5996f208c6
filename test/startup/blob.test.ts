// The gate's startup snapshot (dist/gate.blob) as Slurm's wrapper runs it: the same verdicts, reports and drains as
// dist/cli.js, the failure path's scontrol through dist/execa.cjs, and slurm/prolog.sh falling back to the plain
// CLI (which says so in its log) when this Node cannot start from the blob: another Node build's (exit 14), or a
// damaged file (a signal). Real runs of the built package on the bundled capture, with a recording scontrol.
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { breakLink, makeGateEnv, type GateEnv } from '../helpers/gate-env.js';
import { CLI, REPO } from '../helpers/paths.js';

const BLOB = path.join(REPO, 'dist/gate.blob');
const JOB = { SLURMD_NODENAME: 'vm', SLURM_JOB_ID: '42', SLURM_JOB_UID: String(process.getuid!()), SLURM_JOB_GID: String(process.getgid!()) };
const clean = { PATH: '/usr/bin:/bin', ...JOB }; // no PATH games: what the wrapper gets from slurmd is even less

function viaBlob(blob: string, args: string[], env: Record<string, string> = JOB): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['--snapshot-blob', blob, ...args], { encoding: 'utf8', env, timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
const noMs = (s: string): string => s.replace(/ \d+ms /, ' <ms> ');
const runs = (e: GateEnv): { startup: string; msg: string; blobExit?: number }[] =>
  readFileSync(e.log, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { startup: string; msg: string; blobExit?: number });

t.ok(existsSync(BLOB), 'npm run build made dist/gate.blob');

t.test('from the blob: the same report and exit as dist/cli.js, healthy and broken', async (t) => {
  const e = makeGateEnv();
  for (const label of ['healthy', 'GPU at x8']) {
    if (label !== 'healthy') breakLink(e.tree);
    const a = viaBlob(BLOB, ['prolog', '--config', e.config, '--dry-run']);
    const b = e.prolog(['--dry-run'], JOB);
    t.equal(a.code, b.code, `${label}: same exit (${b.code})`);
    t.equal(noMs(a.stdout), noMs(b.stdout), `${label}: same report`);
  }
  t.same(runs(e).map((r) => r.startup), ['snapshot', 'modules', 'snapshot', 'modules'], 'the log says how each run started');
});

t.test('from the blob, a failing prolog drains through scontrol (execa loaded from beside the blob)', async (t) => {
  const e = makeGateEnv();
  breakLink(e.tree);
  const r = viaBlob(BLOB, ['prolog', '--config', e.config]);
  t.equal(r.code, 1);
  t.match(r.stdout, /action=drained/);
  t.match(e.drainCalls(), [/update nodename=vm state=drain reason=gdrgate: pcie-link 0000:00:06\.0 Gen5 x8 \(want Gen5 x16\) job=42$/]);
});

t.test('from the blob, a passing prolog writes the job state the TaskProlog reads', async (t) => {
  const e = makeGateEnv();
  const r = viaBlob(BLOB, ['prolog', '--config', e.config]);
  t.equal(r.code, 0, r.stderr);
  t.ok(existsSync(path.join(e.dir, 'run', 'job-42', 'prolog.json')), 'state written under stateDir');
  t.same(runs(e).filter((l) => l.msg !== 'gdrgate run'), [], 'nothing logged but the run line');
});

t.test('the blob runs the gate only: other commands are refused with a usage error', async (t) => {
  const r = viaBlob(BLOB, ['check', '--root', '/']);
  t.equal(r.code, 2);
  t.match(r.stderr, /startup snapshot runs only `prolog\|health/);
});

t.test('slurm/prolog.sh: the blob when it can, the plain CLI when it cannot', async (t) => {
  const e = makeGateEnv();
  const wrapper = path.join(e.dir, 'gdrgate-prolog.sh');
  copyFileSync(path.join(REPO, 'slurm/prolog.sh'), wrapper);
  chmodSync(wrapper, 0o755);
  const wrap = (conf: string): { code: number | null; stdout: string } => {
    writeFileSync(path.join(e.dir, 'gdrgate-prolog.conf'), `NODE=${process.execPath}\nCLI=${CLI}\nCONFIG=${e.config}\n${conf}`);
    const r = spawnSync(wrapper, [], { encoding: 'utf8', env: clean, cwd: '/', timeout: 60_000 });
    return { code: r.status, stdout: r.stdout };
  };
  /** The last run's line, and the blob warning logged by that run (after the run before it). */
  const last = (): { startup: string; blobExit?: number } => {
    const all = runs(e);
    const i = all.findLastIndex((l) => l.msg === 'gdrgate run');
    const prev = all.slice(0, i).findLastIndex((l) => l.msg === 'gdrgate run');
    const warn = all.slice(prev + 1, i).find((l) => l.msg.startsWith('dist/gate.blob could not be used'));
    return { startup: all[i]!.startup, ...(warn?.blobExit !== undefined ? { blobExit: warn.blobExit } : {}) };
  };

  t.equal(wrap('').code, 0);
  t.equal(last().startup, 'snapshot', 'default: gate.blob beside CLI');

  breakLink(e.tree);
  const broken = wrap('');
  t.equal(broken.code, 1, 'exit 1 from the blob passes through');
  t.equal(broken.stdout.match(/^gdrgate prolog node=/gm)?.length, 1, 'and the gate ran once, not again without the blob');

  // Another Node build's blob: here, one made with another V8 configuration, which Node refuses the same way (exit 14).
  const other = path.join(e.dir, 'other.blob');
  const made = spawnSync(process.execPath, ['--max-semi-space-size=2', '--snapshot-blob', other, '--build-snapshot', path.join(REPO, 'dist/gate-snapshot.cjs')], { encoding: 'utf8' });
  t.equal(made.status, 0, made.stderr);
  t.equal(viaBlob(other, ['prolog', '--config', e.config]).code, 14, 'Node itself refuses that blob with exit 14');
  const r14 = wrap(`BLOB=${other}\n`);
  t.equal(r14.code, 1, 'the wrapper falls back: the plain CLI judges (still x8) and exits 1');
  t.match(last(), { startup: /^modules$/, blobExit: 14 }, 'and logs that the blob could not be used (exit 14)');

  const damaged = path.join(e.dir, 'damaged.blob');
  writeFileSync(damaged, readFileSync(BLOB).subarray(0, 1000));
  const rd = wrap(`BLOB=${damaged}\n`);
  t.equal(rd.code, 1, 'a damaged blob (Node dies on a signal): the plain CLI still judges');
  t.equal(last().startup, 'modules');
  t.ok((last().blobExit ?? 0) > 128, `the signal's exit status is logged (${last().blobExit})`);

  t.equal(wrap('BLOB=\n').code, 1, 'BLOB= (empty): never a blob');
  t.match(last(), { startup: /^modules$/ });
  t.notOk('blobExit' in last(), 'and nothing to warn about');
});
