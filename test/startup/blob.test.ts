// The gate's startup snapshot (dist/gate.blob, made by `gdrgate startup-snapshot`) as Slurm's wrapper runs it: the
// same verdicts, reports and drains as dist/cli.js, and slurm/prolog.sh falling back to the plain program (which
// says why in its log) when the blob cannot be used: refused by Node (exit 14), damaged (a signal), stale (the
// program changed since, exit 10) or not root's alone. Real runs on the bundled capture, with a recording scontrol.
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { breakLink, makeGateEnv, type GateEnv } from '../helpers/gate-env.js';
import { CLI, REPO } from '../helpers/paths.js';
import { sealBlob } from '../helpers/seal.js';
import { seal, SEAL_LENGTH } from '../../src/startup/blob-seal.js';

const BLOB = path.join(REPO, 'dist/gate.blob');
const JOB = { SLURMD_NODENAME: 'vm', SLURM_JOB_ID: '42', SLURM_JOB_UID: String(process.getuid!()), SLURM_JOB_GID: String(process.getgid!()) };
const clean = { PATH: '/usr/bin:/bin', ...JOB }; // no PATH games: what the wrapper gets from slurmd is even less

function viaBlob(blob: string, args: string[], env: Record<string, string> = JOB): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['--snapshot-blob', blob, ...args], { encoding: 'utf8', env, timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
const noMs = (s: string): string => s.replace(/ \d+ms /, ' <ms> ');
const runs = (e: GateEnv): { startup: string; msg: string; blobExit?: string }[] =>
  readFileSync(e.log, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { startup: string; msg: string; blobExit?: string });

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

t.test('from the blob, a failing prolog drains through scontrol', async (t) => {
  const e = makeGateEnv();
  breakLink(e.tree);
  const r = viaBlob(BLOB, ['prolog', '--config', e.config]);
  t.equal(r.code, 1);
  t.match(r.stdout, /action=drained/);
  t.same(e.drainCalls(), ['update nodename=vm state=drain reason=gdrgate: pcie-link 0000:00:06.0 Gen5 x8 (want Gen5 x16) job=42'], 'one drain, with the reason');
});

t.test('from the blob, a passing prolog writes the job state the TaskProlog reads', async (t) => {
  const e = makeGateEnv();
  const r = viaBlob(BLOB, ['prolog', '--config', e.config]);
  t.equal(r.code, 0, r.stderr);
  t.ok(existsSync(path.join(e.dir, 'run', 'job-42', 'prolog.json')), 'state written under stateDir');
  t.same(runs(e).filter((l) => l.msg !== 'gdrgate run'), [], 'nothing logged but the run line');
});

t.test('the blob is the whole program: another command, and a usage error, as dist/cli.js says them', async (t) => {
  const e = makeGateEnv();
  for (const args of [['check', '--root', e.tree], ['check', '--no-such-flag']]) {
    const a = viaBlob(BLOB, args);
    const b = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env: JOB, timeout: 60_000 });
    t.equal(a.code, b.status, `${args.join(' ')}: same exit (${b.status})`);
    t.equal(a.stdout, b.stdout, `${args.join(' ')}: same report`);
  }
});

