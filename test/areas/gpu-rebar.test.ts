// gpu-rebar, the family added through an area record only: its resize-mask parser, its fault grammar, its reads (absent, present, unknown), the fleet's majority picking it up, and compare's impact.
import { compareInventories } from '../../src/compare/compare.js';
import { compareView } from '../../src/compare/view.js';
import t from 'tap';
import { formatResizeMask, parseResizeMask } from '../../src/areas/gpu-rebar/parse.js';
import { formatFault, parseFault } from '../../src/drill/fault.js';
import { DrillHost } from '../../src/drill/overlay.js';
import { classFacts } from '../../src/fleet/facts.js';
import { FsHost } from '../../src/host/fs-host.js';
import { buildInventory } from '../../src/inventory/build.js';
import { sizesMiB } from '../gen/rebar-gen.js';
import { allDevices, buildTree } from '../gen/sysfs-tree.js';
import { node as HGX } from '../gen/topologies/sglang30401-hgx-h100.js';
import { scratchDir, TREE_TMP } from '../helpers/scratch.js';

t.test('resourceN_resize: "%016llx\\n", bit n = 2^n MiB', async (t) => {
  // 64 MiB (bit 6) to 128 GiB (bit 17): what a GPU offering its whole 128 GiB window shows.
  t.same(parseResizeMask('000000000003ffc0\n'), { ok: true, value: [6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17] });
  t.same(parseResizeMask('0000000000000000\n'), { ok: true, value: [] });
  t.equal(formatResizeMask([6, 17]), '0000000000020040\n');
  for (const bad of ['', '3ffc0', '0x000000000003ffc0', '000000000003ffcg', 'unknown']) t.equal(parseResizeMask(bad).ok, false, `malformed: ${JSON.stringify(bad)}`);
});

t.test('the fault grammar: max and a power-of-two size', async (t) => {
  t.same(parseFault('gpu-rebar:0000:18:00.0=max256M'), { ok: true, value: { kind: 'gpu-rebar', bdf: '0000:18:00.0', maxMiBLog2: 8 } });
  t.same(parseFault('gpu-rebar:0000:18:00.0=max16G'), { ok: true, value: { kind: 'gpu-rebar', bdf: '0000:18:00.0', maxMiBLog2: 14 } });
  const p = parseFault('gpu-rebar:0000:18:00.0=max1024M');
  t.equal(p.ok && formatFault(p.value), 'gpu-rebar:0000:18:00.0=max1G', 'printed in the largest exact unit');
  for (const [text, why] of [
    ['gpu-rebar:0000:18:00.0=256M', /max and a power-of-two size/],
    ['gpu-rebar:0000:18:00.0=max300M', /max and a power-of-two size/],
    ['gpu-rebar:18:00.0=max256M', /subject must be a GPU PCI address/],
  ] as const) {
    const r = parseFault(text);
    t.equal(r.ok, false, text);
    if (!r.ok) t.match(r.error, why);
  }
});

const GPU = '0000:18:00.0';
const node = structuredClone(HGX);
for (const d of allDevices(node)) if (d.kind === 'gpu' && d.bdf !== '0000:db:00.0') d.rebar = { 2: sizesMiB(64, 128 * 1024) };
const root = scratchDir('gdrgate-rebar-', TREE_TMP);
await buildTree(root, node);
const inv = await buildInventory(new FsHost(root));

t.test('read: present where the GPU shows resize files, absent where it shows none', async (t) => {
  const facts = inv.areas['gpu-rebar'];
  t.same(facts[GPU], { state: 'present', value: [{ bar: 2, sizes: [6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17] }] });
  const without = inv.gpus.map((g) => g.bdf).filter((b) => facts[b]?.state === 'absent');
  t.same(without, ['0000:db:00.0'], 'the GPU generated without a resizable BAR');
  t.equal(Object.keys(facts).length, inv.gpus.length, 'one fact per GPU');
});

t.test("the fleet's majority: three nodes, one capped by the drill's fault, is the one that deviates", async (t) => {
  const f = parseFault(`gpu-rebar:${GPU}=max256M`);
  if (!f.ok) throw new Error(f.error);
  const capped = await buildInventory(new DrillHost(new FsHost(root), f.value));
  const facts = classFacts([
    { node: 'gpu001', view: compareView(inv) },
    { node: 'gpu002', view: compareView(capped) },
    { node: 'gpu003', view: compareView(inv) },
  ]);
  const rebar = facts.facts.filter((x) => x.area === 'gpu-rebar');
  t.same(
    rebar.map((x) => ({ subject: x.subject, majority: x.majority, agree: x.agree, deviations: x.deviations.map((d) => `${d.node} ${d.impact} ${d.value}`) })),
    [{ subject: GPU, majority: 'BAR2 64 MiB–128 GiB', agree: 2, deviations: ['gpu002 major BAR2 64 MiB–256 MiB'] }],
  );
});

t.test('compare: the same largest size with a different smallest one is minor, never "smaller"', async (t) => {
  const other = structuredClone(node);
  for (const d of allDevices(other)) if (d.bdf === GPU) d.rebar = { 2: sizesMiB(256, 128 * 1024) };
  const r = scratchDir('gdrgate-rebar-', TREE_TMP);
  await buildTree(r, other);
  const got = compareInventories(await buildInventory(new FsHost(r)), inv).filter((d) => d.area === 'gpu-rebar');
  t.same(got.map((d) => [d.impact, d.subject, d.a, d.b]), [['minor', GPU, 'BAR2 256 MiB–128 GiB', 'BAR2 64 MiB–128 GiB']]);
});
