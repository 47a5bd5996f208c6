// The fleet digest (src/fleet/digest.ts): an inventory split into the node's own fields and a shared part with a
// key gives back the very inventory; the own fields are ones compare never reads (changing them changes no
// difference); nodes built alike share a key and faulty ones do not; and the class facts are the same whether the
// comparisons are made per key or per node.
import { ABSENT, nul, present } from '../../src/model/fact.js';
import t from 'tap';
import path from 'node:path';
import { compareInventories } from '../../src/compare/compare.js';
import { readNode } from '../../src/engine/evaluate.js';
import { joinInventory, sharedFrom, splitInventory, type NodeOwn } from '../../src/fleet/digest.js';
import { classFacts } from '../../src/fleet/facts.js';
import { readFleet } from '../../src/fleet/read.js';
import type { Inventory } from '../../src/model/inventory.js';
import { generateFleet } from '../gen/fleet.js';

const EXAMPLE = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../../examples/h200-vm.tar.gz');

/** Other values for every own field: another file, host, boot, notes, pids and GUIDs. */
function otherOwn(inv: Inventory): Inventory {
  const own: NodeOwn = {
    root: `${inv.root}.elsewhere`,
    hostname: present(`${nul(inv.hostname) ?? 'x'}-other`),
    bootId: present('00000000-1111-2222-3333-444444444444'),
    notes: [...inv.notes, '/proc/x: a note of this node only'],
    pids: inv.memlock.map((m, i) => (m.pid === null ? 4242 + i : null)),
    guids: inv.nics.map((n, i) => (n.nodeGuid.state !== 'present' ? present(`0000:0000:0000:000${i}`) : ABSENT)),
  };
  // Joined onto the inventory itself: its objects as built (a deserialized copy may encode numbers differently, and
  // the key is of the bytes: alike keys mean alike values, not the converse).
  return joinInventory(inv, own);
}

t.test('split then join gives back the inventory; the key is the shared part\'s', async (t) => {
  const { inv } = await readNode({ root: EXAMPLE, baseline: null, node: 'h200', trust: [] });
  const s = splitInventory(inv);
  t.same(joinInventory(sharedFrom(s.bytes), s.own), inv, 'the example snapshot, joined back');
  t.match(s.key, /^[0-9a-f]{64}$/);
  const other = otherOwn(inv);
  t.not(other.hostname, inv.hostname);
  t.equal(splitInventory(other).key, s.key, 'own fields are not in the key');
  t.not(splitInventory({ ...inv, kernelRelease: present(`${nul(inv.kernelRelease) ?? ''}-1`) }).key, s.key, 'a compared field is');
  t.throws(() => joinInventory(sharedFrom(s.bytes), { ...s.own, pids: [...s.own.pids, 1] }), /do not fit/);
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
  const clean = read.find((r) => tree(r.node) === 'clean')!;
  const faulty = read.filter((r) => tree(r.node) !== 'clean');
  t.ok(faulty.length >= 4, 'the faults that change the tree are there');
  for (const f of faulty) {
    const want = compareInventories(f.inv, clean.inv);
    t.ok(want.length > 0, `${f.node} differs from ${clean.node}`);
    t.same(compareInventories(otherOwn(f.inv), clean.inv), want, `${f.node}: its own fields changed, the same differences`);
    t.same(compareInventories(f.inv, otherOwn(clean.inv)), want, `${f.node}: the reference's own fields changed, the same differences`);
    t.same(compareInventories(clean.inv, otherOwn(f.inv)), compareInventories(clean.inv, f.inv), `${f.node} as the reference`);
  }
  const perKey = classFacts(read);
  const perNode = classFacts(read.map(({ node, inv }) => ({ node, inv })));
  t.same(perKey, perNode, 'the same class facts compared per key and per node');
  t.same([...perKey.byNode.keys()].sort(), faulty.map((f) => f.node).sort(), 'every node of a faulty tree differs, no other');
});
