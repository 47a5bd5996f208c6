// The drill overlay over a generated HGX H100 tree: each fault makes exactly its own check fail, nothing else changes.
import { nul } from '../../src/model/fact.js';
import t from 'tap';

import path from 'node:path';
import { captureClass } from '../../src/baseline/capture.js';
import { parseFault } from '../../src/drill/fault.js';
import { DrillHost } from '../../src/drill/overlay.js';
import { FsHost } from '../../src/host/fs-host.js';
import type { Host } from '../../src/host/host.js';
import { buildInventory } from '../../src/inventory/build.js';
import { parsePciConfig } from '../../src/parsers/pci-config.js';
import { outcomeOf } from '../../src/runner/policy.js';
import { runChecks, selectChecks } from '../../src/runner/run.js';
import { buildTree } from '../gen/sysfs-tree.js';
import { aerReferenceOf } from '../../src/checks/aer-judge.js';
import { REPO } from '../helpers/paths.js';
import { node as HGX } from '../gen/topologies/sglang30401-hgx-h100.js';
import { scratchDir, TREE_TMP } from '../helpers/scratch.js';

const root = scratchDir('gdrgate-drill-hgx-', TREE_TMP);
await buildTree(root, HGX);
const plain = new FsHost(root);

const failing = async (h: Host): Promise<string[]> => {
  const o = outcomeOf(runChecks({ inv: await buildInventory(h), baseline: null }, selectChecks(undefined)));
  return o.kind === 'unhealthy' ? o.failing.map((f) => `${f.check} ${f.subject} ${f.actual ?? ''}`) : [];
};
const over = (text: string): DrillHost => {
  const f = parseFault(text);
  if (!f.ok) throw new Error(f.error);
  return new DrillHost(plain, f.value);
};

t.same(await failing(plain), [], 'the tree itself is healthy');

const cases: [string, string[]][] = [
  ['pcie-link:0000:18:00.0=x8', ['pcie-link 0000:18:00.0 Gen5 x8']],
  ['pcie-acs:0000:17:00.0=ReqRedir', ['pcie-acs 0000:17:00.0 ReqRedir']],
  ['pcie-acs:0000:17:01.0=EgressCtrl', ['pcie-acs 0000:17:01.0 EgressCtrl']],
  ['pcie-throttle:0000:17:00.0=2', ['pcie-throttle 0000:17:00.0 Gen3, state 2']],
  ['pcie-aer:0000:18:00.0=fatal', ['pcie-aer 0000:18:00.0 fatal 1, UESta MalfTLP']],
  ['pcie-aer:0000:19:00.0=nonfatal', ['pcie-aer 0000:19:00.0 non-fatal 1, UESta CmpltTO']],
  // The switch port above GPU0 at 512 bytes under its upstream port's 256: the MPS rule fails it, no baseline needed.
  ['pcie-payload:0000:17:00.0=mps512', ['pcie-payload 0000:17:00.0 512 bytes']],
  ['memlock=64K', ['memlock-limit self 64 KiB']],
  ['gpudirect-mechanism=none', ['gpudirect-mechanism node none']],
];
for (const [fault, want] of cases) {
  t.test(fault, async (t) => {
    t.same(await failing(over(fault)), want, `exactly one failing finding: ${want.join(', ')}`);
  });
}

t.test('gpu-bar1:0000:18:00.0=256M: the window shrinks, and the check fails against the unstaged node\'s baseline', async (t) => {
  const ref = captureClass(await buildInventory(plain), { name: 'ref', match: ['*'], platform: 'bare-metal', at: '2025-06-02T08:00:00Z' }).cls;
  const fs = runChecks({ inv: await buildInventory(over('gpu-bar1:0000:18:00.0=256M')), baseline: ref }, ['gpu-bar1']);
  t.same(fs.filter((f) => f.status !== 'pass').map((f) => `${f.status} ${f.code} ${f.subject} ${f.actual ?? ''}`), ['fail bar1-small 0000:18:00.0 256 MiB']);
});

