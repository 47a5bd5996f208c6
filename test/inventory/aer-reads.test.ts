// What pcie-aer adds to the inventory's reads (inventory/aer.ts), on the 8-GPU/8-NIC HGX tree (test/gen): the three
// aer_dev_* files per path device and the three aer_rootport_total_err_* on a root port; none for a device whose
// config space shows no AER capability (the kernel shows none then); one when aer_dev_correctable is absent (the
// files come as a group); all of them when config space cannot say (not root): unknown, never "no errors".
import t from 'tap';
import { existsSync, readFileSync, rmSync, truncateSync, unlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FsHost } from '../../src/host/fs-host.js';
import { buildInventory } from '../../src/inventory/build.js';
import type { Inventory } from '../../src/model/inventory.js';
import { parsePciConfig } from '../../src/parsers/pci-config.js';
import { allDevices, buildTree } from '../gen/sysfs-tree.js';
import { node as HGX } from '../gen/topologies/sglang30401-hgx-h100.js';
import { CountingHost } from '../helpers/counting-host.js';
import { scratchDir } from '../helpers/scratch.js';

const TMP = existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir();
const root = scratchDir('gdrgate-aer-reads-', TMP);
t.teardown(() => rmSync(root, { recursive: true, force: true }));
await buildTree(root, HGX);

const kind = new Map(allDevices(HGX).map((d) => [d.bdf, d.kind]));
async function counted(): Promise<{ inv: Inventory; reads: Map<string, string[]> }> {
  const host = new CountingHost(new FsHost(root));
  const inv = await buildInventory(host);
  const reads = new Map<string, string[]>();
  for (const d of inv.pci.values()) reads.set(d.bdf, host.calls.filter((c) => c.startsWith(`read ${d.sysPath}/aer_`)).map((c) => path.basename(c)));
  return { inv, reads };
}
const gpus = allDevices(HGX).filter((d) => d.kind === 'gpu').map((d) => d.bdf);
const nics = allDevices(HGX).filter((d) => d.kind === 'nic').map((d) => d.bdf);

t.test('every path device: three aer_dev_* reads, six on a root port', async (t) => {
  const { inv, reads } = await counted();
  t.equal(inv.pci.size, 48);
  for (const [bdf, r] of reads) t.equal(r.length, kind.get(bdf) === 'rootport' ? 6 : 3, `${bdf} (${kind.get(bdf)}): ${r.join(' ')}`);
  t.ok([...inv.pci.values()].every((d) => d.aer.correctable.state === 'present' && d.aer.fatal.state === 'present'), 'all read');
});

t.test('config space without an AER capability: no aer_* file opened, the counters absent', async (t) => {
  const { inv } = await counted();
  const gpu = inv.pci.get(gpus[0]!)!;
  const file = path.join(root, gpu.sysPath, 'config');
  const was = readFileSync(file);
  const at = parsePciConfig(was).aer;
  if (at.state !== 'present') return t.fail('the generated GPU has an AER capability');
  // The capability's ID turned into a vendor-specific one (0x000b): the list still ends where it did.
  const b = Buffer.from(was);
  b.writeUInt16LE(0x000b, at.value.offset);
  writeFileSync(file, b);
  t.teardown(() => writeFileSync(file, was));
  t.equal(parsePciConfig(b).aer.state, 'absent', 'the walk finds no AER capability');
  const after = await counted();
  t.same(after.reads.get(gpu.bdf), [], 'none of its aer_dev_* files is read, though the tree holds them');
  t.same(after.inv.pci.get(gpu.bdf)!.aer, { correctable: { state: 'absent' }, nonfatal: { state: 'absent' }, fatal: { state: 'absent' }, rootport: { state: 'absent' } });
  t.equal(after.reads.get(gpus[1]!)!.length, 3, 'the other GPUs as before');
});

t.test('no aer_dev_correctable (no AER service above the device): one read, all absent', async (t) => {
  const { inv } = await counted();
  const nic = inv.pci.get(nics[0]!)!;
  const names = ['aer_dev_correctable', 'aer_dev_nonfatal', 'aer_dev_fatal'];
  const saved = names.map((n) => [n, readFileSync(path.join(root, nic.sysPath, n))] as const);
  for (const n of names) unlinkSync(path.join(root, nic.sysPath, n));
  t.teardown(() => saved.forEach(([n, b]) => writeFileSync(path.join(root, nic.sysPath, n), b)));
  const after = await counted();
  t.same(after.reads.get(nic.bdf), ['aer_dev_correctable'], 'the group is absent after its first file');
  t.equal(after.inv.pci.get(nic.bdf)!.aer.fatal.state, 'absent');
});

