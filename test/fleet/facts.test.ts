// The majority, not the first node: a reference that is itself in the minority is replaced and the comparison made
// again, so the differences are each node's against the majority (with compare's impact).
import t from 'tap';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { readNode } from '../../src/engine/evaluate.js';
import { compareView } from '../../src/compare/view.js';
import { response } from '../../src/compare/types.js';
import { classFacts } from '../../src/fleet/facts.js';
import { viewKey } from '../../src/fleet/digest.js';
import { buildFleetReport } from '../../src/fleet/report.js';
import { allDevices, buildTree } from '../gen/sysfs-tree.js';
import { faultyTree } from '../gen/fleet.js';

type Tree = ReturnType<typeof faultyTree>;
/** mlx5_4's PCI function in the generated tree. */
const nicOf = (tree: Tree) => allDevices(tree).find((d) => d.bdf === '0000:9b:00.0')!;
/** A node named `name` of the generated tree `tree` (the fleet generator's HGX H100), written under `dir` and read as compare views it. */
async function nodeOf(dir: string, name: string, tree: Tree): Promise<{ node: string; view: ReturnType<typeof compareView> }> {
  const root = path.join(dir, name);
  await buildTree(root, { ...tree, hostname: name });
  return { node: name, view: compareView((await readNode({ root, baseline: null, node: name, trust: [] })).inv) };
}

t.test('the first node (ACS redirect, same devices and links as the rest) is not taken as the majority', async (t) => {
  const dir = t.testdir();
  const nodes = [];
  for (const [name, fault] of [['a1', { kind: 'acs-redirect', rail: 2 }], ['a2', null], ['a3', null], ['a4', { kind: 'firmware', rail: 5 }]] as const) {
    const root = path.join(dir, name);
    await buildTree(root, { ...faultyTree(fault), hostname: name });
    nodes.push({ node: name, view: compareView((await readNode({ root, baseline: null, node: name, trust: [] })).inv) });
  }
  const f = classFacts(nodes);
  t.equal(f.reference, 'a2', 'the first node agreeing with the majority on every fact');
  t.same([...f.byNode.keys()].sort(), ['a1', 'a4']);
  const acs = f.facts.find((x) => x.area === 'acs')!;
  t.same(acs, {
    area: 'acs', subject: '0000:39:00.0', majority: 'ACSCtl all off', agree: 3, tie: false, impact: 'critical',
    deviations: [{ node: 'a1', value: 'ACSCtl SrcValid+ ReqRedir+ CmpltRedir+', impact: 'critical', response: 'Disable ReqRedir/CmpltRedir/EgressCtrl on the switch ports (BIOS ACS option or setpci at boot) on bare metal; keep only where the platform needs isolation.' }],
  });
  t.same(acs.deviations.map((d) => d.node), ['a1']);
  t.same(f.byNode.get('a4')![0], { impact: 'major', area: 'firmware', subject: 'mlx5_5', a: '28.40.1000', b: '28.39.1002', response: 'Flash the approved firmware (mlxfwmanager) or approve the new set fleet-wide.' });
  t.equal(f.facts[0]!.area, 'acs', 'worst first');
});

t.test('an empty class has nothing to disagree on', async (t) => {
  t.same(classFacts([]), { reference: null, facts: [], byNode: new Map() });
});

t.test('a fact with no majority (as many nodes on each side): neither side judged on it, each node says so, exit 1', async (t) => {
  const dir = t.testdir();
  const read = (name: string, fault: Parameters<typeof faultyTree>[0]) => nodeOf(dir, name, faultyTree(fault));
  // Two nodes, one with a GPU link trained at x8: before, the x8 node (the reference's side) was ok and the healthy one flagged.
  const nodes = [await read('b1', { kind: 'link-x8', rail: 0, end: 'gpu' }), await read('b2', null)];
  // The value shown first is the reference's: the node whose view key sorts first, whatever the nodes are called (the
  // first node by name before: renaming the two nodes swapped the values).
  const shown = viewKey(nodes[0]!.view) < viewKey(nodes[1]!.view) ? ['Gen5 x8', 'Gen5 x16'] : ['Gen5 x16', 'Gen5 x8'];
  const note = `no majority on link-width 0000:18:00.0: ${shown[0]} on 1, ${shown[1]} on 1 of 2: not judged`;
  for (const [x8, clean] of [['b1', 'b2'], ['b2', 'b1']] as const) {
    const named = [{ ...nodes[0]!, node: x8 }, { ...nodes[1]!, node: clean }];
    const r = buildFleetReport({ dir, nodes: named, classOf: () => 'hgx', stats: [], missing: [], problems: [] });
    t.same(r.classes[0]!.facts.filter((x) => x.tie).map((x) => [x.area, x.subject, x.majority]), [['link-width', '0000:18:00.0', shown[0]]], `x8 on ${x8}: the reference's value first`);
    t.same(r.nodes.map((v) => [v.node, v.status, v.differences.length, v.notes]), [['b1', 'incomplete', 0, [note]], ['b2', 'incomplete', 0, [note]]]);
    t.equal(r.exitCode, 1);
  }
  // With a third node the x8 one is the minority again: flagged, the other two ok.
  const three = buildFleetReport({ dir, nodes: [...nodes, await read('b3', null)], classOf: () => 'hgx', stats: [], missing: [], problems: [] });
  t.same(three.nodes.map((v) => [v.node, v.status]), [['b1', 'differs'], ['b2', 'ok'], ['b3', 'ok']]);
});