t.test('pcie-relaxed-ordering:0000:19:00.0=off: DevCtl bit 4 cleared; a warning alone (GPU0 shares its switch)', async (t) => {
  const fs = runChecks({ inv: await buildInventory(over('pcie-relaxed-ordering:0000:19:00.0=off')), baseline: null }, ['pcie-relaxed-ordering']);
  t.same(fs.filter((f) => f.status !== 'pass').map((f) => `${f.status} ${f.code} ${f.subject} ${f.actual ?? ''}`), ['warn ro-off 0000:19:00.0 off']);
});

t.test('pcie-aer:0000:18:00.0=cor+150: 150 more correctable errors than the previous Prolog recorded fail the gate', async (t) => {
  const inv = await buildInventory(plain);
  const aerHistory = { against: 'the previous Prolog', ref: aerReferenceOf(inv, new Date('2025-06-02T09:00:00Z'), null), why: '' };
  const now = new Date('2025-06-02T10:00:00Z');
  const staged = await buildInventory(over('pcie-aer:0000:18:00.0=cor+150'));
  const o = outcomeOf(runChecks({ inv: staged, baseline: null, aerHistory, now }, selectChecks(undefined)));
  t.same(o.kind === 'unhealthy' ? o.failing.map((f) => `${f.check} ${f.subject} ${f.actual ?? ''}`) : [], ['pcie-aer 0000:18:00.0 +150']);
  t.same(outcomeOf(runChecks({ inv, baseline: null, aerHistory, now }, selectChecks(undefined))).kind, 'healthy', 'unstaged, against the same reference: healthy');
});

t.test('pcie-aer faults on a node without counters (the H200 VM\'s GPU): the status register alone fails it', async (t) => {
  const h200 = new FsHost(path.join(REPO, 'examples/h200-vm'));
  const f = parseFault('pcie-aer:0000:00:06.0=fatal');
  if (!f.ok) throw new Error(f.error);
  const fs = runChecks({ inv: await buildInventory(new DrillHost(h200, f.value)), baseline: null }, ['pcie-aer']);
  t.same(fs.map((x) => `${x.status} ${x.code} ${x.actual ?? ''}`), ['fail aer-uncorrectable UESta MalfTLP']);
});

t.test('pcie-payload:0000:19:00.0=mrrs256: MaxReadReq rewritten in Device Control; a warning against the unstaged node\'s baseline, a pass alone', async (t) => {
  const ref = captureClass(await buildInventory(plain), { name: 'ref', match: ['*'], platform: 'bare-metal', at: '2025-06-02T08:00:00Z' }).cls;
  const inv = await buildInventory(over('pcie-payload:0000:19:00.0=mrrs256'));
  t.equal(nul(nul(inv.pci.get('0000:19:00.0')!.config)!.pcie)?.devCtl.mrrs, 256, 'DevCtl MaxReadReq 256 bytes');
  t.equal(nul(nul(inv.pci.get('0000:19:00.0')!.config)!.pcie)?.devCtl.mps, 256, 'MaxPayload untouched');
  const bad = (baseline: typeof ref | null) => runChecks({ inv, baseline }, ['pcie-payload']).filter((f) => f.status !== 'pass').map((f) => `${f.status} ${f.code} ${f.subject} ${f.actual ?? ''}`);
  t.same(bad(ref), ['warn payload-changed 0000:19:00.0 MaxPayload 256 bytes, MaxReadReq 256 bytes, ASPM Disabled']);
  t.same(bad(null), []);
});