t.test('slurm/prolog.sh: the blob when it can, the plain CLI when it cannot', async (t) => {
  const e = makeGateEnv();
  const wrapper = path.join(e.dir, 'gdrgate-prolog.sh');
  copyFileSync(path.join(REPO, 'slurm/prolog.sh'), wrapper);
  chmodSync(wrapper, 0o755);
  const wrap = (conf: string, cli = CLI): { code: number | null; stdout: string } => {
    writeFileSync(path.join(e.dir, 'gdrgate-prolog.conf'), `NODE=${process.execPath}\nCLI=${cli}\nCONFIG=${e.config}\n${conf}`);
    const r = spawnSync(wrapper, [], { encoding: 'utf8', env: clean, cwd: '/', timeout: 60_000 });
    return { code: r.status, stdout: r.stdout };
  };
  /** The last run's line, and the blob warning logged by that run (after the run before it). */
  const last = (): { startup: string; blobExit?: string; blob?: string; msg?: string } => {
    const all = runs(e);
    const i = all.findLastIndex((l) => l.msg === 'gdrgate run');
    const prev = all.slice(0, i).findLastIndex((l) => l.msg === 'gdrgate run');
    const warn = all.slice(prev + 1, i).find((l) => l.msg.startsWith('the startup snapshot '));
    return { startup: all[i]!.startup, ...(warn?.blobExit !== undefined ? { blobExit: warn.blobExit } : {}) };
  };
  /** The last run's blob warning whole: its file and its words. */
  const warned = (): { blob?: string; msg?: string } => {
    const all = runs(e) as { msg: string; blob?: string }[];
    const i = all.findLastIndex((l) => l.msg === 'gdrgate run');
    const w = all.slice(0, i).findLast((l) => l.msg.startsWith('the startup snapshot '));
    return { blob: w?.blob, msg: w?.msg };
  };

  t.equal(wrap('').code, 0);
  t.equal(last().startup, 'snapshot', 'default: gate.blob beside CLI');

  breakLink(e.tree);
  const broken = wrap('');
  t.equal(broken.code, 1, 'exit 1 from the blob passes through');
  t.equal(broken.stdout.match(/^gdrgate prolog node=/gm)?.length, 1, 'and the gate ran once, not again without the blob');

  // Another Node build's blob: here this blob with its header's Node version (offset 13, after the magic, the
  // snapshot type and the string's length) made another's, which Node refuses as it refuses a blob made elsewhere.
  const other = path.join(e.dir, 'other.blob');
  const bytes = readFileSync(BLOB);
  const at = bytes.indexOf(process.versions.node, 0, 'latin1');
  t.equal(at, 13, "the blob's header names the Node that made it");
  bytes.write(process.versions.node.replace(/\d$/, (d) => String((Number(d) + 1) % 10)), at, 'latin1');
  writeFileSync(other, bytes);
  t.equal(viaBlob(other, ['prolog', '--config', e.config]).code, 14, 'Node itself refuses that blob with exit 14');
  const r14 = wrap(`BLOB=${other}\n`);
  t.equal(r14.code, 1, 'the wrapper falls back: the plain CLI judges (still x8) and exits 1');
  t.same(last(), { startup: 'modules', blobExit: '14' }, 'and logs that the blob could not be used (exit 14)');

  // Cut short at its end (a byte, or its whole seal: what V8 reads is all there) or built by hand without a seal: its
  // main runs nothing of the gate, exit 11, and the plain CLI judges.
  const whole = readFileSync(BLOB);
  for (const [what, bytes] of [
    ['its last byte cut', whole.subarray(0, whole.length - 1)],
    ['its seal cut off', whole.subarray(0, whole.length - SEAL_LENGTH)],
    ['its seal naming another size', Buffer.concat([whole.subarray(0, whole.length - SEAL_LENGTH - 1), seal(whole.length - SEAL_LENGTH)])],
  ] as const) {
    const cut = path.join(e.dir, 'cut.blob');
    writeFileSync(cut, bytes);
    const v = viaBlob(cut, ['version']);
    t.same([v.code, v.stdout], [11, ''], `${what}: exit 11, nothing of the gate run`);
    t.equal(v.stderr.split(': ').slice(0, 2).join(': '), `gdrgate: the startup snapshot ${cut} cannot be used`, `${what}: said on stderr`);
    t.equal(wrap(`BLOB=${cut}\n`).code, 1, `${what}: the plain CLI judges (still x8)`);
    t.same(last(), { startup: 'modules', blobExit: '11' }, `${what}: and the log says why`);
  }

  const damaged = path.join(e.dir, 'damaged.blob');
  writeFileSync(damaged, readFileSync(BLOB).subarray(0, 1000));
  const rd = wrap(`BLOB=${damaged}\n`);
  t.equal(rd.code, 1, 'a damaged blob (Node dies on a signal): the plain CLI still judges');
  t.equal(last().startup, 'modules');
  t.ok(Number(last().blobExit ?? 0) > 128, `the signal's exit status is logged (${last().blobExit})`);

  // A blob of a program that changed since (an upgrade that could not remake it): stale, exit 10, never old code.
  const program = path.join(e.dir, 'program.cjs');
  copyFileSync(path.join(REPO, 'dist/gdrgate.cjs'), program);
  const staleBlob = path.join(e.dir, 'stale.blob');
  t.equal(spawnSync(process.execPath, ['--snapshot-blob', staleBlob, '--build-snapshot', program], { encoding: 'utf8' }).status, 0);
  sealBlob(staleBlob);
  t.equal(wrap(`BLOB=${staleBlob}\n`, program).code, 1, 'a fresh blob of that program judges');
  t.same(last(), { startup: 'snapshot' });
  // The same program on another inode, as a filesystem mounted anew gives it (cp -p: size and modification time kept).
  const moved = `${program}.new`;
  t.equal(spawnSync('/bin/cp', ['-p', program, moved]).status, 0);
  const ino = statSync(program).ino;
  renameSync(moved, program);
  t.not(statSync(program).ino, ino, 'another inode');
  t.equal(wrap(`BLOB=${staleBlob}\n`, program).code, 1, 'the same program on another inode: still the blob');
  t.same(last(), { startup: 'snapshot' }, 'not stale');
  // CLI= naming another program than the blob's (a hotfix an admin points to, the checkout's own dist/cli.js): the
  // blob would judge with its own program's code. Stale: CLI itself judges.
  t.equal(wrap(`BLOB=${staleBlob}\n`).code, 1, 'a blob of another program than CLI: the plain CLI judges');
  t.same(last(), { startup: 'modules', blobExit: '10' }, 'and logs that the blob is stale (exit 10)');
  const hotfix = path.join(e.dir, 'hotfix');
  mkdirSync(hotfix);
  const marked = path.join(hotfix, 'gdrgate.cjs');
  const text = readFileSync(program, 'utf8');
  t.equal(text.split('`gdrgate ${').length > 1, true, 'the report line is built in the bundle');
  writeFileSync(marked, text.replaceAll('`gdrgate ${', '`HOTFIX gdrgate ${'));
  const hot = wrap(`BLOB=${staleBlob}\n`, marked);
  t.same([hot.code, hot.stdout.split('\n')[0]!.split(' ').slice(0, 3)], [1, ['HOTFIX', 'gdrgate', 'prolog']], "CLI=another program: that program's report, never the blob's");
  t.same(last(), { startup: 'modules', blobExit: '10' });
  t.equal(wrap(`BLOB=${staleBlob}\n`, path.join(REPO, 'dist/cli.js')).code, 1);
  t.equal(viaBlob(BLOB, ['version'], { ...JOB, GDRGATE_CLI: path.join(REPO, 'dist/cli.js') }).code, 0, "the checkout's blob (of dist/gdrgate.cjs) serves dist/cli.js beside it: one build");
  writeFileSync(program, readFileSync(program, 'utf8') + '\n// changed\n');
  t.equal(wrap(`BLOB=${staleBlob}\n`, program).code, 1, 'once the program changed, the plain program judges');
  t.same(last(), { startup: 'modules', blobExit: '10' }, 'and logs that the blob is stale (exit 10)');
  t.equal(wrap(`BLOB=${path.join(e.dir, 'none.blob')}\n`).code, 1, 'BLOB naming no file: the plain program judges');
  t.same(last(), { startup: 'modules', blobExit: 'missing' }, 'and logs that there is no blob');

  // A blob another user could replace: never started, whatever it holds.
  const open = path.join(e.dir, 'open');
  mkdirSync(open, { mode: 0o777 });
  chmodSync(open, 0o777);
  copyFileSync(BLOB, path.join(open, 'gate.blob'));
  t.equal(wrap(`BLOB=${path.join(open, 'gate.blob')}\n`).code, 1);
  t.same(last(), { startup: 'modules', blobExit: 'untrusted' }, 'a blob in a directory anyone may write is not used');
  t.same(warned(), {
    blob: path.join(open, 'gate.blob'),
    msg: `the startup snapshot ${path.join(open, 'gate.blob')} could not be used (it, or a directory above it, is not root's alone); the gate ran without it. Remake it as root: gdrgate startup-snapshot`,
  }, 'the warning names the file');
  const link = path.join(e.dir, 'link.blob');
  symlinkSync(path.join(open, 'gate.blob'), link);
  t.equal(wrap(`BLOB=${link}\n`).code, 1);
  t.same(last(), { startup: 'modules', blobExit: 'untrusted' }, 'nor one reached through a link into such a directory');

  // Not a regular file: a directory, or a FIFO that nobody writes (Node's open of it would wait for ever, and the
  // Prolog's deadline with it). Never started; the plain program judges at once.
  const fifo = path.join(e.dir, 'fifo.blob');
  t.equal(spawnSync('/usr/bin/mkfifo', [fifo]).status, 0);
  for (const [what, file] of [['a FIFO', fifo], ['a directory', hotfix]] as const) {
    const r = wrap(`BLOB=${file}\n`);
    t.equal(r.code, 1, `BLOB ${what}: the plain program judges (not killed by the test's timeout)`);
    t.same(last(), { startup: 'modules', blobExit: 'notafile' }, `BLOB ${what}: logged`);
    t.equal(warned().msg, `the startup snapshot ${file} could not be used (it is not a regular file); the gate ran without it. Remake it as root: gdrgate startup-snapshot`);
  }

  t.equal(wrap('BLOB=\n').code, 1, 'BLOB= (empty): never a blob');
  t.same(last(), { startup: 'modules' });
  t.notOk('blobExit' in last(), 'and nothing to warn about');
});
