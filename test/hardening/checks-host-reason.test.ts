// A Host's reason reaches a finding once: no doubled errno prefix, no path named twice (issue: "memlock not
// readable: ENOENT: ENOENT: no such file or directory, open '…'").
import t from 'tap';
import { CHECKS } from '../../src/checks/index.js';
import { FsHost } from '../../src/host/fs-host.js';
import { buildInventory } from '../../src/inventory/build.js';
import { readWhy } from '../../src/inventory/read.js';
import { HGX, inventoryOf, P0, unreadable } from '../checks/_trees.js';

/** An errno said twice (`ENOENT: ENOENT:`). */
const doubled = /\b(E[A-Z]+): \1:/;

t.test('readWhy names the path once', async (t) => {
  t.equal(readWhy('/sys/x', "EISDIR: illegal operation on a directory, read '/tmp/r/sys/x'"), "EISDIR: illegal operation on a directory, read '/tmp/r/sys/x'");
  t.equal(readWhy('/sys/x', 'link leaves the root'), '/sys/x: link leaves the root');
});

t.test('an unreadable numa_node reaches topology-distance with its path once', async (t) => {
  const inv = await inventoryOf(HGX, unreadable(`sys/bus/pci/devices/${P0.gpu}/numa_node`));
  const n = inv.pci.get(P0.gpu)!.numaNode;
  t.equal(n.state, 'unknown');
  if (n.state === 'unknown') t.equal(n.why.split('numa_node').length - 1, 1, `the path once: ${n.why}`);
});

// The doubled errno comes from the Host's own wrap (src/host/fs-host.ts fail(): `${code}: ${e.message}`, and
// node:fs messages start with the code already); it holds once that wrap keeps e.message as it is.
t.test('memlock of a process whose limits file is gone: one ENOENT', async (t) => {
  const inv = await buildInventory(new FsHost(t.testdir({ proc: { self: {} } })));
  const f = CHECKS.find((c) => c.id === 'memlock-limit')!.run({ inv, baseline: null });
  t.match(f[0], { status: /^skip$/, code: /^memlock-unknown$/ });
  const msg = f[0]?.message ?? '';
  t.notMatch(msg, doubled);
  t.equal(msg.split('proc/self/limits').length - 1, 1, `the path once: ${msg}`);
});
