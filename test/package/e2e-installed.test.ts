// The installed package as the Prolog of a real single-node Slurm (test/e2e/sandbox, through test/e2e/_sandbox.ts):
// slurmd runs /usr/libexec/gdrgate/prolog.sh, which runs /usr/sbin/gdrgate; the test's own calls are /usr/sbin/gdrgate
// too. Nothing from the checkout runs but the sandbox scripts and the example tree's data. Cases: a healthy job; a
// GPU trained to x8 drains with our reason and the job is requeued held; an admin's reason is kept; resume; the
// agent answering. Installs the .deb (and purges it after); GDRGATE_INSTALL_TEST=1, root.
import t, { type Test } from 'tap';
import { spawn } from 'node:child_process';
import { cpSync, existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { trainGpuTo } from '../helpers/h200-link.js';
import { HELD, REPO, freePortPair, run, sandbox, slurmClients, waitFor } from '../e2e/_sandbox.js';
import { artifacts, dpkg, installScope, missing } from './_artifacts.js';

const PROLOG = '/usr/libexec/gdrgate/prolog.sh';
const GDRGATE = '/usr/sbin/gdrgate';
const why =
  process.env.GDRGATE_INSTALL_TEST !== '1'
    ? 'set GDRGATE_INSTALL_TEST=1 to run it (it dpkg-installs gdrgate and starts a Slurm sandbox; .ci/run runs it in its own step)'
    : process.getuid?.() !== 0
      ? 'it must run as root'
      : missing(['dpkg']);
if (why) t.skip(`installed e2e skipped: ${why}`, () => {});
else await e2e();

async function e2e(): Promise<void> {
  t.setTimeout(480_000);
  installScope((fn) => t.teardown(fn));
  const i = dpkg('-i', artifacts().deb);
  if (i.status !== 0) throw new Error(`dpkg -i: ${i.stderr}`);
  const sb = sandbox(t, { prefix: '/tmp/gdrgate-e2e-installed-', port: await freePortPair() });
  const { WORK, CONF, CONFIG, BASELINE, LOG } = sb;
  const HEALTHY = join(WORK, 'tree-healthy');
  const X8 = join(WORK, 'tree-x8');
  for (const tree of [HEALTHY, X8]) cpSync(join(REPO, 'examples/h200-vm'), tree, { recursive: true, verbatimSymlinks: true });
  trainGpuTo(X8, 8);
  // The installed wrapper's settings, beside it, as an admin writes them: this sandbox's config, and the agent's dir.
  const AGENT_DIR = join(WORK, 'agent');
  const confs = ['prolog', 'health'].map((w) => `/usr/libexec/gdrgate/${w}.conf`);
  const wrapperConf = (agent: boolean) => confs.forEach((c) => writeFileSync(c, `CONFIG=${CONFIG}\nAGENT=${agent ? AGENT_DIR : ''}\nAGENT_TIMEOUT=30\n`));
  wrapperConf(false);
  t.teardown(() => confs.forEach((c) => rmSync(c, { force: true })));
  const writeConfig = (over: Record<string, unknown> = {}) => {
    writeFileSync(`${CONFIG}.tmp`, JSON.stringify({ baseline: BASELINE, root: HEALTHY, scontrol: '/usr/bin/scontrol', logFile: LOG, stateDir: join(WORK, 'run'), spool: join(WORK, 'spool'), ...over }));
    renameSync(`${CONFIG}.tmp`, CONFIG);
  };
  const cap = run(GDRGATE, ['baseline', 'capture', '--root', HEALTHY, '--class', 'sandbox', '--match', '*', '--platform', 'virtualized'], { env: {} });
  t.equal(cap.status, 0, 'baseline captured by /usr/sbin/gdrgate', { stderr: cap.stderr });
  writeFileSync(BASELINE, cap.stdout);
  writeConfig();

  const started = sb.start({ SANDBOX_CRED_EXPIRE: '5', SANDBOX_PROLOG_FLAGS: 'Alloc', GATE_PROLOG: PROLOG });
  if (started.status !== 0) {
    t.fail('start.sh brought the sandbox up', { stderr: started.stderr.slice(-4000) });
    return;
  }
  const node = started.node;
  const { env, slurm, state, reason, waitIdle } = slurmClients(CONF, node, WORK);
  // Only system directories on PATH: nothing of the checkout (node_modules/.bin) or of this Node.
  const sys = { ...env, PATH: '/usr/sbin:/usr/bin:/sbin:/bin', NODE_OPTIONS: '' };
  const gdrgate = (...args: string[]) => run(GDRGATE, args, { env: sys, timeoutMs: 30_000 });
  const runOf = (job: string) =>
    (existsSync(LOG) ? readFileSync(LOG, 'utf8') : '')
      .split('\n')
      .filter((l) => l.includes('"gdrgate run"'))
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l.job === job);
  const sbatch = (wait: boolean) => slurm('sbatch', [...(wait ? ['-W'] : []), '--parsable', '-o', '/dev/null', '-J', 'installed', '--wrap', 'true'], 60_000).stdout.trim().split(';')[0]!;
  const jobState = (id: string) => slurm('squeue', ['-h', '-t', 'all', '-j', id, '-o', '%T|%r']).stdout.trim();
  const held = (id: string) => waitFor(() => jobState(id), (v) => v === `PENDING|${HELD}`, 30_000);
  const clean = async () => {
    writeConfig();
    const ids = slurm('squeue', ['-h', '-o', '%i']).stdout.split(/\s+/).filter(Boolean);
    if (ids.length) slurm('scancel', ids);
    await waitFor(() => slurm('squeue', ['-h', '-o', '%i']).stdout.trim(), (v) => v === '', 30_000);
    if (/^(drain|down)/.test(state())) slurm('scontrol', ['update', `nodename=${node}`, 'state=resume']);
    await waitIdle();
  };
  const step = (name: string, body: (t: Test) => Promise<void>) => t.test(name, async (tt) => (await clean(), body(tt)));

  await step('healthy job: completes, node idle, the gate ran from the executable', async (t) => {
    const id = sbatch(true);
    t.ok((await waitFor(() => jobState(id), (v) => v.startsWith('COMPLETED|'), 60_000)).ok, `job ${id} COMPLETED (sbatch -W returns while the Epilog still runs: COMPLETING)`);
    // The node passes through completing (and, on a slow machine, may still show it a moment after the job's state);
    // what must hold is that it comes back to plain idle, never drained.
    const idle = await waitIdle();
    t.ok(idle.ok, `node idle (${idle.value})`);
    t.match(runOf(id), { result: /^healthy$/, exitCode: 0, startup: /^snapshot$/ });
  });

  await step('GPU at x8: drained with our reason, job requeued held; resume refuses while broken', async (t) => {
    writeConfig({ root: X8 });
    const id = sbatch(false);
    t.ok((await held(id)).ok, `job ${id} ${HELD}`);
    t.match(reason(), new RegExp(`^gdrgate: pcie-link 0000:00:06\\.0 .*job=${id}$`));
    t.match(runOf(id), { result: /^unhealthy$/, action: /^drained$/ });
    t.equal(gdrgate('resume', '--config', CONFIG, '--node', node).status, 1, 'resume refuses: still x8');
  });

  await step("an admin's reason is kept: resume refuses, the reason stays", async (t) => {
    slurm('scontrol', ['update', `nodename=${node}`, 'state=drain', 'reason=rack maintenance']);
    writeConfig({ root: X8 });
    const health = run('/usr/libexec/gdrgate/health.sh', [], { env: { ...sys, SLURMD_NODENAME: node } });
    t.equal(health.status, 1, 'health on the broken tree: unhealthy');
    const r = gdrgate('resume', '--config', CONFIG, '--node', node);
    t.not(r.status, 0);
    t.match(r.stdout, /not ours/);
    t.equal(reason(), 'rack maintenance');
  });

  await step('tree fixed, our reason: resume, node idle, the released job completes', async (t) => {
    writeConfig({ root: X8 });
    const id = sbatch(false);
    t.ok((await held(id)).ok, 'held');
    writeConfig();
    const r = gdrgate('resume', '--config', CONFIG, '--node', node);
    t.equal(r.status, 0, r.stdout);
    t.ok((await waitIdle(60_000)).ok, 'idle');
    // A requeued job waits for its EligibleTime (requeue + cred expire, 5 s) before it may start again; released
    // earlier, it pends (BeginTime) until a later scheduler pass. Wait for that time as slurmctld states it.
    const eligible = /(?:^| )EligibleTime=(\S+)/.exec(slurm('scontrol', ['show', 'job', '-o', id]).stdout)?.[1];
    const eligibleMs = eligible ? Date.parse(eligible) : NaN; // slurmctld's local time, like Date.parse without a zone
    t.ok(Number.isFinite(eligibleMs), `requeued job ${id} has an EligibleTime (${eligible})`);
    if (Number.isFinite(eligibleMs) && eligibleMs + 1000 > Date.now()) await sleep(eligibleMs + 1000 - Date.now());
    slurm('scontrol', ['release', id]);
    t.ok((await waitFor(() => jobState(id), (v) => v.startsWith('COMPLETED'), 60_000)).ok, `job ${id} COMPLETED`);
  });

  await step('the agent (gdrgate-agent.service\'s command) answers the Prolog', async (t) => {
    const agent = spawn(GDRGATE, ['agent', '--config', CONFIG, '--dir', AGENT_DIR], { env: {}, stdio: 'ignore' });
    t.teardown(() => void agent.kill('SIGTERM'));
    t.ok((await waitFor(() => existsSync(join(AGENT_DIR, 'agent.pid')), (v) => v, 60_000)).ok, 'agent up');
    wrapperConf(true);
    const id = sbatch(true);
    t.ok((await waitFor(() => jobState(id), (v) => v.startsWith('COMPLETED|'), 60_000)).ok, `job ${id} COMPLETED (sbatch -W returns while the Epilog still runs: COMPLETING)`);
    t.match(runOf(id), { result: /^healthy$/, startup: /^agent$/ });
    wrapperConf(false);
    agent.kill('SIGTERM');
  });
}