/** /sys/class/thermal/cooling_deviceN as the thermal core writes it for a PCIe port (drivers/thermal/pcie_cooling.c). */
async function portCooling(root: string, n: number, port: string, cur: number): Promise<void> {
  const d = path.join(root, `sys/class/thermal/cooling_device${n}`);
  await fsp.mkdir(d, { recursive: true });
  for (const [k, v] of Object.entries({ type: `PCIe_Port_Link_Speed_${port}`, cur_state: `${cur}`, max_state: '3' })) await fsp.writeFile(path.join(d, k), `${v}\n`);
}

// Two differences on one fact: the kernel holds the switch port above GPU 0 at Gen4 (its cooling device at state 1,
// Target Link Speed Gen4), so compare gives that port a throttle and a slower link, both link-speed differences of it.
t.test('a node with two differences on one fact shows both values, the worse impact, and counts once', async (t) => {
  const dir = t.testdir();
  const port = '0000:17:00.0';
  const nodes = [];
  for (const name of ['c1', 'c2', 'c3']) {
    const tree = faultyTree(null);
    if (name === 'c1') {
      const dsp = allDevices(tree).find((d) => d.bdf === port)!;
      Object.assign(dsp, { maxSpeed: 32, speed: 16, targetSpeed: 16 });
      Object.assign(dsp.children![0]!, { maxSpeed: 32, speed: 16 });
    }
    const root = path.join(dir, name);
    await buildTree(root, { ...tree, hostname: name });
    await portCooling(root, 0, port, name === 'c1' ? 1 : 0);
    nodes.push({ node: name, view: compareView((await readNode({ root, baseline: null, node: name, trust: [] })).inv) });
  }
  const f = classFacts(nodes);
  t.equal(f.reference, 'c2');
  const held = 'Find the thermal zone and trip point bound to the cooling device (/sys/class/thermal/thermal_zone*/cdev*) and fix the cooling; the state returns to 0 when the zone cools. Where no zone is bound, the target was set by firmware or by hand: `lspci -vvv -s <port>` shows LnkCtl2 Target Link Speed.';
  const idle = 'Confirm under load (nvidia-smi -q, Link Gen Current) before acting; set gpuSpeedStrict in the baseline to fail instead.';
  t.same(f.facts, [
    { area: 'link-speed', subject: port, majority: 'not throttled; Gen5 x16', agree: 2, tie: false, impact: 'critical', deviations: [{ node: 'c1', value: 'throttled, state 1; Gen4 x16', impact: 'critical', response: held }] },
    { area: 'link-speed', subject: '0000:18:00.0', majority: 'Gen5 x16', agree: 2, tie: false, impact: 'minor', deviations: [{ node: 'c1', value: 'Gen4 x16', impact: 'minor', response: idle }] },
  ], 'before: the class\'s side read "not throttled" alone');
  t.same([...f.byNode], [['c1', [
    { impact: 'critical', area: 'link-speed', subject: port, a: 'throttled, state 1; Gen4 x16', b: 'not throttled; Gen5 x16', response: held },
    { impact: 'minor', area: 'link-speed', subject: '0000:18:00.0', a: 'Gen4 x16', b: 'Gen5 x16', response: idle },
  ]]]);
});

