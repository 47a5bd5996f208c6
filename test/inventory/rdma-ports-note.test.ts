// An RDMA adapter's ports/ that could not be listed (EACCES, EIO; not ENOENT) is said in the run's notes, never taken
// silently for "no ports" (the inventory line and the NCCL topology file show them; no check judges them).
import t from 'tap';
import type { Host, ReadResult } from '../../src/host/host.js';
import { FsHost } from '../../src/host/fs-host.js';
import { buildInventory } from '../../src/inventory/build.js';
import { buildTree } from '../gen/sysfs-tree.js';
import { hgx } from '../checks/_trees.js';
import { scratchDir, TREE_TMP } from '../helpers/scratch.js';

const root = scratchDir('gdrgate-ports-', TREE_TMP);
await buildTree(root, hgx());
const PORTS = '/sys/class/infiniband/mlx5_0/ports';

/** FsHost whose listing of mlx5_0's ports/ fails as `r` says. */
function listing(r: ReadResult<string[]> | null): Host {
  const fs = new FsHost(root);
  return new Proxy(fs, {
    get(target, prop, recv) {
      if (prop === 'list' && r !== null) return (p: string) => (p === PORTS ? Promise.resolve(r) : target.list(p));
      const v = Reflect.get(target, prop, recv) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}
const seen = async (h: Host) => {
  const inv = await buildInventory(h);
  return { ports: inv.nics.find((n) => n.name === 'mlx5_0')!.ports.length, notes: inv.notes.filter((x) => x.includes(PORTS)) };
};

t.test('listed: its port, no note', async (t) => {
  t.same(await seen(listing(null)), { ports: 1, notes: [] });
});

t.test('the listing failing (EIO): no port shown, and the note says why', async (t) => {
  const r = await seen(listing({ ok: false, missing: false, reason: 'EIO: i/o error, scandir' }));
  t.equal(r.ports, 0);
  t.equal(r.notes.length, 1, r.notes.join('\n'));
  t.equal(r.notes[0]!.endsWith('EIO: i/o error, scandir'), true, r.notes[0]!);
});

t.test('absent (ENOENT): no port, no note (an adapter without ports/)', async (t) => {
  t.same(await seen(listing({ ok: false, missing: true, reason: 'ENOENT' })), { ports: 0, notes: [] });
});
