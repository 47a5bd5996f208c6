// End to end: `gdrgate slurm-config` on a real slurm.conf that already has a site's Prolog, TaskProlog (in an Include
// file), PrologFlags=Contain and PropagateResourceLimits=ALL; the printed changes applied as an admin would (lines
// replaced, added, removed; the chain wrappers installed), then a real slurmctld takes the file (`scontrol
// reconfigure`), `scontrol show config` shows the merged values, and a job runs with the site's scripts and
// gdrgate's having run. Runs when CI is set or GDRGATE_E2E=1, as root.
import t from 'tap';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { twoRail } from '../epilog/_env.js';
import { buildTree } from '../gen/sysfs-tree.js';
import { validate } from '../helpers/schema.js';
import { cleanEnv, freePortPair, gateConf, installWrapper, REPO, run, runOrSkip, sandbox, secs, slurmClients, snapshotBuild, waitFor } from './_sandbox.js';

await runOrSkip(t, 'slurm-config', e2e);

interface Change {
  readonly key: string;
  readonly action: 'keep' | 'set' | 'add' | 'remove' | 'optional';
  readonly file: string;
  readonly line: number | null;
  readonly set: string | null;
}
interface Printed {
  readonly changes: readonly Change[];
  readonly wrappers: readonly { path: string; text: string }[];
  readonly warnings: readonly string[];
}

/** What an admin does with the listing: per file, from the bottom up so line numbers hold; additions at the end. */
function apply(p: Printed): void {
  const byFile = new Map<string, Change[]>();
  for (const c of p.changes) if (c.action !== 'keep' && c.action !== 'optional') byFile.set(c.file, [...(byFile.get(c.file) ?? []), c]);
  for (const [file, cs] of byFile) {
    const lines = readFileSync(file, 'utf8').replace(/\n$/, '').split('\n');
    const appended: string[] = [];
    for (const c of [...cs].sort((a, b) => (b.line ?? 0) - (a.line ?? 0))) {
      if (c.line === null) appended.push(c.set!);
      else if (c.action === 'set') lines[c.line - 1] = c.set!;
      else if (c.action === 'remove') lines.splice(c.line - 1, 1);
      else lines.splice(c.line, 0, c.set!);
    }
    writeFileSync(file, [...lines, ...appended].join('\n') + '\n');
  }
  for (const w of p.wrappers) {
    writeFileSync(w.path, w.text);
    chmodSync(w.path, 0o755);
  }
}

