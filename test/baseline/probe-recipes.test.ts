// A class may hold one probe path measured with several recipes (bands are judged only against samples of the same
// recipe): load takes them, and refuses the same path and recipe twice, naming both entries.
import t from 'tap';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { loadBaseline } from '../../src/baseline/load.js';
import type { BaselineEnvelope } from '../../src/model/baseline.js';
import { baselineOf, HGX } from '../checks/_trees.js';
import { exactly } from '../helpers/exactly.js';

/** ib_write_bw host to host on mlx5_0 at one message size, as the epilog's probe records it. */
const band = (msgSize: number): BaselineEnvelope => ({
  probe: 'ib-write-host', gpu: null, nic: 'mlx5_0', direction: 'write',
  recipe: { tool: 'ib_write_bw', args: ['-d', 'mlx5_0', '-s', String(msgSize), '127.0.0.1'], msgSize, iterations: 5000, durationS: null, qps: 1, numaNode: null, direction: 'write' },
  unit: 'Gb/s', p50: 92, samples: 3, warnBelow: 78, failBelow: 64,
});

t.test('one path at two message sizes loads; the same size twice is refused', async (t) => {
  const cls = await baselineOf(HGX);
  const file = path.join(t.testdir(), 'baseline.json');
  await writeFile(file, JSON.stringify({ version: 1, classes: [{ ...cls, probes: [band(65536), band(4096)] }] }));
  t.same((await loadBaseline(file)).classes[0]!.probes!.map((e) => e.recipe.msgSize), [65536, 4096]);
  await writeFile(file, JSON.stringify({ version: 1, classes: [{ ...cls, probes: [band(65536), band(4096), band(65536)] }] }));
  await t.rejects(loadBaseline(file), exactly(`${file}: /classes/0/probes/2: duplicate probe path and recipe (as /classes/0/probes/0)`));
});
