// A node's spool read in part: a file of it not read (over the size cap) or one rail's lines all corrupt (a figure no
// link carries). The node is `incomplete` and says which input; the rail is never called absent ("no figure").
import t from 'tap';
import { readFileSync, truncateSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { runFleetReport } from '../../src/fleet/report-command.js';
import { MAX_READ_BYTES } from '../../src/samples/spool.js';
import { generateFleet } from '../gen/fleet.js';

const CLEAN = { 'link-x8': 0, 'acs-redirect': 0, firmware: 0, 'missing-nic': 0, 'weak-rail': 0 };

/** Each node's status, notes and rail findings, by name. */
const states = (r: Awaited<ReturnType<typeof runFleetReport>>['report']) =>
  [...r.nodes].sort((a, b) => (a.node < b.node ? -1 : 1)).map((v) => [v.node, v.status, v.rails.map((x) => `${x.kind} ${x.rail}`), v.notes]);

/** The five generated nodes as expected: gpu0003 incomplete for `why`, the others ok. */
const thirdIncomplete = (why: string) => ['gpu0001', 'gpu0002', 'gpu0003', 'gpu0004', 'gpu0005'].map((n) => (n === 'gpu0003' ? [n, 'incomplete', [], [why]] : [n, 'ok', [], []]));

t.test("an older spool file over the size cap, holding the only lines of one rail: incomplete, never 'no figure'", async (t) => {
  const dir = path.join(t.testdir(), 'fleet');
  await generateFleet(dir, { n: 5, seed: 7, rates: CLEAN });
  const live = path.join(dir, 'gpu0003.samples.jsonl');
  const lines = readFileSync(live, 'utf8').split('\n').filter(Boolean);
  writeFileSync(live, lines.filter((l) => !l.includes('"mlx5_7"')).join('\n') + '\n');
  const old = path.join(dir, 'gpu0003.samples.1.jsonl');
  writeFileSync(old, lines.filter((l) => l.includes('"mlx5_7"')).join('\n') + '\n');
  truncateSync(old, MAX_READ_BYTES + 1);
  const r = (await runFleetReport({ dir, baseline: null })).report;
  const why = `spool ${old}: ${MAX_READ_BYTES + 1} bytes, more than ${MAX_READ_BYTES} (rotation keeps files far smaller), skipped: not judged`;
  t.strictSame(states(r), thirdIncomplete(why));
  t.strictSame(r.problems, [], 'said on the node, not only for the report');
  t.equal(r.exitCode, 1);
});

t.test("one rail's spool lines all corrupt (1e300 Gb/s): that rail not judged, the node incomplete, never 'no figure'", async (t) => {
  const dir = path.join(t.testdir(), 'fleet');
  await generateFleet(dir, { n: 5, seed: 7, rates: CLEAN });
  const live = path.join(dir, 'gpu0003.samples.jsonl');
  const text = readFileSync(live, 'utf8');
  writeFileSync(live, text.split('\n').map((l) => (l.includes('"mlx5_2"') ? l.replace(/"value":[0-9.]+/, '"value":1e300') : l)).join('\n'));
  const r = (await runFleetReport({ dir, baseline: null })).report;
  const why = '5 corrupt spool lines skipped (no sample: bad JSON, a field out of range or a figure no link carries), not judged';
  t.strictSame(states(r), thirdIncomplete(why));
  t.equal(r.summary.absentRails, 0);
  t.equal(r.exitCode, 1);
});
