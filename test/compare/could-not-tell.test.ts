// compare says "could not tell" as a minor difference, never a change and never "equivalent": a GPU↔NIC cell one side
// could not compute (`?`), and, against a baseline, every device or path of the class a check could not read (a
// non-root capture).
import t from 'tap';
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { captureClass } from '../../src/baseline/capture.js';
import { diffAgainstBaseline } from '../../src/compare/baseline.js';
import { compareInventories } from '../../src/compare/compare.js';
import { gpudirect } from '../../src/compare/node.js';
import { compareView } from '../../src/compare/view.js';
import { FsHost } from '../../src/host/fs-host.js';
import { buildInventory } from '../../src/inventory/build.js';
import { base, tree } from './trees.js';

const UNKNOWN_SIDE = 'One side could not tell: not root, a file absent, or a snapshot from an older gdrgate that did not record it (its notes say "not recorded"). Take the snapshot again, as root and with this gdrgate, before concluding.';

/** Every `config` under `dir` cut to the 64-byte header an unprivileged read gets. */
function nonRoot(dir: string): number {
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory() && !e.isSymbolicLink()) n += nonRoot(p);
    else if (e.name === 'config' && statSync(p).size > 64) {
      writeFileSync(p, readFileSync(p).subarray(0, 64));
      n++;
    }
  }
  return n;
}

t.test("a cell one side could not compute is minor (one side could not tell), never a major change of path", async (t) => {
  const dir = t.testdir({});
  const b = await tree(dir, 'b', base());
  const a = await tree(dir, 'a', base());
  const nic = path.join(a.root, 'sys/bus/pci/devices/0000:16:00.0');
  for (const f of ['numa_node', 'local_cpulist']) writeFileSync(path.join(nic, f), 'xyz\n');
  const d = compareInventories(await buildInventory(new FsHost(a.root)), b.inv);
  t.same(d.filter((x) => x.impact !== 'minor'), [], 'nothing major or critical');
  t.same(d.filter((x) => x.area === 'topology').map((x) => [x.impact, x.subject, x.a, x.b, x.response]), [['minor', '0000:33:00.0-mlx5_0', '?', 'NODE', UNKNOWN_SIDE]]);
});

t.test('a /proc/cmdline one side could not read is minor (could not tell), never a MAJOR change of IOMMU parameters', async (t) => {
  const dir = t.testdir({});
  const b = await tree(dir, 'b', base());
  const a = await tree(dir, 'a', base());
  writeFileSync(path.join(b.root, 'proc/cmdline'), 'BOOT_IMAGE=/vmlinuz ro intel_iommu=on iommu=pt\n');
  const c = await tree(dir, 'c', base());
  writeFileSync(path.join(c.root, 'proc/cmdline'), 'BOOT_IMAGE=/vmlinuz ro "intel_iommu=on" iommu=pt\n');
  const withB = await buildInventory(new FsHost(b.root));
  t.same(compareInventories(await buildInventory(new FsHost(c.root)), withB).filter((x) => x.area === 'iommu'), [], 'quoted as the kernel reads it: the same parameters');
  rmSync(path.join(a.root, 'proc/cmdline'));
  const d = compareInventories(await buildInventory(new FsHost(a.root)), withB).filter((x) => x.area === 'iommu');
  t.same(d.map((x) => [x.impact, x.subject, x.a, x.b, x.response]), [['minor', 'cmdline', 'not readable', 'intel_iommu=on iommu=pt', UNKNOWN_SIDE]]);
});

t.test('ib_uverbs one side could not tell (either side): minor, never "missing" nor "better"', async (t) => {
  const dir = t.testdir({});
  const v = compareView((await tree(dir, 'a', base())).inv);
  const [told, untold, off] = [{ ...v, ibUverbs: true }, { ...v, ibUverbs: null }, { ...v, ibUverbs: false }];
  const row = (a: typeof v, b: typeof v) => gpudirect(a, b).map((x) => [x.impact, x.area, x.subject, x.a, x.b, x.response]);
  t.same(row(off, untold), [['minor', 'gpudirect', 'ib_uverbs', 'absent', 'unknown', UNKNOWN_SIDE]], 'the reference could not tell');
  t.same(row(untold, told), [['minor', 'gpudirect', 'ib_uverbs', 'unknown', 'loaded', UNKNOWN_SIDE]], 'the suspect could not tell');
  t.same(row(off, told).map((x) => x.slice(0, 5)), [['major', 'gpudirect', 'ib_uverbs', 'absent', 'loaded']], 'both told: missing');
});

t.test('against a baseline, a capture read without root is not "equivalent": each check that could not tell is said', async (t) => {
  const dir = t.testdir({});
  const b = await tree(dir, 'b', base());
  const cls = captureClass(b.inv, { name: 'ref', match: ['*'], platform: 'bare-metal', at: '2026-12-04T00:00:00Z' }).cls;
  // (The generated tree has no /sys/class/thermal: a node-wide unknown the class does not record, not said.)
  t.same(diffAgainstBaseline(b.inv, cls), [], 'the reference node against its own class: equivalent');
  const a = await tree(dir, 'a', base());
  t.ok(nonRoot(a.root) > 10, 'every config cut to 64 bytes');
  const d = diffAgainstBaseline(await buildInventory(new FsHost(a.root)), cls);
  t.ok(d.length > 0, `${d.length} differences`);
  t.same([...new Set(d.map((x) => `${x.impact} ${x.response}`))], [`minor ${UNKNOWN_SIDE}`], 'all minor, all "one side could not tell"');
  t.same([...new Set(d.map((x) => x.area))].sort(), ['acs', 'aer', 'ats', 'payload', 'relaxed-ordering']);
  t.ok(d.every((x) => /^could not tell: /.test(x.a)), 'each says what could not be read');
});
