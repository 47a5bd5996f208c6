// The hooks' own argument parser (src/cli/fast-argv.ts): the command lines the wrappers pass skip yargs and do
// exactly what yargs would have done with them; everything else goes to yargs.
import { spawnSync } from 'node:child_process';
import t from 'tap';
import { parseGateArgv, parseTaskArgv } from '../../src/cli/fast-argv.js';

const REPO = new URL('../../', import.meta.url).pathname;
const CAPTURE = `${REPO}examples/h200-vm`;

t.test('the TaskProlog command lines taskprolog.sh passes', async (t) => {
  t.same(parseTaskArgv(['task', '--config', '/etc/gdrgate/config.json']), { standalone: false, root: undefined, config: '/etc/gdrgate/config.json', fail: false });
  t.same(parseTaskArgv(['task', '--config', 'c', '--root', '/r', '--fail']), { standalone: false, root: '/r', config: 'c', fail: true });
  t.same(parseTaskArgv(['task', '--standalone', '--root=/r']), { standalone: true, root: '/r', config: undefined, fail: false });
  t.same(parseTaskArgv(['task']), { standalone: false, root: undefined, config: undefined, fail: false });
});

t.test('anything else is left to yargs', async (t) => {
  for (const argv of [
    ['check'],
    ['task', '--help'],
    ['task', '--no-fail'],
    ['task', '--config'],
    ['task', '--config', ''],
    ['task', '--config=', '--fail'],
    ['task', '--config', 'a', '--config', 'b'],
    ['task', '--fail', '--fail'],
    ['task', '--config', '--fail'],
    ['task', 'extra'],
    ['prolog', '--config', '-x'],
    ['prolog', '--dry-run', '--dry-run'],
  ])
    t.equal(argv[0] === 'prolog' ? parseGateArgv(argv) : parseTaskArgv(argv), null, argv.join(' '));
});

t.test('task on the bundled capture: the same report through the fast path and through yargs', async (t) => {
  // `--no-fail` is the default spelled out: yargs takes it, the fast path does not, so it forces yargs.
  const run = (extra: string[]) =>
    spawnSync(process.execPath, [`${REPO}dist/cli.js`, 'task', '--standalone', '--root', CAPTURE, ...extra], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } });
  const fast = run([]);
  const slow = run(['--no-fail']);
  t.equal(fast.status, 1, 'a warning: exit 1 by hand');
  t.equal(slow.status, fast.status);
  t.equal(fast.stdout, slow.stdout);
  t.equal(fast.stderr, slow.stderr);
  t.equal(fast.stdout.split('\n').at(-2), 'result: problems found (exit 1) — 0 fail, 0 error, 1 warn, 1 pass, 1 skip');
});