t.test('config space that cannot say (a 64-byte read, not root): every file read, unknown stays unknown', async (t) => {
  const { inv } = await counted();
  const gpu = inv.pci.get(gpus[2]!)!;
  const file = path.join(root, gpu.sysPath, 'config');
  const was = readFileSync(file);
  truncateSync(file, 64);
  t.teardown(() => writeFileSync(file, was));
  const after = await counted();
  t.equal(after.reads.get(gpu.bdf)!.length, 3, 'all three read');
  t.equal(after.inv.pci.get(gpu.bdf)!.aer.correctable.state, 'present');
});

// The parse of a counter file is shared by every file of the same text and kind (a healthy node's files are alike):
// the kind is part of that, so a correctable file's text where the fatal one should be is still refused there.
t.test('files of the same text share their parse, never across kinds', async (t) => {
  const { inv } = await counted();
  const [a, b] = [inv.pci.get(gpus[0]!)!, inv.pci.get(gpus[1]!)!];
  t.equal(a.aer.correctable.state === 'present' && b.aer.correctable.state === 'present' && a.aer.correctable.value === b.aer.correctable.value, true, 'two GPUs with the same aer_dev_correctable text: one parse');
  const fatal = path.join(root, a.sysPath, 'aer_dev_fatal');
  const was = readFileSync(fatal);
  writeFileSync(fatal, readFileSync(path.join(root, a.sysPath, 'aer_dev_correctable')));
  t.teardown(() => writeFileSync(fatal, was));
  const after = await counted();
  const got = after.inv.pci.get(a.bdf)!.aer.fatal;
  t.same(got, { state: 'unknown', why: `${a.sysPath}/aer_dev_fatal: TOTAL_ERR_COR in the fatal file (want TOTAL_ERR_FATAL)` }, 'the correctable text is not a fatal file');
  t.equal(after.inv.pci.get(b.bdf)!.aer.fatal.state, 'present', 'the other GPU as before');
  t.ok(after.inv.notes.some((n) => n.startsWith(`${fatal.slice(root.length)}: TOTAL_ERR_COR`)), 'and a note names the file');
});

// aer_rootport_total_err_{cor,nonfatal,fatal} come as a group (aer_stats_rootport_attr_group): without _cor the
// group is absent; a group that is there in part, or a file of it unreadable, says nothing of the port: unknown.
t.test('root port totals: without _cor absent, in part unknown, a file not a count unknown with its why', async (t) => {
  const port = allDevices(HGX).find((d) => d.kind === 'rootport')!.bdf;
  const { inv } = await counted();
  const dir = inv.pci.get(port)!.sysPath;
  const file = (k: string): string => path.join(root, dir, `aer_rootport_total_err_${k}`);
  const saved = ['cor', 'nonfatal', 'fatal'].map((k) => [k, readFileSync(file(k))] as const);
  t.same(saved.map(([, b]) => b.toString()), ['0\n', '0\n', '0\n'], 'the generated port: no error');
  const restore = (): void => saved.forEach(([k, b]) => writeFileSync(file(k), b));
  t.teardown(restore);
  t.same(inv.pci.get(port)!.aer.rootport, { state: 'present', value: { cor: 0, nonfatal: 0, fatal: 0 } });
  const rootport = async (): Promise<unknown> => (await counted()).inv.pci.get(port)!.aer.rootport;
  unlinkSync(file('cor'));
  t.same(await rootport(), { state: 'absent' }, 'no _cor: no group, whatever else is there');
  restore();
  unlinkSync(file('fatal'));
  t.same(await rootport(), { state: 'unknown', why: `${dir}: only some aer_rootport_total_err_* files` }, 'no _fatal');
  restore();
  writeFileSync(file('nonfatal'), 'x\n');
  t.same(await rootport(), { state: 'unknown', why: `${dir}/aer_rootport_total_err_nonfatal: not a count: "x"` }, '_nonfatal not a count');
});
