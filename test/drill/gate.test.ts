// The gate's drill hook, through the built CLI: an active drill file is the only fault the prolog sees, and its
// drain reason ends with the drill marker; expired, foreign or other-node files change nothing; `check` never looks.
import t from 'tap';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { newDrill, writeDrill } from '../../src/drill/file.js';
import { cli } from '../helpers/cli.js';
import { makeGateEnv } from '../helpers/gate-env.js';

const fault = { kind: 'memlock', bytes: 65536 } as const;
const records = (log: string): Record<string, unknown>[] => readFileSync(log, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);

t.test('active drill: the prolog drains with the staged fault and the marker', async (t) => {
  const env = makeGateEnv();
  const state = path.join(env.dir, 'run');
  t.equal(env.prolog().code, 0, 'healthy without a drill');
  const spec = newDrill('vm', fault, 5);
  writeDrill(state, spec);
  const r = env.prolog();
  t.equal(r.code, 1, 'exit 1 under the drill', { stdout: r.stdout, stderr: r.stderr });
  const drains = env.drainCalls();
  t.equal(drains.length, 1, 'one drain');
  t.equal(drains[0], `update nodename=vm state=drain reason=gdrgate: memlock self 64 KiB (want >= unlimited) job=42 drill=${spec.marker}`, String(drains[0]));
  t.same(records(env.log).filter((l) => l.drill).map(({ time, pid, ...l }) => l), [{ level: 40, tool: 'gdrgate', node: 'vm', drill: spec.marker, fault: 'memlock=64K', expiresAt: spec.expiresAt, msg: 'drill active: the gate sees one staged fault' }], 'logged loudly');
  const check = cli(['check', '--root', env.tree]);
  t.equal(check.code, 0, '`gdrgate check` is not in drill mode: healthy');
});

t.test('ignored drills: expired, for another node, not root-owned', async (t) => {
  const env = makeGateEnv();
  const state = path.join(env.dir, 'run');
  const expired = newDrill('vm', fault, 5, Date.now() - 6 * 60_000);
  writeDrill(state, expired);
  t.equal(env.prolog().code, 0, 'expired: healthy');
  const elsewhere = newDrill('gpu999', fault, 5);
  writeDrill(state, elsewhere);
  t.equal(env.prolog().code, 0, 'another node: healthy');
  if (process.getuid?.() === 0) {
    writeDrill(state, newDrill('vm', fault, 5));
    const { chownSync } = await import('node:fs');
    chownSync(path.join(state, 'drill.json'), 1000, 1000);
    t.equal(env.prolog().code, 0, 'owned by uid 1000: healthy');
  }
  t.same(env.drainCalls(), [], 'nothing drained');
  t.same(records(env.log).filter((l) => l.msg === 'drill file ignored').map((l) => `${l.level} ${l.node} ${l.why}`), [
    `40 vm drill ${expired.marker} expired at ${expired.expiresAt}`,
    `40 vm drill ${elsewhere.marker} is for node gpu999, not vm`,
    ...(process.getuid?.() === 0 ? [`40 vm ${path.join(state, 'drill.json')} is owned by uid 1000, not 0`] : []),
  ], 'each ignored file is logged');
});
