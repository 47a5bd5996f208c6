// A port's Target Link Speed (Link Control 2) is read only for a port whose PCIe link-speed cooling device is above
// state 0, and on a live node (a Host that reads parts of `config`, as sysfs allows) with one 2-byte read of its own:
// every other port costs no read more than before.
import t from 'tap';
import { rmSync } from 'node:fs';
import type { Host, ReadResult } from '../../src/host/host.js';
import { FsHost } from '../../src/host/fs-host.js';
import { buildInventory } from '../../src/inventory/build.js';
import { buildTree } from '../gen/sysfs-tree.js';
import { CountingHost } from '../helpers/counting-host.js';
import { scratchDirAsync } from '../helpers/scratch.js';
import { dev, hgx, P0, patches, put, runCheck } from '../checks/_trees.js';

/** FsHost over a tree, reading parts of a file as a live sysfs `config` is read (pread of the parts asked for). */
class PartsHost extends FsHost {
  override readonly readParts: NonNullable<Host['readParts']> = async <T>(p: string, pick: (at: (offset: number, length: number) => Uint8Array) => T): Promise<ReadResult<T>> => {
    const r = await this.readBytes(p, 4096);
    return r.ok ? { ok: true, value: pick((o, l) => r.value.subarray(o, o + l)) } : r;
  };
}

const cooling = (n: number, port: string, cur: number) =>
  patches(...Object.entries({ type: `PCIe_Port_Link_Speed_${port}`, cur_state: `${cur}`, max_state: '4' }).map(([k, v]) => put(`sys/class/thermal/cooling_device${n}/${k}`, `${v}\n`)));

t.test('a throttled port (state 2, Target Link Speed Gen3 of Gen5): one more read of its own config; a port at state 0: none', async (t) => {
  const dir = await scratchDirAsync('gdrgate-throttle-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const n = hgx();
  dev(n, P0.downGpu).targetSpeed = 8;
  await buildTree(dir, n);
  await patches(cooling(0, P0.rp, 0), cooling(1, P0.downGpu, 2))(dir);
  const host = new CountingHost(new PartsHost(dir));
  const inv = await buildInventory(host);
  const parts = (bdf: string): number => host.calls.filter((c) => c.startsWith('readParts ') && c.endsWith(`/${bdf}/config`)).length;
  t.same([parts(P0.rp), parts(P0.downGpu), parts(P0.downNic)], [1, 2, 1], 'config reads: the throttled port twice, the others once');
  const states = inv.pcieCooling.state === 'present' ? inv.pcieCooling.value.map((c) => [c.port, c.cur, c.target]) : [];
  t.same(states, [
    [P0.rp, { state: 'present', value: 0 }, { state: 'absent' }],
    [P0.downGpu, { state: 'present', value: 2 }, { state: 'present', value: 8 }],
  ]);
  const fs = runCheck('pcie-throttle', inv, null).map((f) => [f.status, f.code, f.subject, f.actual]);
  t.same(fs, [['pass', 'throttle-ok', P0.rp, 'state 0'], ['fail', 'throttle-on', P0.downGpu, 'Gen3, state 2']]);
});
