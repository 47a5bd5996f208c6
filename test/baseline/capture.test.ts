// `baseline capture` never writes what validate refuses, nor a class that expects nothing; validate says when a
// class expects no devices. On generated trees (test/gen) and the real HGX H100 layout.
import t from 'tap';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { captureClass } from '../../src/baseline/capture.js';
import { BASELINE_LIMITS } from '../../src/baseline/limits.js';
import { loadBaseline } from '../../src/baseline/load.js';
import { ConfigError } from '../../src/errors.js';
import { FsHost } from '../../src/host/fs-host.js';
import { MAX_FILE_BYTES } from '../../src/host/json-file.js';
import { buildInventory } from '../../src/inventory/build.js';
import type { Inventory } from '../../src/model/inventory.js';
import { buildTree, type GenDevice, type GenNode } from '../gen/sysfs-tree.js';
import { node as HGX } from '../gen/topologies/sglang30401-hgx-h100.js';
import { cli } from '../helpers/cli.js';
import { REPO } from '../helpers/paths.js';
import { scratchDirAsync, TREE_TMP } from '../helpers/scratch.js';

/** The HGX node with every GPU and ConnectX turned into a plain function: PCIe as it was, nothing to judge. */
function noDevices(): GenNode {
  const n = structuredClone(HGX);
  const strip = (ds: GenDevice[]): void => {
    for (const d of ds) {
      if (d.kind === 'gpu' || d.kind === 'nic') {
        d.kind = 'other';
        delete d.ib;
        delete d.vendor;
        delete d.device;
      }
      strip(d.children ?? []);
    }
  };
  for (const hb of n.hostBridges) strip(hb.devices);
  return n;
}

const OPTS = { name: 'x', match: ['*'], platform: 'bare-metal', at: '2026-01-01T00:00:00Z' } as const;

t.test('a tree with no GPU and no RDMA adapter: capture refuses (exit 2) unless --allow-empty; validate warns', async (t) => {
  const dir = t.testdir({});
  const tree = path.join(dir, 'tree');
  await buildTree(tree, noDevices());
  const inv = await buildInventory(new FsHost(tree));
  t.equal(inv.gpus.length + inv.nics.length, 0, 'the tree has neither');
  t.throws(() => captureClass(inv, OPTS), ConfigError, 'captureClass: a configuration error');
  const refused = cli(['baseline', 'capture', '--root', tree, '--class', 'empty']);
  t.equal(refused.code, 2, 'capture: exit 2');
  t.match(refused.stderr, /no GPU and no RDMA adapter.*--allow-empty/, 'says why and how to insist');
  t.equal(refused.stdout, '', 'writes nothing');
  const forced = cli(['baseline', 'capture', '--root', tree, '--class', 'empty', '--allow-empty']);
  t.equal(forced.code, 0, '--allow-empty: written');
  const file = path.join(dir, 'empty.json');
  writeFileSync(file, forced.stdout);
  const v = cli(['baseline', 'validate', file]);
  t.equal(v.code, 0, 'validate: still valid');
  t.match(v.stderr, /warning: .*class "empty" expects no devices/, 'validate: warns');
});

t.test('a node with a GPU keeps capturing as before, and validate has nothing to warn about', async (t) => {
  const dir = t.testdir({});
  const cap = cli(['baseline', 'capture', '--root', path.join(REPO, 'examples/h200-vm'), '--class', 'h200']);
  t.equal(cap.code, 0);
  writeFileSync(path.join(dir, 'b.json'), cap.stdout);
  const v = cli(['baseline', 'validate', path.join(dir, 'b.json')]);
  t.equal(v.code, 0);
  t.notMatch(v.stderr, /warning/);
});

/** The real HGX inventory with its GPU and NIC lists repeated: what a capture of a huge tree would be handed. */
function repeated(inv: Inventory, gpus: number, nics: number): Inventory {
  const many = <T>(xs: readonly T[], n: number): T[] => Array.from({ length: n }, (_, i) => xs[i % xs.length]!);
  return { ...inv, gpus: many(inv.gpus, gpus), nics: many(inv.nics, nics) };
}

