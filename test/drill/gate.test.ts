// The gate's drill hook, through the built CLI: an active drill file is the only fault the prolog sees, and its
// drain reason ends with the drill marker; expired, foreign or other-node files change nothing; `check` never looks.
import t from 'tap';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { newDrill, writeDrill } from '../../src/drill/file.js';
import { cli } from '../helpers/cli.js';
import { makeGateEnv } from '../helpers/gate-env.js';

const fault = { kind: 'memlock', bytes: 65536 } as const;

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
  t.match(drains[0] ?? '', new RegExp(`reason=gdrgate: memlock self 64 KiB \\(want >= unlimited\\) job=42 drill=${spec.marker}$`), String(drains[0]));
  t.match(readFileSync(env.log, 'utf8'), /drill active: the gate sees one staged fault/, 'logged loudly');
  const check = cli(['check', '--root', env.tree]);
  t.equal(check.code, 0, '`gdrgate check` is not in drill mode: healthy');
});

t.test('ignored drills: expired, for another node, not root-owned', async (t) => {
  const env = makeGateEnv();
  const state = path.join(env.dir, 'run');
  writeDrill(state, newDrill('vm', fault, 5, Date.now() - 6 * 60_000));
  t.equal(env.prolog().code, 0, 'expired: healthy');
  writeDrill(state, newDrill('gpu999', fault, 5));
  t.equal(env.prolog().code, 0, 'another node: healthy');
  if (process.getuid?.() === 0) {
    writeDrill(state, newDrill('vm', fault, 5));
    const { chownSync } = await import('node:fs');
    chownSync(path.join(state, 'drill.json'), 1000, 1000);
    t.equal(env.prolog().code, 0, 'owned by uid 1000: healthy');
  }
  t.same(env.drainCalls(), [], 'nothing drained');
  t.match(readFileSync(env.log, 'utf8'), /drill file ignored/, 'each ignored file is logged');
});
