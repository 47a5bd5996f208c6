// The config's probes.quiet (the Epilog's look at the probed adapters' port counters): its defaults (250 ms, 1 Gb/s)
// as docs/epilog.md gives them, a section that names one key keeps the other's default, and the schema's bounds as
// loadConfig refuses them (a window past 5 s, a negative one, a threshold of 0 Gb/s, a key it does not know).
import t from 'tap';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../../src/config.js';
import { ConfigError } from '../../src/errors.js';
import { probesConfig } from '../../src/probes/config.js';
import { scratchDir } from '../helpers/scratch.js';

const dir = scratchDir('gdrgate-quiet-');
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const file = path.join(dir, 'config.json');
const load = (quiet: unknown) => {
  writeFileSync(file, JSON.stringify({ baseline: '/etc/gdrgate/baseline.json', probes: { quiet } }));
  return loadConfig(file);
};

t.test('the defaults, and one key given: the other keeps its default', async (t) => {
  t.same(probesConfig({})?.quiet, { windowMs: 250, belowGbps: 1 });
  t.same(probesConfig({ quiet: { windowMs: 1000 } })?.quiet, { windowMs: 1000, belowGbps: 1 });
  t.same(probesConfig({ quiet: { belowGbps: 5 } })?.quiet, { windowMs: 250, belowGbps: 5 });
  t.same((await load({ windowMs: 0 })).probes?.quiet, { windowMs: 0, belowGbps: 1 }, 'window 0: the look is off');
  t.same((await load({ windowMs: 5000, belowGbps: 0.5 })).probes?.quiet, { windowMs: 5000, belowGbps: 0.5 });
});

t.test('what the schema refuses', async (t) => {
  const cases: [unknown, string][] = [
    [{ windowMs: -1 }, '/probes/quiet/windowMs: must be >= 0'],
    [{ windowMs: 5001 }, '/probes/quiet/windowMs: must be <= 5000'],
    [{ windowMs: 2.5 }, '/probes/quiet/windowMs: must be integer'],
    [{ belowGbps: 0 }, '/probes/quiet/belowGbps: must be > 0'],
    [{ windowMS: 250 }, '/probes/quiet: must NOT have additional properties (windowMS)'],
  ];
  for (const [quiet, why] of cases) {
    const err = await load(quiet).then(() => null, (e: unknown) => e);
    t.equal(err instanceof ConfigError, true, JSON.stringify(quiet));
    t.equal((err as Error | null)?.message, `${file}: ${why}`, JSON.stringify(quiet));
  }
});