t.test('capture refuses, before building it, a class larger than load accepts (the same numbers)', async (t) => {
  const dir = await scratchDirAsync('gdrgate-capture-', TREE_TMP);
  await buildTree(path.join(dir, 'hgx'), HGX);
  const inv = await buildInventory(new FsHost(path.join(dir, 'hgx')));
  t.equal(inv.gpus.length, 8);
  t.ok(captureClass(inv, OPTS).cls.paths.length === 64, 'the real node: 64 paths');
  // "Before building it", in counts rather than time: every device a capture describes is looked up in inv.pci, so
  // a refusal that came after building the paths would have read the map; the accepted capture below does.
  const counted = (x: Inventory): { inv: Inventory; gets: () => number } => {
    let gets = 0;
    const pci = new Map(x.pci);
    const get = pci.get.bind(pci);
    pci.get = (k) => (gets++, get(k));
    return { inv: { ...x, pci }, gets: () => gets };
  };
  const big = counted(repeated(inv, 300, 300));
  t.throws(() => captureClass(big.inv, OPTS), /90000 GPU↔NIC paths, more than the 65536/, '300 × 300: refused');
  t.equal(big.gets(), 0, 'at once: not one device looked up, no path built');
  t.throws(() => captureClass(repeated(inv, 4000, 200), OPTS), /more than the 65536/, '4000 × 200 paths');
  t.throws(() => captureClass(repeated(inv, 4097, 0), OPTS), /4097 devices, more than the 4096/, 'devices');
  const limit = counted(repeated(inv, 256, 256));
  t.ok(captureClass(limit.inv, OPTS).cls.paths.length === 65536, 'exactly the limit is written');
  t.ok(limit.gets() > 0, `and building it looks devices up (${limit.gets()} times): the count above can see a build`);
});

t.test('the limits are the schema maxItems and the file cap load reads with', async (t) => {
  const schema = JSON.parse(readFileSync(path.join(REPO, 'schemas/baseline.schema.json'), 'utf8')) as {
    properties: { classes: { maxItems: number } };
    $defs: { class: { properties: Record<'devices' | 'paths' | 'probes' | 'match', { maxItems: number }> } };
  };
  const c = schema.$defs.class.properties;
  t.same(
    { bytes: BASELINE_LIMITS.bytes, classes: BASELINE_LIMITS.classes, devices: BASELINE_LIMITS.devicesPerClass, paths: BASELINE_LIMITS.pathsPerClass, probes: BASELINE_LIMITS.probesPerClass, match: BASELINE_LIMITS.patternsPerClass },
    { bytes: MAX_FILE_BYTES, classes: schema.properties.classes.maxItems, devices: c.devices.maxItems, paths: c.paths.maxItems, probes: c.probes.maxItems, match: c.match.maxItems },
  );
  const dir = t.testdir({});
  const big = path.join(dir, 'big.json');
  const cls = { name: 'x', match: ['*'], platform: 'bare-metal', mechanism: 'any', memlockMin: 'unlimited', iommu: 'any', acsRedirectAllowed: true, gpuSpeedStrict: false, devices: [], paths: [] };
  writeFileSync(big, JSON.stringify({ version: 1, classes: [{ ...cls, paths: Array.from({ length: 65537 }, () => ({ gpu: '0000:18:00.0', nic: 'mlx5_0', class: 'PIX' })) }] }));
  await t.rejects(loadBaseline(big), /\/classes\/0\/paths/, 'load refuses one path more');
});

t.test('capture records payload sizes and ASPM per path device and the kernel policies; what it cannot read it leaves out', async (t) => {
  const dir = await scratchDirAsync('gdrgate-capture-', TREE_TMP);
  await buildTree(path.join(dir, 'root'), HGX);
  const inv = await buildInventory(new FsHost(path.join(dir, 'root')));
  const p = captureClass(inv, OPTS).cls.payload!;
  t.same([p.busPolicy, p.pcieAspm, p.aspmPolicy], ['default', 'default', 'default'], 'no pci= option, policy [default] as the live kernel writes it');
  t.same(p.devices.map((d) => d.bdf), [...inv.pci.keys()].sort(), 'every GPU, NIC and bridge on their paths');
  t.same(p.devices.find((d) => d.bdf === '0000:18:00.0'), { bdf: '0000:18:00.0', mps: 256, mrrs: 4096, aspm: 'Disabled', link: { l1_aspm: false } }, 'GPU0 as lspci shows an H100 on HGX');
  t.same(p.devices.find((d) => d.bdf === '0000:15:01.0'), { bdf: '0000:15:01.0', mps: 256, mrrs: 128, aspm: 'Disabled' }, 'a root port: no link/ attributes');
  // As a normal user (64-byte configs), with /proc/cmdline gone: only the policy file is known.
  const user = structuredClone(HGX);
  const all = (ds: GenDevice[]): GenDevice[] => ds.flatMap((d) => [d, ...all(d.children ?? [])]);
  for (const d of user.hostBridges.flatMap((h) => all(h.devices))) d.configBytes = 64;
  await buildTree(path.join(dir, 'user'), user);
  const { rm } = await import('node:fs/promises');
  await rm(path.join(dir, 'user/proc/cmdline'));
  t.same(captureClass(await buildInventory(new FsHost(path.join(dir, 'user'))), OPTS).cls.payload, { aspmPolicy: 'default', devices: [] });
  const file = path.join(dir, 'b.json');
  writeFileSync(file, JSON.stringify({ version: 1, classes: [captureClass(inv, OPTS).cls] }));
  t.equal(cli(['baseline', 'validate', file]).code, 0, 'the schema accepts it');
});