/** A node's view: the HGX H100 tree with the switch port above GPU 0 at Gen4 (throttled by its cooling device or not). */
async function portView(dir: string, name: string, slow: 'no' | 'slower' | 'throttled'): Promise<{ node: string; view: ReturnType<typeof compareView> }> {
  const port = '0000:17:00.0';
  const tree = faultyTree(null);
  if (slow !== 'no') {
    const dsp = allDevices(tree).find((d) => d.bdf === port)!;
    // Throttled: the kernel lowered the port's Target Link Speed; slower: the link trained at Gen4 with Gen5 asked for.
    Object.assign(dsp, { maxSpeed: 32, speed: 16, targetSpeed: slow === 'throttled' ? 16 : 32 });
    Object.assign(dsp.children![0]!, { maxSpeed: 32, speed: 16 });
  }
  const root = path.join(dir, `${slow}-${name}`);
  await buildTree(root, { ...tree, hostname: name });
  await portCooling(root, 0, port, slow === 'throttled' ? 1 : 0);
  return { node: name, view: compareView((await readNode({ root, baseline: null, node: name, trust: [] })).inv) };
}

// One node's port is throttled and slower (two differences of one fact), another's only slower (one): the class's value
// of that fact was taken from whichever of the two sorted first by name, so renaming them changed the majority, its
// count and the values shown.
t.test('the class\'s value of a fact with two differences on one node and one on another does not depend on the names', async (t) => {
  const dir = t.testdir();
  const [x, y, z] = [await portView(dir, 'x', 'throttled'), await portView(dir, 'y', 'slower'), await portView(dir, 'z', 'no')];
  const held = 'Find the thermal zone and trip point bound to the cooling device (/sys/class/thermal/thermal_zone*/cdev*) and fix the cooling; the state returns to 0 when the zone cools. Where no zone is bound, the target was set by firmware or by hand: `lspci -vvv -s <port>` shows LnkCtl2 Target Link Speed.';
  const low = 'Check BIOS PCIe speed settings, retimers and AER counters; reseat; compare with the reference node.';
  const idle = 'Confirm under load (nvidia-smi -q, Link Gen Current) before acting; set gpuSpeedStrict in the baseline to fail instead.';
  for (const [tx, ty] of [['gpu0001', 'gpu0002'], ['gpu0002', 'gpu0001']] as const) {
    const nodes = [{ ...x, node: tx }, { ...y, node: ty }, ...['gpu0003', 'gpu0004', 'gpu0005'].map((node) => ({ ...z, node }))];
    const f = classFacts(nodes);
    const dev = (n: string, value: string, impact: 'critical' | 'major' | 'minor', response: string) => ({ node: n, value, impact, response });
    const byName = <T extends { node: string }>(xs: T[]): T[] => xs.sort((a, b) => (a.node < b.node ? -1 : 1));
    t.same(f.facts, [
      { area: 'link-speed', subject: '0000:17:00.0', majority: 'not throttled; Gen5 x16', agree: 3, tie: false, impact: 'critical', deviations: byName([dev(tx, 'throttled, state 1; Gen4 x16', 'critical', held), dev(ty, 'not throttled; Gen4 x16', 'major', low)]) },
      { area: 'link-speed', subject: '0000:18:00.0', majority: 'Gen5 x16', agree: 3, tie: false, impact: 'minor', deviations: [dev('gpu0001', 'Gen4 x16', 'minor', idle), dev('gpu0002', 'Gen4 x16', 'minor', idle)] },
    ], `throttled node ${tx}, slower node ${ty}`);
    t.same(f.byNode.get(ty), [
      { impact: 'major', area: 'link-speed', subject: '0000:17:00.0', a: 'not throttled; Gen4 x16', b: 'not throttled; Gen5 x16', response: low },
      { impact: 'minor', area: 'link-speed', subject: '0000:18:00.0', a: 'Gen4 x16', b: 'Gen5 x16', response: idle },
    ], 'the slower node against the class: both parts of the port, as the throttled node\'s');
  }
});

/**
 * One fact that two nodes of five differ on in two ways, each way giving compare a different branch: compare told the
 * reference's side of each branch in its own words, so the class read its value as two parts of one fact. Each case:
 * the two edits of the generated HGX H100 tree (nodes 3 and 4; 1, 2 and 5 clean) and the class's fact, told once.
 */
