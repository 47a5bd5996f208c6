// jsonPieces (src/report/json-pieces.ts) gives JSON.stringify(value, null, 2) byte for byte, whatever the shape:
// big arrays cut per element, small ones and objects walked into, the values JSON leaves out left out.
import t from 'tap';
import { coalesce, jsonPieces } from '../../src/report/json-pieces.js';

const cases: Record<string, unknown> = {
  scalars: [1, 'a', null, true, 2.5e-7, '↔ "quoted" \\ \n tab\t'],
  empty: { a: [], b: {}, c: [[]], d: [{}] },
  skipped: { a: undefined, b: () => 1, c: [undefined, () => 1], d: 'kept' },
  nested: { tool: 'gdrgate', classes: [{ name: 'x', paths: [{ points: Array.from({ length: 700 }, (_, i) => ({ node: `n${i}`, p50: i * 1.5, outlier: i % 7 ? null : 'low' })) }] }] },
  big: Array.from({ length: 300 }, (_, i) => ({ node: `gpu${i}`, differences: i % 3 ? [] : [{ a: 'x', b: 'y' }], rails: [[i]] })),
  top: 'a string alone',
  dates: { at: new Date(0), map: new Map([[1, 2]]) },
};

for (const [name, v] of Object.entries(cases)) {
  t.test(name, async (t) => {
    const want = JSON.stringify(v, null, 2);
    t.equal([...jsonPieces(v)].join(''), want, 'the pieces joined');
    t.equal([...coalesce(jsonPieces(v), 100)].join(''), want, 'coalesced');
  });
}

t.test('a big array is cut per element', async (t) => {
  const pieces = [...jsonPieces({ nodes: Array.from({ length: 1000 }, (_, i) => ({ i })) })];
  t.ok(pieces.length > 1000, `${pieces.length} pieces`);
  t.ok(Math.max(...pieces.map((p) => p.length)) < 40, 'none holds more than one element');
});
