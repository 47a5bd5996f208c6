// The inventory's limits (inventory/limits.ts) and its paced reads (host/paced.ts): a listing past its limit refuses the run before any per-entry read, and a run past its deadline stops reading.
import t from 'tap';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { DeadlineError, LimitError } from '../../src/errors.js';
import type { Host } from '../../src/host/host.js';
import { openHost } from '../../src/host/open.js';
import { buildInventory } from '../../src/inventory/build.js';
import { INVENTORY_LIMITS, requireWithin } from '../../src/inventory/limits.js';
import { Deadline } from '../../src/runner/deadline.js';
import { H200 } from '../helpers/paths.js';
import { scratchDir } from '../helpers/scratch.js';

/** A Host that counts what reaches it. */
function counting(h: Host): { host: Host; reads: () => number } {
  let n = 0;
  const c = <A extends unknown[], R>(f: (...a: A) => R) => (...a: A): R => (n++, f(...a));
  return {
    host: { root: h.root, list: c(h.list.bind(h)), readText: c(h.readText.bind(h)), readBytes: c(h.readBytes.bind(h)), readLink: c(h.readLink.bind(h)), realPath: c(h.realPath.bind(h)), lstat: c(h.lstat.bind(h)), stat: c(h.stat.bind(h)), access: c(h.access.bind(h)), untrusted: (p) => h.untrusted(p) },
    reads: () => n,
  };
}

t.test('a listing past its limit: LimitError naming the count, before the entries are read', async (t) => {
  for (const [dir, limit, what] of [
    ['sys/class/infiniband', INVENTORY_LIMITS.rdmaDevices, 'RDMA devices in /sys/class/infiniband'],
    ['sys/class/thermal', INVENTORY_LIMITS.coolingDevices, 'cooling devices in /sys/class/thermal'],
  ] as const) {
    const root = scratchDir('gdrgate-limits-');
    for (let i = 0; i <= limit; i++) mkdirSync(path.join(root, dir, `e${i}`), { recursive: true });
    const c = counting(await openHost(root));
    const err = await buildInventory(c.host).then(() => null, (e: unknown) => e);
    t.ok(err instanceof LimitError, `${dir}: refused`);
    t.equal((err as Error).message, `${limit + 1} ${what}, more than the ${limit} gdrgate reads within its deadline: this node was not judged (docs/limits-and-state.md)`);
    t.ok(c.reads() < 100, `${dir}: refused after ${c.reads()} reads, not one per entry`);
  }
});

t.test('at its limit a listing is read', async (t) => {
  const root = scratchDir('gdrgate-limits-');
  for (let i = 0; i < INVENTORY_LIMITS.rdmaDevices; i++) mkdirSync(path.join(root, 'sys/class/infiniband', `mlx5_${i}`), { recursive: true });
  const inv = await buildInventory(await openHost(root));
  t.equal(inv.nics.length, INVENTORY_LIMITS.rdmaDevices);
});

t.test('GPU × adapter pairs past a baseline class\'s paths are refused', async (t) => {
  t.doesNotThrow(() => requireWithin('paths', INVENTORY_LIMITS.paths));
  t.throws(() => requireWithin('paths', INVENTORY_LIMITS.paths + 1), new LimitError(`${INVENTORY_LIMITS.paths + 1} GPU↔RDMA adapter pairs, more than the 65536 gdrgate reads within its deadline: this node was not judged (docs/limits-and-state.md)`));
});

t.test('a deadline already past: the inventory stops at its first reads, DeadlineError', async (t) => {
  const c = counting(await openHost(H200));
  const past = new Deadline(1, performance.now() - 10);
  const err = await buildInventory(c.host, { deadline: past }).then(() => null, (e: unknown) => e);
  t.ok(err instanceof DeadlineError, 'DeadlineError');
  t.equal((err as Error).message, 'deadline of 1 ms exceeded while reading the node');
  t.equal(c.reads(), 0, 'nothing reached the Host');
  const whole = counting(await openHost(H200));
  await buildInventory(whole.host, { deadline: new Deadline(600_000) });
  t.ok(whole.reads() > 0, `with time left the reads are made (${whole.reads()})`);
});
