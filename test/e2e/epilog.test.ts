// End to end: the real gate (dist/cli.js through slurm/epilog.sh) as the Epilog of a real single-node Slurm
// (test/e2e/sandbox): jobs end, the epilog records bandwidth samples (the probe stand-ins of test/fixtures/probe-bin,
// which print real captures), `gdrgate samples` shows them, and a degraded series drains the node with a
// `gdrgate: bw-…` reason, judged only by what Slurm reports. Runs when CI is set or GDRGATE_E2E=1, as root.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { bin, twoRail } from '../epilog/_env.js';
import { buildTree } from '../gen/sysfs-tree.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const PORT = 7950; // slurmctld; slurmd 7951: apart from the other sandboxes that run in parallel
const T0 = performance.now();
const secs = (from: number): string => `${((performance.now() - from) / 1000).toFixed(1)} s`;

interface Ran {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}
/** No shell, always under a timeout (sinfo hangs ~60 s when slurmctld is gone). */
function run(file: string, args: readonly string[], env: NodeJS.ProcessEnv, timeoutMs = 20_000, cwd = '/'): Ran {
  const r = spawnSync(file, args, { env, cwd, timeout: timeoutMs, killSignal: 'SIGKILL', encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  return { status: r.status, stdout: r.stdout ?? '', stderr: (r.stderr ?? '') + (r.error ? `\n[spawn: ${r.error.message}]` : '') };
}
function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^(SLURM_|SANDBOX_|GATE_|GDRGATE_CONFIG$)/.test(k)) env[k] = v;
  return { ...env, ...extra };
}
async function waitFor<T>(probe: () => T, ok: (v: T) => boolean, timeoutMs: number): Promise<{ ok: boolean; value: T }> {
  const t0 = performance.now();
  let value = probe();
  while (!ok(value) && performance.now() - t0 < timeoutMs) {
    await sleep(250);
    value = probe();
  }
  return { ok: ok(value), value };
}

const enabled = !!process.env.CI || process.env.GDRGATE_E2E === '1';
if (!enabled || process.getuid?.() !== 0) {
  t.skip(`epilog e2e skipped: ${!enabled ? 'set GDRGATE_E2E=1 (or CI) to run it' : 'it must run as root'} — see test/e2e/README.md`, () => {});
} else {
  await e2e();
}

