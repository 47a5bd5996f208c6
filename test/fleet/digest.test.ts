// The view key (src/fleet/digest.ts): what a node holds of its own (host name, boot, notes, pids, adapter GUIDs)
// is not in its compare view, so it changes neither the key nor any comparison; nodes built alike share a key and
// faulty ones do not; and the class facts are the same whether the comparisons are made per key or per node.
import t from 'tap';
import path from 'node:path';
import { compareInventories } from '../../src/compare/compare.js';
import { compareView } from '../../src/compare/view.js';
import { readNode } from '../../src/engine/evaluate.js';
import { viewKey } from '../../src/fleet/digest.js';
import { classFacts } from '../../src/fleet/facts.js';
import { readFleet } from '../../src/fleet/read.js';
import type { Inventory } from '../../src/model/inventory.js';
import { ABSENT, nul, present } from '../../src/model/fact.js';
import { generateFleet } from '../gen/fleet.js';

const EXAMPLE = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../../examples/h200-vm.tar.gz');

/** Other values for every field of the node's own: another file, host, boot, notes, pids and GUIDs. */
function otherOwn(inv: Inventory): Inventory {
  return {
    ...inv,
    root: `${inv.root}.elsewhere`,
    hostname: present(`${nul(inv.hostname) ?? 'x'}-other`),
    bootId: present('00000000-1111-2222-3333-444444444444'),
    notes: [...inv.notes, '/proc/x: a note of this node only'],
    memlock: inv.memlock.map((m, i) => ({ ...m, pid: m.pid === 'self' ? 4242 + i : 'self' })),
    nics: inv.nics.map((n, i) => ({ ...n, nodeGuid: n.nodeGuid.state === 'present' ? ABSENT : present(`0000:0000:0000:000${i}`) })),
  };
}

t.test("the key is the view's: a node's own fields are not in it, a compared field is", async (t) => {
  const { inv } = await readNode({ root: EXAMPLE, baseline: null, node: 'h200', trust: [] });
  const key = viewKey(compareView(inv));
  t.match(key, /^[0-9a-f]{64}$/);
  t.equal(viewKey(compareView(otherOwn(inv))), key, 'own fields are not in the key');
  t.not(viewKey(compareView({ ...inv, kernelRelease: present(`${nul(inv.kernelRelease) ?? ''}-1`) })), key, 'a compared field is');
  t.same(JSON.parse(JSON.stringify(compareView(inv))), compareView(inv), 'a view is plain JSON: written and read back, the same');
});

t.test('own fields change no comparison; alike nodes share a key, faulty ones do not; facts per key are facts per node', async (t) => {
  const dir = t.testdir();
  const plan = await generateFleet(dir, { n: 16, seed: 5, spools: false });
  const { read } = await readFleet(plan.map((n) => ({ node: n.name, file: path.join(dir, `${n.name}.tar.gz`) })), { workers: 0 });
  t.equal(read.length, 16);
  const fault = new Map(plan.map((n) => [n.name, n.fault]));
  const tree = (node: string): string => {
    const f = fault.get(node);
    return !f || f.kind === 'weak-rail' ? 'clean' : `${f.kind}-${f.rail}-${f.end ?? ''}`;
  };
  for (const a of read)
    for (const b of read) if (a !== b) t.equal(a.key === b.key, tree(a.node) === tree(b.node), `${a.node} and ${b.node}: one key exactly when one tree`);
  const inv = async (node: string): Promise<Inventory> => (await readNode({ root: path.join(dir, `${node}.tar.gz`), baseline: null, node, trust: [] })).inv;
  const clean = await inv(read.find((r) => tree(r.node) === 'clean')!.node);
  const faulty = read.filter((r) => tree(r.node) !== 'clean');
  t.ok(faulty.length >= 4, 'the faults that change the tree are there');
  for (const f of faulty) {
    const mine = await inv(f.node);
    const want = compareInventories(mine, clean);
    t.ok(want.length > 0, `${f.node} differs from ${clean.hostname}`);
    t.same(compareInventories(otherOwn(mine), clean), want, `${f.node}: its own fields changed, the same differences`);
    t.same(compareInventories(mine, otherOwn(clean)), want, `${f.node}: the reference's own fields changed, the same differences`);
    t.same(compareInventories(clean, otherOwn(mine)), compareInventories(clean, mine), `${f.node} as the reference`);
  }
  const perKey = classFacts(read);
  const perNode = classFacts(read.map(({ node, view }) => ({ node, view: JSON.parse(JSON.stringify(view)) as typeof view })));
  t.same(perKey, perNode, 'the same class facts compared per key and per node');
  t.same([...perKey.byNode.keys()].sort(), faulty.map((f) => f.node).sort(), 'every node of a faulty tree differs, no other');
});
