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
