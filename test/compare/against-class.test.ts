// compare against a baseline class (diffAgainstBaseline): the impact each flagged finding gets, on generated trees.
import t from 'tap';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { captureClass } from '../../src/baseline/capture.js';
import { diffAgainstBaseline } from '../../src/compare/baseline.js';
import { FsHost } from '../../src/host/fs-host.js';
import { buildInventory } from '../../src/inventory/build.js';
import { base, dev, pair, tree } from './trees.js';

type Line = [impact: string, area: string, subject: string, a: string, b: string];
const lines = (ds: ReturnType<typeof diffAgainstBaseline>): Line[] => ds.map((d) => [d.impact, d.area, d.subject, d.a, d.b]);

/** /sys/class/thermal/cooling_deviceN as the thermal core writes it for a PCIe port (drivers/thermal/pcie_cooling.c). */
function portCooling(root: string, n: number, bdf: string, cur: number, max = 3): void {
  const d = path.join(root, `sys/class/thermal/cooling_device${n}`);
  mkdirSync(d, { recursive: true });
  for (const [k, v] of Object.entries({ type: `PCIe_Port_Link_Speed_${bdf}`, cur_state: `${cur}`, max_state: `${max}` })) writeFileSync(path.join(d, k), `${v}\n`);
}

const classOf = async (dir: string): Promise<ReturnType<typeof captureClass>['cls']> =>
  captureClass((await tree(dir, 'ref', base())).inv, { name: 'ref', match: ['*'], platform: 'bare-metal', at: '2026-12-04T00:00:00Z' }).cls;

t.test('a port the kernel holds below full speed (cooling state 2, Target Link Speed Gen3) is a critical link-speed difference', async (t) => {
  const dir = t.testdir({});
  const cls = await classOf(dir);
  const n = base();
  dev(n, '0000:12:00.0').targetSpeed = 8;
  const sus = await tree(dir, 'sus', n);
  portCooling(sus.root, 0, '0000:12:00.0', 2);
  t.same(lines(diffAgainstBaseline(await buildInventory(new FsHost(sus.root)), cls)), [['critical', 'link-speed', '0000:12:00.0', 'Gen3, state 2', 'Target Link Speed Gen5']]);
});

t.test('a GPU↔NIC path farther than the class records (pair 1 on socket 1: NODE → SYS) is critical, its NUMA moves major', async (t) => {
  const dir = t.testdir({});
  const cls = await classOf(dir);
  const n = base();
  n.hostBridges[1] = pair(1, 1);
  const got = lines(diffAgainstBaseline((await tree(dir, 'sus', n)).inv, cls));
  t.same(got, [
    ['critical', 'topology', '0000:13:00.0-mlx5_1', 'SYS', 'NODE'],
    ['critical', 'topology', '0000:33:00.0-mlx5_0', 'SYS', 'NODE'],
    ...['0000:33:00.0', '0000:36:00.0', '0000:32:00.0', '0000:32:01.0'].map((b): Line => ['major', 'numa', b, '1', '0']),
  ]);
});

t.test('every code a node check may fail or warn with has its place in compare: none is dropped as "equivalent"', async (t) => {
  const { CHECKS } = await import('../../src/checks/index.js');
  const { MAP, NOT_A_DIFFERENCE } = await import('../../src/compare/baseline.js');
  const codes = CHECKS.flatMap((c) => Object.keys(c.codes));
  // driver-mismatch and topology-changed are placed by their subject and status (toDifference), not the table.
  const unplaced = codes.filter((c) => !NOT_A_DIFFERENCE.test(c) && !Object.hasOwn(MAP, c) && c !== 'driver-mismatch' && c !== 'topology-changed');
  t.same(unplaced, [], 'before: inventory-not-responding, iommu-group-split, iommu-group-shared, iommu-kernel-domain, acs-mask, acs-platform-mismatch, gres-cores-far, gres-cores-none, peer-mapping-missing');
});

t.test('a GPU whose config space reads all ones (fallen off the bus) is a critical device difference, not "could not tell"', async (t) => {
  const dir = t.testdir({});
  const cls = await classOf(dir);
  const sus = await tree(dir, 'sus', base());
  const { readdirSync, readFileSync, statSync } = await import('node:fs');
  // The GPU of pair 0 (0000:13:00.0), found where the tree put it.
  const find = (d: string): string | null => {
    for (const e of readdirSync(d)) {
      const p = path.join(d, e);
      if (e === '0000:13:00.0' && statSync(p).isDirectory()) return p;
      if (statSync(p, { throwIfNoEntry: false })?.isDirectory() && /^(pci|0000:)/.test(e)) {
        const r = find(p);
        if (r) return r;
      }
    }
    return null;
  };
  const gpu = find(path.join(sus.root, 'sys/devices'))!;
  const config = path.join(gpu, 'config');
  writeFileSync(config, Buffer.alloc(readFileSync(config).length, 0xff));
  const got = lines(diffAgainstBaseline(await buildInventory(new FsHost(sus.root)), cls)).filter(([impact]) => impact !== 'minor');
  t.same(got.map(([impact, area, subject]) => [impact, area, subject]), [['critical', 'device', '0000:13:00.0']], 'before: minor differences only ("could not tell")');
});