async function e2e(): Promise<void> {
  t.setTimeout(300_000);
  if (!existsSync(join(REPO, 'dist/cli.js'))) return void t.fail('dist/cli.js is missing: build first (npm run build)');
  const port = await freePortPair();
  const sb = sandbox(t, { prefix: '/tmp/gdrgate-e2e-slurmconf-', port });
  const { WORK, DIR, CONF, CONFIG, BASELINE, LOG } = sb;
  const CLI = snapshotBuild(WORK);
  const TREE = join(WORK, 'tree');
  await buildTree(TREE, twoRail(1));
  const gdrgate = (args: readonly string[]) => run(process.execPath, [CLI, ...args], { env: cleanEnv({}), timeoutMs: 60_000 });
  const cap = gdrgate(['baseline', 'capture', '--root', TREE, '--class', 'sandbox', '--match', '*']);
  if (cap.status !== 0) return void t.fail('baseline capture', { stderr: cap.stderr });
  writeFileSync(BASELINE, cap.stdout);
  writeFileSync(CONFIG, JSON.stringify({ baseline: BASELINE, root: TREE, scontrol: '/usr/bin/scontrol', logFile: LOG, stateDir: join(WORK, 'run'), spool: join(WORK, 'spool') }, null, 2));

  // gdrgate's wrappers where a package puts them (here WORK/libexec), each with its .conf.
  const LIBEXEC = join(WORK, 'libexec');
  mkdirSync(LIBEXEC);
  for (const w of ['prolog', 'epilog', 'taskprolog'] as const) installWrapper(w, join(LIBEXEC, `${w}.sh`), gateConf(CLI, CONFIG) + (w === 'prolog' ? 'AGENT=\n' : ''));
  // The site's own scripts: each leaves a mark; the TaskProlog exports a variable into the job.
  const SITE = join(WORK, 'site');
  mkdirSync(SITE);
  const script = (name: string, body: string): string => {
    writeFileSync(join(SITE, name), `#!/bin/sh\n${body}\n`, { mode: 0o755 });
    return join(SITE, name);
  };
  const SITE_PROLOG = script('prolog.sh', `echo "$SLURM_JOB_ID" >> ${SITE}/prolog.ran\nexit 0`);
  const SITE_TASK = script('taskprolog.sh', `echo "$SLURM_JOB_ID" >> ${SITE}/taskprolog.ran\necho "export SITE_TASK=yes"`);
  mkdirSync(join(DIR, 'etc'), { recursive: true });
  writeFileSync(join(DIR, 'etc/site-task.conf'), `# the site's task setup\ntaskprolog = ${SITE_TASK}\n`);

  const t1 = performance.now();
  const up = sb.start({ SANDBOX_PROLOG_FLAGS: 'Contain', SANDBOX_CRED_EXPIRE: '5', GATE_PROLOG: SITE_PROLOG, SANDBOX_EXTRA_CONF: 'Include site-task.conf\nPropagateResourceLimits=ALL' });
  if (up.status !== 0) return void t.fail('start.sh brought the sandbox up', { stderr: up.stderr.slice(-3000) });
  const node = up.node;
  t.comment(`sandbox up in ${secs(t1)}: node ${node}, port ${port}`);
  const { slurm, state } = slurmClients(CONF, node, WORK);
  const before = readFileSync(CONF, 'utf8');

  const got: { plan?: Printed & { slurm: { release: string; from: string } } } = {};
  await t.test('slurm-config prints the merged changes; they are applied as printed', async (t) => {
    const printed = gdrgate(['slurm-config', '--conf', CONF, '--scripts', LIBEXEC, '--wrapper-dir', join(DIR, 'etc'), '--json']);
    t.equal(printed.status, 0, 'slurm-config', { stderr: printed.stderr });
    const plan = JSON.parse(printed.stdout) as Printed & { slurm: { release: string; from: string } };
    got.plan = plan;
    t.same(validate('slurm-config', plan), [], 'its JSON follows the schema');
    t.equal(plan.slurm.release, '22.05', `release detected: ${plan.slurm.from}`);
    t.equal(readFileSync(CONF, 'utf8'), before, 'slurm.conf untouched by slurm-config');
    t.same(
      plan.changes.map((c) => `${c.key} ${c.action}${c.set ? ` ${c.set}` : ''}`),
      [
        'PrologFlags set PrologFlags=Contain,DeferBatch',
        `Prolog set Prolog=${DIR}/etc/gdrgate-prolog-chain.sh`,
        `Epilog add Epilog=${LIBEXEC}/epilog.sh`,
        `TaskProlog set taskprolog=${DIR}/etc/gdrgate-taskprolog-chain.sh`,
        `HealthCheckProgram optional HealthCheckProgram=${LIBEXEC}/health.sh`,
        'HealthCheckInterval optional HealthCheckInterval=300',
        'PrologEpilogTimeout add PrologEpilogTimeout=60',
        'PropagateResourceLimits remove',
        'PropagateResourceLimitsExcept add PropagateResourceLimitsExcept=MEMLOCK',
      ],
    );
    t.equal(plan.changes.find((c) => c.key === 'TaskProlog')!.file, join(DIR, 'etc/site-task.conf'), 'the TaskProlog line is changed where it is: the Include file');
    apply(plan);
    t.comment(`slurm.conf after the changes:\n${readFileSync(CONF, 'utf8')}`);
  });
  const p = got.plan;
  if (!p) return;
  await t.test('slurmctld takes the result: scontrol reconfigure, scontrol show config', async (t) => {
    const reconf = slurm('scontrol', ['reconfigure']);
    t.equal(reconf.status, 0, 'scontrol reconfigure', { stderr: reconf.stderr });
    const idle = await waitFor(state, (s) => s === 'idle', 30_000);
    t.ok(idle.ok, `node idle after reconfigure (${idle.value})`);
    const config = slurm('scontrol', ['show', 'config']).stdout;
    const shown = (k: string): string | undefined => new RegExp(`^${k}\\s+=\\s+(.*)$`, 'm').exec(config)?.[1]?.trim();
    t.same(
      ['PrologFlags', 'Prolog', 'Epilog', 'TaskProlog', 'PrologEpilogTimeout', 'PropagateResourceLimitsExcept'].map((k) => `${k}=${shown(k)}`),
      [
        'PrologFlags=Alloc,Contain,DeferBatch',
        `Prolog=${DIR}/etc/gdrgate-prolog-chain.sh`,
        `Epilog=${LIBEXEC}/epilog.sh`,
        `TaskProlog=${DIR}/etc/gdrgate-taskprolog-chain.sh`,
        'PrologEpilogTimeout=60',
        'PropagateResourceLimitsExcept=MEMLOCK',
      ],
      'scontrol show config: the merged values',
    );
  });
  await t.test("a job runs with the site's scripts and gdrgate's", async (t) => {
    // A job: the site's Prolog and TaskProlog ran, and gdrgate's Prolog, TaskProlog (through the chain) and Epilog.
    const out = join(WORK, 'job.out');
    const job = slurm('sbatch', ['-W', '--parsable', '-o', out, '-J', 'e2e-slurmconf', '--wrap', 'echo "SITE_TASK=$SITE_TASK"'], 90_000);
    t.equal(job.status, 0, 'sbatch -W: the job completed', { stderr: job.stderr });
    const id = job.stdout.trim().split(';')[0]!;
    const logLines = (): Record<string, unknown>[] => (existsSync(LOG) ? readFileSync(LOG, 'utf8') : '').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
    // Without probes gdrgate's Epilog logs what gdrgate's TaskProlog recorded in the job, then removes the job's state.
    const view = await waitFor(() => logLines().find((l) => l.msg === 'gdrgate job view' && l.job === id), (l) => l !== undefined, 60_000);
    const ran = (f: string): string[] => (existsSync(join(SITE, f)) ? readFileSync(join(SITE, f), 'utf8').trim().split('\n') : []);
    t.same(ran('prolog.ran'), [id], "the site's Prolog ran for the job");
    t.same(ran('taskprolog.ran'), [id], "the site's TaskProlog ran for the job's task");
    t.equal(existsSync(out) ? readFileSync(out, 'utf8') : 'no output file', 'SITE_TASK=yes\n', "the site's TaskProlog's export reached the job");
    const gate = logLines().find((l) => l.msg === 'gdrgate run' && l.job === id);
    t.same(gate && { mode: gate.mode, result: gate.result, exitCode: gate.exitCode }, { mode: 'prolog', result: 'healthy', exitCode: 0 }, "gdrgate's Prolog ran after the site's, healthy");
    t.same(view.value && { step: view.value.step, state: view.value.state }, { step: 'batch', state: 'trusted' }, "gdrgate's TaskProlog ran after the site's (its signed record), and gdrgate's Epilog read it");
    t.equal(existsSync(join(WORK, 'run', `job-${id}`)), false, "gdrgate's Epilog removed the job's state");
    t.equal((await waitFor(state, (s) => s !== 'completing', 60_000)).value, 'idle', 'the node is idle again (once the job stops COMPLETING)');
    t.comment(`wrapper files: ${p.wrappers.map((w) => w.path).join(', ')} in ${dirname(CONF)}`);
  });
}