const toldOnce: [string, (tree: Tree) => Tree, (tree: Tree) => Tree, unknown][] = [
  [
    // `mlx5_4 ConnectX-7 at 0000:9b:00.0` against the missing node, `0000:9b:00.0` against the moved one.
    'an adapter missing on one node and moved on another',
    () => faultyTree({ kind: 'missing-nic', rail: 4 }),
    // The adapter answering at function 1 of its bus, under its old name.
    (tree) => ((nicOf(tree).bdf = '0000:9b:00.1'), tree),
    { area: 'device', subject: 'mlx5_4', majority: 'mlx5_4 ConnectX-7 at 0000:9b:00.0', agree: 3, tie: false, impact: 'critical', deviations: [
      { node: 'n3', value: 'missing', impact: 'critical', response: response('inventory-missing') },
      { node: 'n4', value: 'mlx5_4 ConnectX-7 at 0000:9b:00.1', impact: 'critical', response: response('topology-changed') },
    ] },
  ],
  [
    // `true` against the node caught loading it (could not tell), `loaded` against the one without it: `loaded; true`.
    // /proc/modules lists it Loading while its init runs; not loaded, it is neither listed nor under /sys/module.
    'ib_uverbs untold on one node and absent on another',
    (tree) => ((tree.moduleStates = { ib_uverbs: 'Loading' }), tree),
    (tree) => ((tree.modules = ['nvidia_uvm', 'nvidia_modeset', 'nvidia', 'mlx5_ib', 'ib_core', 'mlx5_core']), tree),
    { area: 'gpudirect', subject: 'ib_uverbs', majority: 'loaded', agree: 3, tie: false, impact: 'major', deviations: [
      { node: 'n3', value: 'unknown', impact: 'minor', response: response('unknown-side') },
      { node: 'n4', value: 'absent', impact: 'major', response: response('uverbs-missing') },
    ] },
  ],
  [
    // `MaxPayload 256 bytes, MaxReadReq 4096 bytes` against the first, `MaxPayload 256 bytes` against the second.
    "an adapter's MaxReadReq changed on one node and its MaxPayload above its port's on another",
    (tree) => ((nicOf(tree).mrrs = 512), tree),
    (tree) => ((nicOf(tree).mps = 512), tree),
    { area: 'payload', subject: '0000:9b:00.0', majority: 'MaxPayload 256 bytes, MaxReadReq 4096 bytes', agree: 3, tie: false, impact: 'critical', deviations: [
      { node: 'n3', value: 'MaxPayload 256 bytes, MaxReadReq 512 bytes', impact: 'major', response: response('payload-changed') },
      { node: 'n4', value: "MaxPayload 512 bytes above its port's 256, MaxReadReq 4096 bytes", impact: 'critical', response: response('payload-mps-over') },
    ] },
  ],
];
for (const [name, third, fourth, fact] of toldOnce)
  t.test(`${name}: the class's value is told once`, async (t) => {
    const dir = t.testdir();
    const trees = [faultyTree(null), faultyTree(null), third(faultyTree(null)), fourth(faultyTree(null)), faultyTree(null)];
    const nodes = await Promise.all(trees.map((tree, i) => nodeOf(dir, `n${i + 1}`, tree)));
    t.same(classFacts(nodes).facts, [fact]);
  });

// Three nodes alike with mlx5_4's MaxPayload above its port's, one without: compare told the spec violation against a
// reference that had the very same, so of the three alike nodes the one taken as the reference (the first by name)
// held a value of its own and was flagged critical against its twins.
t.test('nodes alike never differ: the one taken as the reference is not flagged against its twins', async (t) => {
  const dir = t.testdir();
  const read = async (name: string, mps: number) => {
    const tree = faultyTree(null);
    nicOf(tree).mps = mps;
    return (await nodeOf(dir, name, tree)).view;
  };
  const [over, clean] = [await read('over', 512), await read('clean', 256)];
  for (const names of [['g1', 'g2', 'g3', 'g4'], ['g4', 'g3', 'g2', 'g1']]) {
    const nodes = [over, over, over, clean].map((view, i) => ({ node: names[i]!, view }));
    t.same(classFacts(nodes).facts, [{
      area: 'payload', subject: '0000:9b:00.0', majority: 'MaxPayload 512 bytes, MaxReadReq 4096 bytes', agree: 3, tie: false, impact: 'major',
      deviations: [{ node: names[3]!, value: 'MaxPayload 256 bytes, MaxReadReq 4096 bytes', impact: 'major', response: response('payload-changed') }],
    }], `the node without it is ${names[3]}`);
  }
});
