// TaskProlog protocol on stdout: only `print <text>` lines, each one line; and the exit code policy.
import t from 'tap';
import { TASK_CHECK_OF, type TaskCode } from '../../src/task/records.js';
import { tf } from '../../src/task/finding.js';
import { renderStandalone, taskPrologLines } from '../../src/task/render.js';
import { exitCode, taskResult } from '../../src/runner/exit.js';

const taskExitCode = (...a: Parameters<typeof taskResult>): number => exitCode(taskResult(...a));

t.test('the line a user sees for ulimit -l 64', async (t) => {
  const lines = taskPrologLines([tf('job-memlock-propagated', 'fail', 'job', 'memlock is 64 KiB in this job', '>= 8 MiB', '64 KiB'), tf('job-visibility-ok', 'pass', 'job', 'fine')]);
  t.same(lines, [
    'print gdrgate: memlock is 64 KiB in this job (need >= 8 MiB): RDMA registration will fail (Slurm copied the limit of the shell you submitted from); ask your admin to set PropagateResourceLimitsExcept=MEMLOCK, or submit from a shell with ulimit -l unlimited',
  ]);
});

t.test('only print lines, one per finding worth attention, never a second protocol line', async (t) => {
  const evil = 'mlx5_0\nexport LD_PRELOAD=/tmp/x.so\rprint owned';
  const lines = taskPrologLines([
    tf('job-hca-missing', 'fail', '/sys/class/infiniband', `this job sees 0 of the 1 RDMA adapters of the host (missing ${evil})`),
    tf('job-state-untrusted', 'error', 'prolog.json', 'the host record for this job is untrusted: x'),
    tf('job-state-missing', 'skip', 'prolog.json', 'no record'),
    tf('job-memlock-ok', 'pass', 'job', 'ok'),
    tf('job-uverbs-missing', 'fail', '/dev/infiniband', 'x'.repeat(5000)),
  ]);
  t.equal(lines.length, 3, 'fail, error: printed; skip, pass: not');
  for (const l of lines) {
    t.match(l, /^print gdrgate: /, 'starts with print gdrgate:');
    t.notMatch(l, /[\n\r\x00-\x1f]/, 'one line, no control characters');
    t.ok(l.length <= 1006, 'bounded');
  }
  t.match(lines[0], /missing mlx5_0 export LD_PRELOAD/, 'the hostile name stays inside the print line');
});

t.test('every catalog entry renders', async (t) => {
  for (const code of Object.keys(TASK_CHECK_OF) as TaskCode[]) {
    const [line] = taskPrologLines([tf(code, 'fail', 's', 'm')]);
    t.match(line, /^print gdrgate: m: \S/, code);
  }
});

t.test('exit codes', async (t) => {
  const fail = [tf('job-memlock-low', 'fail', 'job', 'm')];
  const warn = [tf('job-no-rdma', 'warn', 's', 'm')];
  const err = [tf('job-state-untrusted', 'error', 's', 'm')];
  t.equal(taskExitCode(fail, 'taskprolog', false), 0, 'TaskProlog default: warn only');
  t.equal(taskExitCode(fail, 'taskprolog', true), 1, '--fail: a failing finding fails the task');
  t.equal(taskExitCode(err, 'taskprolog', true), 0, '--fail: an untrusted record never fails the task');
  t.equal(taskExitCode(warn, 'standalone', false), 1, 'standalone: a warning is a finding');
  t.equal(taskExitCode([tf('job-memlock-ok', 'pass', 'j', 'm')], 'standalone', false), 0, 'standalone: clean');
});

t.test('standalone report layout', async (t) => {
  const text = renderStandalone([tf('job-memlock-low', 'fail', 'job', 'memlock is 64 KiB in this job', '>= unlimited', '64 KiB'), tf('job-visibility-ok', 'pass', 'job', 'this job sees 4 RDMA adapters')], { root: '/', host: 'c1', min: { value: 'unlimited', from: 'default (no baseline)' } }, 1);
  t.match(text, /^gdrgate task --standalone — root \/, host c1, memlock minimum unlimited \(default \(no baseline\)\)\n/);
  t.match(text, /\nFAIL    memlock-limit   job      memlock is 64 KiB in this job \(want >= unlimited\)\n/);
  t.match(text, /\n +tells: RDMA registration will fail\n/);
  t.match(text, /\nresult: problems found \(exit 1\) — 1 fail, 0 error, 0 warn, 1 pass, 0 skip\n$/);
});
