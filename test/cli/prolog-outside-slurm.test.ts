// `gdrgate prolog` typed in a shell (no SLURM_JOB_ID, no SLURM_SCRIPT_CONTEXT) refuses before it judges or drains,
// from dist/cli.js and from the startup snapshot; --dry-run, --outside-slurm, slurmd's context and health still run.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import t from 'tap';
import { parseGateArgv } from '../../src/cli/fast-argv.js';
import { refusedOutsideSlurm } from '../../src/cli/gate.js';
import { cli } from '../helpers/cli.js';
import { breakLink, makeGateEnv } from '../helpers/gate-env.js';
import { REPO } from '../helpers/paths.js';

const SHELL = { SLURM_JOB_ID: undefined, SLURM_SCRIPT_CONTEXT: undefined, SLURMD_NODENAME: 'vm' };
const REFUSED =
  'gdrgate: prolog: not started by slurmd (neither SLURM_JOB_ID nor SLURM_SCRIPT_CONTEXT=prolog_slurmd is set), and a prolog may drain this node. By hand: `gdrgate check` to look, `gdrgate prolog --dry-run` to see what the gate would do, `gdrgate prolog --outside-slurm` to run it as a Prolog anyway\n';

t.test('refusedOutsideSlurm: the table', async (t) => {
  const cases: [string, Parameters<typeof refusedOutsideSlurm>[0], NodeJS.ProcessEnv, boolean][] = [
    ['prolog in a shell', { mode: 'prolog', dryRun: false }, {}, true],
    ['prolog, empty SLURM_JOB_ID', { mode: 'prolog', dryRun: false }, { SLURM_JOB_ID: '' }, true],
    ['prolog, an epilog context', { mode: 'prolog', dryRun: false }, { SLURM_SCRIPT_CONTEXT: 'epilog_slurmd' }, true],
    ['prolog with SLURM_JOB_ID', { mode: 'prolog', dryRun: false }, { SLURM_JOB_ID: '7' }, false],
    ['prolog in slurmd context', { mode: 'prolog', dryRun: false }, { SLURM_SCRIPT_CONTEXT: 'prolog_slurmd' }, false],
    ['prolog --dry-run', { mode: 'prolog', dryRun: true }, {}, false],
    ['prolog --outside-slurm', { mode: 'prolog', dryRun: false, outsideSlurm: true }, {}, false],
    ['health in a shell', { mode: 'health', dryRun: false }, {}, false],
  ];
  for (const [what, a, env, refused] of cases) t.equal(refusedOutsideSlurm(a, env) !== null, refused, what);
});

t.test('the fast parser reads --outside-slurm', async (t) => {
  t.same(parseGateArgv(['prolog', '--outside-slurm', '--config', 'c']), { mode: 'prolog', config: 'c', root: undefined, baseline: undefined, dryRun: false, outsideSlurm: true });
  t.same(parseGateArgv(['prolog']), { mode: 'prolog', config: undefined, root: undefined, baseline: undefined, dryRun: false, outsideSlurm: false });
});

t.test('bare prolog in a shell on a failing node: refused, exit 2, nothing judged or drained', async (t) => {
  const e = makeGateEnv();
  breakLink(e.tree);
  const r = cli(['prolog', '--config', e.config], SHELL);
  t.equal(r.code, 2);
  t.equal(r.stdout, '');
  t.equal(r.stderr, REFUSED);
  t.same(e.drainCalls(), []);
  const blob = spawnSync(process.execPath, ['--snapshot-blob', path.join(REPO, 'dist/gate.blob'), 'prolog', '--config', e.config], {
    encoding: 'utf8',
    env: { PATH: '/usr/bin:/bin', SLURMD_NODENAME: 'vm' },
    timeout: 60_000,
  });
  t.equal(blob.status, 2, 'from the startup snapshot too');
  t.equal(blob.stderr, REFUSED);
  t.same(e.drainCalls(), []);
  // Through yargs (a form the fast parser leaves to it) the same refusal.
  const y = cli(['prolog', '--config', e.config, '--dry-run=false'], SHELL);
  t.equal(y.code, 2);
  t.equal(y.stderr, REFUSED);
});

t.test('what still runs in a shell: --dry-run, --outside-slurm, health; and slurmd context without a job id', async (t) => {
  const e = makeGateEnv();
  breakLink(e.tree);
  const dry = cli(['prolog', '--config', e.config, '--dry-run'], SHELL);
  t.equal(dry.code, 1, '--dry-run judges');
  t.match(dry.stdout, /^gdrgate prolog node=vm result=unhealthy exit=1 \d+ms reason="gdrgate: pcie-link 0000:00:06\.0 Gen5 x8 \(want Gen5 x16\)" action=dry-run: would drain\n$/m);
  t.same(e.drainCalls(), [], '--dry-run drains nothing');
  const forced = cli(['prolog', '--config', e.config, '--outside-slurm'], SHELL);
  t.equal(forced.code, 1, '--outside-slurm runs the gate');
  t.equal(e.drainCalls().length, 1, 'and drains');
  const ctx = cli(['prolog', '--config', e.config], { ...SHELL, SLURM_SCRIPT_CONTEXT: 'prolog_slurmd' });
  t.equal(ctx.code, 1, "slurmd's prolog context is enough");
  const health = cli(['health', '--config', e.config], SHELL);
  t.equal(health.code, 1, 'health runs outside a job, as slurmd starts it');
});
