// A class may hold one probe path measured with several recipes (bands are judged only against samples of the same
// recipe): load takes them, and refuses the same path and recipe twice, naming both entries.
import t from 'tap';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { loadBaseline } from '../../src/baseline/load.js';
import type { BaselineEnvelope } from '../../src/model/baseline.js';
import { baselineOf, HGX } from '../checks/_trees.js';
import { recipeHash } from '../../src/samples/sample.js';
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

t.test('the same recipe with its keys in another order is the same recipe: refused as the second band of the path', async (t) => {
  // The epilog knows a recipe by its canonical JSON (samples/sample.ts recipeHash): two such bands would be one key
  // there, and the later would silently replace the earlier.
  const cls = await baselineOf(HGX);
  const file = path.join(t.testdir(), 'baseline.json');
  const first = band(65536);
  const reordered = { ...first, recipe: Object.fromEntries(Object.entries(first.recipe).reverse()) as unknown as BaselineEnvelope['recipe'], warnBelow: 10, failBelow: 5 };
  t.equal(recipeHash(reordered.recipe), recipeHash(first.recipe), 'one recipe to the epilog');
  await writeFile(file, JSON.stringify({ version: 1, classes: [{ ...cls, probes: [first, reordered] }] }));
  await t.rejects(loadBaseline(file), exactly(`${file}: /classes/0/probes/1: duplicate probe path and recipe (as /classes/0/probes/0)`));
});
