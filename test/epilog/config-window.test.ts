// probes.window below probes.minSamples is a config error (no window would ever be judged, a slow path reported
// healthy for ever): refused at load with a clear message, the Epilog's config-error policy applies (fail-open here).
import t from 'tap';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../../src/config.js';
import { ConfigError } from '../../src/errors.js';
import { last, probes } from './_cli.js';
import { makeEpilogEnv } from './_env.js';

const e = await makeEpilogEnv(1);
const why = `${e.config}: probes.window 2 is below probes.minSamples 3: no window would ever hold enough samples to judge`;

t.test('loadConfig: window 2, minSamples 3 refused; window == minSamples accepted', async (t) => {
  e.writeConfig(probes('healthy', { window: 2, minSamples: 3 }));
  await t.rejects(loadConfig(e.config), new ConfigError(why));
  e.writeConfig(probes('healthy', { window: 3, minSamples: 3 }));
  const c = await loadConfig(e.config);
  t.same([c.probes?.window, c.probes?.minSamples], [3, 3]);
  e.writeConfig(probes('healthy', { window: 2 }));
  await t.rejects(loadConfig(e.config), new ConfigError(`${e.config}: probes.window 2 is below probes.minSamples 3: no window would ever hold enough samples to judge`), 'against the default minSamples 3');
});

t.test('gdrgate epilog: a config error, fail-open: exit 0, nothing probed, said', async (t) => {
  e.writeConfig(probes('healthy', { window: 2, minSamples: 3 }));
  const r = e.epilog('6');
  t.equal(r.code, 0);
  t.equal(r.stdout.split('\n')[0], `config-error: ${why}`);
  t.match(last(r.stdout), /^gdrgate epilog node=gpu001 job=6 view=none removed=false probes=error result=config-error exit=0 \d+ms action=none$/);
  t.equal(existsSync(path.join(e.spool, 'samples.jsonl')), false, 'no sample');
  t.same(e.drainCalls(), []);
});
