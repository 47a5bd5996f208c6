// The exit-code and drain policy: every mode × outcome × fail-open/closed, and how findings make an outcome.
import t from 'tap';
import { decide, outcomeOf, type Mode, type Outcome } from '../../src/runner/policy.js';
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
