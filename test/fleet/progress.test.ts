// The progress line: nodes read of total, the slowest pending once it has waited a second; redrawn at most every
// 100 ms, the last state always, cleared at the end.
import t from 'tap';
import { progressLine, progressWriter } from '../../src/fleet/progress.js';
import { readFleet, type FleetProgress } from '../../src/fleet/read.js';

t.test('progressLine', async (t) => {
  t.equal(progressLine({ done: 3, total: 10, slowest: null }), 'gdrgate fleet: 3/10 nodes read');
  t.equal(progressLine({ done: 3, total: 10, slowest: { node: 'gpu0007', ms: 2500 } }), 'gdrgate fleet: 3/10 nodes read; slowest pending gpu0007 (2.5 s)');
  t.equal(progressLine({ done: 3, total: 10, slowest: { node: 'gpu0007', ms: 200 } }), 'gdrgate fleet: 3/10 nodes read', 'not yet slow');
});

t.test('progressWriter throttles, always shows the end, clears', async (t) => {
  let now = 0;
  const said: string[] = [];
  const w = progressWriter((s) => void said.push(s), 100, () => now);
  w.update({ done: 1, total: 3, slowest: null });
  now = 50;
  w.update({ done: 2, total: 3, slowest: null });
  w.update({ done: 3, total: 3, slowest: null });
  w.done();
  t.same(said, ['\r\u001b[2Kgdrgate fleet: 1/3 nodes read', '\r\u001b[2Kgdrgate fleet: 3/3 nodes read', '\r\u001b[2K']);
});

t.test('readFleet reports every node done, and a missing file as a missing node', async (t) => {
  const seen: FleetProgress[] = [];
  const r = await readFleet([{ node: 'a', file: '/nonexistent/a.tar.gz' }, { node: 'b', file: '/nonexistent/b.tar.gz' }], { onProgress: (p) => void seen.push(p), concurrency: 2 });
  t.same(r.missing.map((m) => m.node), ['a', 'b']);
  t.same(seen.map((p) => p.done), [0, 1, 2]);
  t.equal(seen[1]!.slowest?.node, 'b', 'the pending one is named');
});
