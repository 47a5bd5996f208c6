// The exit-code and drain policy: every mode × outcome × fail-open/closed, and how findings make an outcome.
import t from 'tap';
import { ConfigError, UsageError } from '../../src/errors.js';
import { decide, outcomeOf, toOutcome, type Mode, type Outcome } from '../../src/runner/policy.js';
import type { Finding } from '../../src/model/finding.js';

const fail: Finding = { check: 'pcie-link', code: 'link-width-low', status: 'fail', subject: '0000:17:00.0', message: 'x8' };
const healthy: Outcome = { kind: 'healthy' };
const unhealthy: Outcome = { kind: 'unhealthy', failing: [fail] };
const cfg: Outcome = { kind: 'config-error', message: 'bad baseline' };
const internal: Outcome = { kind: 'internal-error', message: 'boom' };
const open = { onConfigError: 'open', onInternalError: 'open', drain: false } as const;
const closed = { onConfigError: 'closed', onInternalError: 'closed', drain: false } as const;

t.test('exit codes and drains, every mode × outcome × policy', async (t) => {
  const rows: [Mode, Outcome, typeof open | typeof closed, number, boolean, boolean][] = [
    ['check', healthy, open, 0, false, false],
    ['check', unhealthy, open, 1, false, false],
    ['check', cfg, closed, 2, false, false],
    ['check', internal, closed, 3, false, false],
    ['prolog', healthy, open, 0, false, false],
    ['prolog', unhealthy, open, 1, true, false],
    ['prolog', cfg, open, 0, false, true],
    ['prolog', internal, open, 0, false, true],
    ['prolog', cfg, closed, 1, true, false],
    ['prolog', internal, closed, 1, true, false],
    ['health', unhealthy, open, 1, true, false],
    ['health', cfg, open, 0, false, true],
    ['epilog', unhealthy, open, 1, true, false],
    ['epilog', internal, closed, 1, true, false],
    ['task', unhealthy, open, 1, false, false],
    ['resume', unhealthy, open, 1, false, false],
  ];
  for (const [mode, o, p, code, drain, failedOpen] of rows)
    t.same(decide(mode, o, p), { exitCode: code, drain, failedOpen }, `${mode} ${o.kind} ${p.onConfigError}`);
  t.same(decide('check', unhealthy, { ...open, drain: true }), { exitCode: 1, drain: true, failedOpen: false }, 'check --drain');
});

t.test('a tool failure never drains under fail-open', async (t) => {
  for (const mode of ['prolog', 'epilog', 'health'] as const)
    for (const o of [cfg, internal]) t.equal(decide(mode, o, open).drain, false, `${mode} ${o.kind}`);
});

t.test('outcome: fail beats error; error alone is internal; warn and skip are healthy', async (t) => {
  const err: Finding = { ...fail, status: 'error', code: 'internal-error' };
  t.equal(outcomeOf([err, fail]).kind, 'unhealthy');
  t.equal(outcomeOf([err]).kind, 'internal-error');
  t.equal(outcomeOf([{ ...fail, status: 'warn' }, { ...fail, status: 'skip' }]).kind, 'healthy');
  t.equal(outcomeOf([]).kind, 'healthy');
});

t.test('each tool failure follows its own policy: onConfigError for config, onInternalError for internal', async (t) => {
  const cfgOpen = { onConfigError: 'open', onInternalError: 'closed', drain: false } as const;
  const cfgClosed = { onConfigError: 'closed', onInternalError: 'open', drain: false } as const;
  t.same(decide('prolog', cfg, cfgOpen), { exitCode: 0, drain: false, failedOpen: true }, 'config open, internal closed: config error fails open');
  t.same(decide('prolog', internal, cfgOpen), { exitCode: 1, drain: true, failedOpen: false }, 'config open, internal closed: internal error drains');
  t.same(decide('prolog', cfg, cfgClosed), { exitCode: 1, drain: true, failedOpen: false }, 'config closed, internal open: config error drains');
  t.same(decide('prolog', internal, cfgClosed), { exitCode: 0, drain: false, failedOpen: true }, 'config closed, internal open: internal error fails open');
});

t.test('a thrown error as an outcome: usage and config errors are config-error, anything else internal', async (t) => {
  t.strictSame(toOutcome(new UsageError('no such flag')), { kind: 'config-error', message: 'no such flag' });
  t.strictSame(toOutcome(new ConfigError('bad baseline')), { kind: 'config-error', message: 'bad baseline' });
  t.strictSame(toOutcome(new Error('boom')), { kind: 'internal-error', message: 'boom' });
  t.strictSame(toOutcome('a string thrown'), { kind: 'internal-error', message: 'a string thrown' });
});