async function e2e(): Promise<void> {
  t.setTimeout(240_000);
  if (!existsSync(join(REPO, 'dist/cli.js'))) return void t.fail('dist/cli.js is missing: build first (npm run build)');
  const WORK = mkdtempSync('/tmp/gdrgate-e2e-epilog-');
  chmodSync(WORK, 0o755); // munged (munge user) must reach DIR/munge
  const DIR = join(WORK, 'slurm');
  const CONFIG = join(WORK, 'gdrgate.json');
  const BASELINE = join(WORK, 'baseline.json');
  const LOG = join(WORK, 'gdrgate.log');
  const PROM = join(WORK, 'gdrgate.prom');
  const WRAPPER = join(WORK, 'gdrgate-epilog.sh');
  // A snapshot of the build, so a rebuild in the checkout cannot hand slurmd a half-written dist.
  const PKG = join(WORK, 'gdrgate');
  for (const d of ['dist', 'schemas']) cpSync(join(REPO, d), join(PKG, d), { recursive: true, verbatimSymlinks: true });
  copyFileSync(join(REPO, 'package.json'), join(PKG, 'package.json'));
  symlinkSync(join(REPO, 'node_modules'), join(PKG, 'node_modules'));
  const CLI = join(PKG, 'dist/cli.js');
  const TREE = join(WORK, 'tree');
  await buildTree(TREE, twoRail(1)); // GPU 0000:41:00.0 and mlx5_0 on one host bridge
  mkdirSync(join(WORK, 'jobs'));

  let stopped = false;
  const stop = (): void => {
    if (!stopped) run('/bin/bash', [join(REPO, 'test/e2e/sandbox/stop.sh'), DIR], cleanEnv({}), 60_000);
    stopped = true;
  };
  process.once('exit', stop);
  t.teardown(() => {
    stop();
    if (t.passing()) rmSync(WORK, { recursive: true, force: true });
    else t.comment(`kept for inspection: ${WORK} (Slurm logs in ${DIR}/log, gate log ${LOG})`);
    t.comment(`total wall time ${secs(T0)}`);
  });

  const writeConfig = (variant: string): void => {
    const probes = { tools: { ibWriteBw: bin(`ib_write_bw-${variant}`), nvbandwidth: bin('nvbandwidth') }, sampling: {}, nvbandwidth: { testcases: ['host_to_device_memcpy_ce'] }, promFile: PROM, capture: { runs: 2 } };
    const cfg = { baseline: BASELINE, root: TREE, scontrol: '/usr/bin/scontrol', logFile: LOG, stateDir: join(WORK, 'run'), spool: join(WORK, 'spool'), probes };
    writeFileSync(`${CONFIG}.tmp`, JSON.stringify(cfg, null, 2));
    renameSync(`${CONFIG}.tmp`, CONFIG); // a running epilog never sees half a file
  };
  const gdrgate = (args: readonly string[]): Ran => run(process.execPath, [CLI, ...args], cleanEnv({}), 60_000);
  writeConfig('healthy');
  const cap = gdrgate(['baseline', 'capture', '--root', TREE, '--class', 'sandbox', '--match', '*', '--with-probes', '--config', CONFIG]);
  t.equal(cap.status, 0, 'baseline capture --with-probes', { stderr: cap.stderr });
  writeFileSync(BASELINE, cap.stdout);
  copyFileSync(join(REPO, 'slurm/epilog.sh'), WRAPPER);
  chmodSync(WRAPPER, 0o755);
  writeFileSync(join(WORK, 'gdrgate-epilog.conf'), `NODE=${process.execPath}\nCLI=${CLI}\nCONFIG=${CONFIG}\n`);

  const t1 = performance.now();
  const up = run('/bin/bash', [join(REPO, 'test/e2e/sandbox/start.sh'), DIR], cleanEnv({ SANDBOX_PORT: String(PORT), SANDBOX_PROLOG_FLAGS: '', SANDBOX_CRED_EXPIRE: '5', GATE_EPILOG: WRAPPER }), 240_000);
  if (up.status !== 0) return void t.fail('start.sh brought the sandbox up', { stderr: up.stderr.slice(-3000) });
  const node = up.stdout.trim().split('\n').pop()!.trim();
  t.comment(`sandbox up in ${secs(t1)}: node ${node}, port ${PORT}`);
  const env = cleanEnv({ SLURM_CONF: join(DIR, 'etc/slurm.conf') });
  const slurm = (cmd: string, args: readonly string[], ms = 20_000): Ran => run(`/usr/bin/${cmd}`, args, env, ms, join(WORK, 'jobs'));
  const flags = (): string => /(?:^| )State=(\S+)/.exec(slurm('scontrol', ['show', 'node', '-o', node]).stdout)?.[1] ?? '?';
  const reason = (): string => slurm('sinfo', ['-h', '-N', '-n', node, '-o', '%E']).stdout.trim();
  const epilogLine = (job: string): Record<string, unknown> | undefined =>
    (existsSync(LOG) ? readFileSync(LOG, 'utf8') : '').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === 'gdrgate epilog' && l.job === job);
  /** One job to its end, and its Epilog to its end (the node leaves COMPLETING). */
  const job = async (): Promise<string> => {
    const r = slurm('sbatch', ['-W', '--parsable', '-o', '/dev/null', '-J', 'e2e-epilog', '--wrap', 'true'], 60_000);
    if (r.status !== 0) throw new Error(`sbatch failed: ${r.stderr}`);
    const id = r.stdout.trim().split(';')[0]!;
    const done = await waitFor(() => [flags(), epilogLine(id)] as const, ([f, l]) => !f.includes('COMPLETING') && l !== undefined, 30_000);
    if (!done.ok) throw new Error(`job ${id}: epilog did not finish (node ${done.value[0]})`);
    return id;
  };

  await t.test('healthy jobs: the epilog records samples, node stays idle', async (t) => {
    const ids = [await job(), await job(), await job()];
    for (const id of ids) t.match(epilogLine(id), { probes: 'ran samples=3', result: 'healthy', exitCode: 0 }, `job ${id}: 3 samples, healthy`);
    t.match(flags(), /^IDLE$/, 'node IDLE');
    const s = gdrgate(['samples', '--config', CONFIG]);
    t.equal(s.status, 0);
    t.comment(`gdrgate samples:\n${s.stdout}`);
    t.match(s.stdout, /^ib-write-gpu\s+mlx5_0\s+0000:41:00.0\s+gpu->nic->gpu\s+[0-9a-f]{12}\s+Gb\/s\s+all\s+3\s+23.03/m);
    t.match(s.stdout, /^ib-write-host\s+mlx5_0\s+-\s+host->nic->host\s+[0-9a-f]{12}\s+Gb\/s\s+all\s+3\s+92.56/m);
    t.match(s.stdout, /^nvbw-h2d\s+-\s+0000:41:00.0\s+h2d\s+[0-9a-f]{12}\s+GB\/s\s+all\s+3\s+25.17/m);
  });

  await t.test('GPU memory degraded: one slow job does not drain, a sustained series does, with a gdrgate: bw- reason', async (t) => {
    writeConfig('gpu-slow');
    const first = await job();
    t.match(epilogLine(first), { result: 'healthy', exitCode: 0 }, `job ${first}: one slow sample is an outlier`);
    t.equal(reason(), 'none', 'not drained');
    await job();
    const third = await job();
    const drained = await waitFor(reason, (r) => r.startsWith('gdrgate:'), 15_000);
    t.comment(`sinfo %E: ${drained.value}`);
    t.match(drained.value, new RegExp(`^gdrgate: bw-gpu-path mlx5_0/0000:41:00.0 p50 10.5 Gb/s over 5 \\(want >= [0-9.]+ Gb/s\\) job=${third}$`));
    const r = slurm('sinfo', ['-R', '-h', '-n', node]).stdout;
    t.comment(`sinfo -R: ${r.trimEnd()}`);
    t.match(r, /^gdrgate: bw-gpu-path\s/, 'sinfo -R (20 characters) says gdrgate: bw-gpu-path');
    t.match(flags(), /DRAIN/, `scontrol: State=${flags()}`);
    t.match(epilogLine(third), { result: 'unhealthy', exitCode: 1, action: 'drained' });
    if (existsSync('/usr/bin/promtool')) t.equal(spawnSync('/usr/bin/promtool', ['check', 'metrics'], { input: readFileSync(PROM) }).status, 0, 'the textfile the epilog wrote passes promtool');
  });
}
