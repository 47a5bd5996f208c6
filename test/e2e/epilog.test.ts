// End to end: the real gate (dist/cli.js through slurm/epilog.sh) as the Epilog of a real single-node Slurm
// (test/e2e/sandbox): jobs end, the epilog records bandwidth samples (the probe stand-ins of test/fixtures/probe-bin,
// which print real captures), `gdrgate samples` shows them, and a degraded series drains the node with a
// `gdrgate: bw-…` reason, judged only by what Slurm reports. Runs when CI is set or GDRGATE_E2E=1, as root.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bin, twoRail } from '../epilog/_env.js';
import { buildTree } from '../gen/sysfs-tree.js';
import { cleanEnv, gateConf, installWrapper, REPO, run, runOrSkip, sandbox, secs, slurmClients, snapshotBuild, waitFor, type Ran } from './_sandbox.js';

const PORT = 7950; // slurmctld; slurmd 7951: apart from the other sandboxes that run in parallel

await runOrSkip(t, 'epilog', e2e);

async function e2e(): Promise<void> {
  t.setTimeout(240_000);
  if (!existsSync(join(REPO, 'dist/cli.js'))) return void t.fail('dist/cli.js is missing: build first (npm run build)');
  const sb = sandbox(t, { prefix: '/tmp/gdrgate-e2e-epilog-', port: PORT });
  const { WORK, CONF, CONFIG, BASELINE, LOG } = sb;
  const PROM = join(WORK, 'gdrgate.prom');
  const WRAPPER = join(WORK, 'gdrgate-epilog.sh');
  const CLI = snapshotBuild(WORK);
  const TREE = join(WORK, 'tree');
  await buildTree(TREE, twoRail(1)); // GPU 0000:41:00.0 and mlx5_0 on one host bridge
  mkdirSync(join(WORK, 'jobs'));

  const writeConfig = (variant: string): void => {
    const probes = { tools: { ibWriteBw: bin(`ib_write_bw-${variant}`), nvbandwidth: bin('nvbandwidth') }, sampling: {}, nvbandwidth: { testcases: ['host_to_device_memcpy_ce'] }, promFile: PROM, capture: { runs: 2 } };
    const cfg = { baseline: BASELINE, root: TREE, scontrol: '/usr/bin/scontrol', logFile: LOG, stateDir: join(WORK, 'run'), spool: join(WORK, 'spool'), probes };
    writeFileSync(`${CONFIG}.tmp`, JSON.stringify(cfg, null, 2));
    renameSync(`${CONFIG}.tmp`, CONFIG); // a running epilog never sees half a file
  };
  const gdrgate = (args: readonly string[]): Ran => run(process.execPath, [CLI, ...args], { env: cleanEnv({}), timeoutMs: 60_000 });
  writeConfig('healthy');
  const cap = gdrgate(['baseline', 'capture', '--root', TREE, '--class', 'sandbox', '--match', '*', '--with-probes', '--config', CONFIG]);
  t.equal(cap.status, 0, 'baseline capture --with-probes', { stderr: cap.stderr });
  writeFileSync(BASELINE, cap.stdout);
  installWrapper('epilog', WRAPPER, gateConf(CLI, CONFIG));

  const t1 = performance.now();
  const up = sb.start({ SANDBOX_PROLOG_FLAGS: '', SANDBOX_CRED_EXPIRE: '5', GATE_EPILOG: WRAPPER });
  if (up.status !== 0) return void t.fail('start.sh brought the sandbox up', { stderr: up.stderr.slice(-3000) });
  const node = up.node;
  t.comment(`sandbox up in ${secs(t1)}: node ${node}, port ${PORT}`);
  const { slurm, reason, nodeFlags: flags } = slurmClients(CONF, node, join(WORK, 'jobs'));
  const epilogLine = (job: string): Record<string, unknown> | undefined =>
    (existsSync(LOG) ? readFileSync(LOG, 'utf8') : '').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === 'gdrgate epilog' && l.job === job);
  /** One job to its end, and its Epilog to its end (the node leaves COMPLETING). */
  const job = async (): Promise<string> => {
    const r = slurm('sbatch', ['-W', '--parsable', '-o', '/dev/null', '-J', 'e2e-epilog', '--wrap', 'true'], 60_000);
    if (r.status !== 0) throw new Error(`sbatch failed: ${r.stderr}`);
    const id = r.stdout.trim().split(';')[0]!;
    const done = await waitFor(() => [flags(), epilogLine(id)] as const, ([f, l]) => !f.includes('COMPLETING') && l !== undefined, 60_000);
    if (!done.ok) throw new Error(`job ${id}: epilog did not finish (node ${done.value[0]})`);
    return id;
  };

  await t.test('healthy jobs: the epilog records samples, node stays idle', async (t) => {
    const ids = [await job(), await job(), await job()];
    for (const id of ids) t.match(epilogLine(id), { probes: /^ran samples=3$/, result: /^healthy$/, exitCode: 0 }, `job ${id}: 3 samples, healthy`);
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
    t.match(epilogLine(first), { result: /^healthy$/, exitCode: 0 }, `job ${first}: one slow sample is an outlier`);
    t.equal(reason(), 'none', 'not drained');
    await job();
    const third = await job();
    const drained = await waitFor(reason, (r) => r.startsWith('gdrgate:'), 30_000);
    t.comment(`sinfo %E: ${drained.value}`);
    t.match(drained.value, new RegExp(`^gdrgate: bw-gpu-path mlx5_0/0000:41:00.0 p50 10.5 Gb/s over 5 \\(want >= [0-9.]+ Gb/s\\) job=${third}$`));
    const r = slurm('sinfo', ['-R', '-h', '-n', node]).stdout;
    t.comment(`sinfo -R: ${r.trimEnd()}`);
    t.match(r, /^gdrgate: bw-gpu-path\s/, 'sinfo -R (20 characters) says gdrgate: bw-gpu-path');
    t.match(flags(), /DRAIN/, `scontrol: State=${flags()}`);
    t.match(epilogLine(third), { result: /^unhealthy$/, exitCode: 1, action: /^drained$/ });
    if (existsSync('/usr/bin/promtool')) t.equal(spawnSync('/usr/bin/promtool', ['check', 'metrics'], { input: readFileSync(PROM) }).status, 0, 'the textfile the epilog wrote passes promtool');
  });
}
