// A PCI domain above 0xffff (the kernel prints it "%04x": 10000 and up, as Intel VMD's domains and a VM's second PCI
// segment are named; hwloc's real 2pa-pcidomain32bits tree has pci10000:00) holds GPUs and adapters as any other:
// before, every name with a five-digit domain was passed over, so a GPU or an adapter there was silently not on the
// node (no check saw it, a baseline captured there had it missing). The two-socket tree with socket 1 moved to domain
// 10000, at the top (a second segment) and nested in a VMD endpoint's directory as drivers/pci/controller/vmd.c makes
// it, judges as the tree it came from, its addresses renamed.
import { existsSync, mkdirSync, readdirSync, readlinkSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { FsHost } from '../../src/host/fs-host.js';
import { buildInventory } from '../../src/inventory/build.js';
import { buildTree, type GenDevice, type GenNode } from '../gen/sysfs-tree.js';
import { node as TWO } from '../gen/topologies/two-socket-2gpu-2nic.js';
import { cli } from '../helpers/cli.js';
import { scratchDirAsync, TREE_TMP } from '../helpers/scratch.js';

const dir = await scratchDirAsync('gdrgate-domain-', TREE_TMP);
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

/** Socket 1's functions (buses 97-9b) in domain 10000. */
const wide = (s: string): string => s.replace(/(?<![0-9a-f])0000:(9[7-9a-b]):/g, '10000:$1:');
const move = (d: GenDevice): GenDevice => ({ ...d, bdf: wide(d.bdf), children: d.children?.map(move) });
const WIDE: GenNode = { ...TWO, hostBridges: TWO.hostBridges.map((hb, i) => (i === 1 ? { ...hb, domainBus: '10000:97', devices: hb.devices.map(move) } : hb)) };

type Finding = { check: string; status: string; code: string; subject: string; message: string };
const findings = (root: string): string[] => {
  const r = cli(['check', '--root', root, '--json']);
  if (r.stdout === '') throw new Error(`check ${root}: ${r.stderr}`);
  return (JSON.parse(r.stdout) as { findings: Finding[] }).findings.map((f) => JSON.stringify([f.check, f.status, f.code, f.subject, f.message])).sort();
};

const narrow = path.join(dir, 'narrow');
const top = path.join(dir, 'top');
await buildTree(narrow, TWO);
await buildTree(top, WIDE);
const want = findings(narrow).map(wide).sort();

t.test('a second PCI segment at 10000: the same GPUs, adapters and findings, renamed', async (t) => {
  const inv = await buildInventory(new FsHost(top));
  t.same(inv.gpus.map((g) => g.bdf), ['0000:18:00.0', '10000:9a:00.0']);
  t.same(inv.nics.map((n) => [n.name, n.bdf.state === 'present' ? n.bdf.value : n.bdf.state]), [['mlx5_0', '0000:19:00.0'], ['mlx5_1', '10000:9b:00.0']]);
  t.same(inv.pci.get('10000:9a:00.0')?.bridges, ['10000:97:01.0', '10000:98:00.0', '10000:99:00.0']);
  t.same(findings(top), want);
  // A baseline captured there names them (the schema took four digits alone) and the node passes against it.
  const base = path.join(dir, 'top.json');
  const cap = cli(['baseline', 'capture', '--root', top]);
  writeFileSync(base, cap.stdout);
  t.equal(cap.code, 0);
  t.same(cli(['baseline', 'validate', base]).code, 0);
  t.same(cli(['check', '--root', top, '--baseline', base]).code, 0);
});

// VMD: the domain's root bus in the directory of the VMD endpoint (a function of domain 0000), so the device's real
// path passes two host bridges; its ports are those below the nearer one, never the endpoint.
t.test("a VMD domain, nested in its endpoint's directory: the same findings, the endpoint on no device's path", async (t) => {
  const vmd = path.join(dir, 'vmd');
  await buildTree(vmd, WIDE);
  // Every link of the tree read before the move, each made again where the move puts it and what it names.
  const from = path.join(vmd, 'sys/devices/pci10000:97');
  const to = path.join(vmd, 'sys/devices/pci0000:15/0000:15:05.5/pci10000:97');
  const moved = (p: string): string => (p === from || p.startsWith(`${from}/`) ? to + p.slice(from.length) : p);
  const links = (d: string): [string, string][] => readdirSync(d, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(d, e.name);
    return e.isSymbolicLink() ? [[p, path.resolve(d, readlinkSync(p))] as [string, string]] : e.isDirectory() ? links(p) : [];
  });
  const all = links(vmd);
  mkdirSync(path.dirname(to), { recursive: true });
  renameSync(from, to);
  for (const [link, target] of all) {
    rmSync(moved(link));
    symlinkSync(path.relative(path.dirname(moved(link)), moved(target)), moved(link));
  }
  t.equal(all.filter(([l]) => !existsSync(moved(l))).length, 0, 'every link still resolves');
  const inv = await buildInventory(new FsHost(vmd));
  t.same(inv.gpus.map((g) => g.bdf), ['0000:18:00.0', '10000:9a:00.0']);
  t.same(inv.pci.get('10000:9a:00.0')?.bridges, ['10000:97:01.0', '10000:98:00.0', '10000:99:00.0']);
  t.equal(inv.pci.get('10000:9a:00.0')?.hostBridge, 'pci10000:97');
  t.same(findings(vmd), want);
});