t.test('what the overlay answers, path by path', async (t) => {
  const GPU = '/sys/devices/pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:00.0/0000:18:00.0';
  const link = over('pcie-link:0000:18:00.0=x8');
  t.same(await link.readText(`${GPU}/current_link_width`), { ok: true, value: '8\n' }, 'current_link_width through the device path');
  t.same(await link.readText('/sys/bus/pci/devices/0000:18:00.0/current_link_width'), { ok: true, value: '8\n' }, 'and through /sys/bus/pci/devices');
  t.same(await link.readText('/sys/bus/pci/devices/0000:19:00.0/current_link_width'), await plain.readText('/sys/bus/pci/devices/0000:19:00.0/current_link_width'), 'the NIC beside it: unchanged');
  const cfg = await link.readBytes(`${GPU}/config`, 4096);
  t.equal(cfg.ok && nul(parsePciConfig(cfg.value).pcie)?.linkStatus?.width, 8, 'config Link Status says x8 too');
  t.same(await link.readText(`${GPU}/max_link_width`), await plain.readText(`${GPU}/max_link_width`), 'max_link_width unchanged');

  const acs = over('pcie-acs:0000:17:00.0=ReqRedir');
  const b = await acs.readBytes('/sys/bus/pci/devices/0000:17:00.0/config', 4096);
  const ctl = b.ok ? nul(parsePciConfig(b.value).acs)?.ctl : undefined;
  t.same(ctl, { srcValid: false, transBlk: false, reqRedir: true, cmpltRedir: false, upstreamFwd: false, egressCtrl: false, directTrans: false }, 'ACSCtl: ReqRedir only');
  const raw = await plain.readBytes('/sys/bus/pci/devices/0000:17:00.0/config', 4096);
  t.equal(raw.ok && b.ok && Buffer.compare(Buffer.from(raw.value), Buffer.from(b.value)) !== 0, true, 'the blob differs');
  const short = await acs.readBytes('/sys/bus/pci/devices/0000:17:00.0/config', 64);
  t.same(short, await plain.readBytes('/sys/bus/pci/devices/0000:17:00.0/config', 64), 'an unprivileged 64-byte read has no ACS to change');

  const ml = over('memlock=64K');
  const lim = await ml.readText('/proc/self/limits');
  t.same(lim.ok && lim.value.split('\n').filter((l) => l.startsWith('Max locked memory')), ['Max locked memory         65536            65536            bytes     '], '/proc/self/limits: 64 KiB soft and hard');
  t.same(lim.ok && lim.value.split('\n').filter((l) => l.startsWith('Max open files')), ['Max open files            20000                20000                files     '], 'other rows kept');

  const gd = over('gpudirect-mechanism=none');
  t.same(await gd.readText('/proc/driver/nvidia/version'), await plain.readText('/proc/driver/nvidia/version'), 'driver identity kept (no second finding)');
  t.same(await gd.readText('/proc/version'), { ok: true, value: 'Linux version 5.4.0-gdrgate-drill (buildd@lcy02-amd64-045) (gcc (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0, GNU ld (GNU Binutils for Ubuntu) 2.38) #101-Ubuntu SMP Tue Nov 14 13:30:08 UTC 2023\n' }, 'kernel older than DMA-BUF for RDMA (5.12)');
  t.same(await gd.readText('/sys/module/nvidia_peermem/version'), { ok: false, missing: true, reason: 'ENOENT: hidden by the drill' }, 'peermem version absent');
  t.same(await gd.lstat('/sys/module/nvidia_peermem'), { ok: false, missing: true, reason: 'ENOENT: hidden by the drill' }, 'peermem module dir absent');
  t.same(await gd.readText('/sys/kernel/mm/memory_peers/nv_mem/version'), { ok: false, missing: true, reason: 'ENOENT: hidden by the drill' }, 'nv_mem absent');
  const mods = await gd.list('/sys/module');
  t.ok(mods.ok && !mods.value.includes('nvidia_peermem') && mods.value.includes('nvidia'), '/sys/module listing without nvidia_peermem');
  t.same(await gd.readText('/proc/cmdline'), await plain.readText('/proc/cmdline'), 'unrelated files unchanged');
});

t.test('gpudirect-mechanism=none on a node that has nvidia_peermem loaded', async (t) => {
  const dir = scratchDir('gdrgate-drill-peermem-', TREE_TMP);
  await buildTree(dir, { ...structuredClone(HGX), peermem: true });
  const host = new FsHost(dir);
  t.same(await host.readText('/sys/module/nvidia_peermem/version'), { ok: true, value: '570.133.20\n' }, 'arranged: peermem loaded');
  t.same(await failing(host), [], 'healthy as it is');
  const f = parseFault('gpudirect-mechanism=none');
  if (!f.ok) throw new Error(f.error);
  const gd = new DrillHost(host, f.value);
  t.same(await failing(gd), ['gpudirect-mechanism node none'], 'under the drill: no mechanism at all');
  const mods = await gd.readText('/proc/modules');
  t.ok(mods.ok && !/^nvidia_peermem /m.test(mods.value) && /^nvidia /m.test(mods.value), '/proc/modules without nvidia_peermem');
  t.same(await gd.lstat('/sys/module/nvidia_peermem/version'), { ok: false, missing: true, reason: 'ENOENT: hidden by the drill' });
});
