// drill start / stop through the built CLI against the recording scontrol (real 22.05.8 output): refusal on an idle
// node, --drain with the marker, stop resumes only a drain that carries a drill marker.
import t from 'tap';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { cli } from '../helpers/cli.js';
import { breakLink, makeGateEnv } from '../helpers/gate-env.js';

t.test('start refuses an idle node; --drain drains with the marker; stop resumes that drain', async (t) => {
  const env = makeGateEnv();
  const file = path.join(env.dir, 'run', 'drill.json');
  const drill = (args: string[]) => cli(['drill', ...args, '--config', env.config, '--node', 'vm']);
  const refused = drill(['start', '--fault', 'memlock=64K']);
  t.equal(refused.code, 2, 'idle node: refused, a usage error (exit 2)');
  t.equal(refused.stdout, 'vm: refusing: the node is IDLE; drain or reserve it for the drill, or pass --drain or --force\n');
  t.notOk(existsSync(file), 'no drill file');
  t.equal(drill(['start', '--fault', 'memlock=lots']).code, 2, 'bad fault: usage error, exit 2');
  t.equal(drill(['start', '--fault', 'memlock=64K', '--minutes', '0']).code, 2, '--minutes 0: usage error');

  const s = drill(['start', '--fault', 'memlock=64K', '--drain', '--minutes', '2']);
  t.equal(s.code, 0, s.stdout.trim());
  const marker = /drill ([0-9a-f]{8}) armed/.exec(s.stdout)?.[1];
  t.ok(marker, 'prints the marker');
  t.equal(statSync(file).mode & 0o777, 0o600, 'drill file 0600');
  t.same(env.drainCalls(), [`update nodename=vm state=drain reason=gdrgate: drill memlock=64K drill=${marker}`], 'drained once for the drill, with the marker');
  t.equal(drill(['start', '--fault', 'memlock=64K', '--drain']).code, 2, 'a second drill while one is active: refused (exit 2)');

  const p = env.prolog();
  t.equal(p.code, 1, 'the prolog sees the staged fault');
  t.match(p.stdout, new RegExp(`^gdrgate prolog node=vm job=42 result=unhealthy exit=1 \\d+ms reason="gdrgate: memlock self 64 KiB \\(want >= unlimited\\) job=42 drill=${marker}" action=kept: already drained by gdrgate: gdrgate: drill memlock=64K drill=${marker}\n$`, 'm'), 'and keeps the drill drain (already ours)');

  const stop = drill(['stop']);
  t.equal(stop.code, 0, stop.stdout.trim());
  t.equal(stop.stdout.split('\n')[0], `vm: drill file removed (drill ${marker}, memlock=64K)`);
  t.equal(stop.stdout, `vm: drill file removed (drill ${marker}, memlock=64K)\nvm: resumed (was: gdrgate: drill memlock=64K drill=${marker})\n`);
  t.notOk(existsSync(file), 'file gone');
  t.equal(readFileSync(env.calls, 'utf8'), `${'show node -o vm\n'.repeat(3)}update nodename=vm state=drain reason=gdrgate: drill memlock=64K drill=${marker}\n${'show node -o vm\n'.repeat(4)}update nodename=vm state=resume\n`, 'scontrol resume called');
});

t.test('stop leaves a gdrgate drain without a drill marker, and a human drain, as they are', async (t) => {
  const env = makeGateEnv();
  const drill = (args: string[]) => cli(['drill', ...args, '--config', env.config, '--node', 'vm']);
  breakLink(env.tree);
  t.equal(env.prolog().code, 1, 'arranged: drained by the gate, no drill');
  const stop = drill(['stop']);
  t.equal(stop.code, 0);
  t.equal(stop.stdout.split('\n')[0], 'vm: no drill file');
  t.equal(stop.stdout, 'vm: no drill file\nvm: IDLE+DRAIN (gdrgate: pcie-link 0000:00:06.0 Gen5 x8 (want Gen5 x16) job=42): no drill drain, left as it is\n');
  t.notMatch(readFileSync(env.calls, 'utf8'), /state=resume/, 'no resume');
});
