// The area registry kept honest, as test/checks/registry.test.ts keeps the checks: every record has a fault case (the drill stages it), a compare case (compare sees it against the unstaged node) and an unknown case (a file it reads made unreadable is never a difference of substance).
import t from 'tap';
import { AREAS, type AreaId } from '../../src/areas/index.js';
import { compareInventories } from '../../src/compare/compare.js';
import type { Difference } from '../../src/compare/types.js';
import { parseFault } from '../../src/drill/fault.js';
import { DrillHost } from '../../src/drill/overlay.js';
import { FsHost } from '../../src/host/fs-host.js';
import type { AccessAnswer, Host, ReadResult, StatInfo } from '../../src/host/host.js';
import { buildInventory } from '../../src/inventory/build.js';
import type { Inventory } from '../../src/model/inventory.js';
import { allDevices, buildTree } from '../gen/sysfs-tree.js';
import { sizesMiB } from '../gen/rebar-gen.js';
import { node as HGX } from '../gen/topologies/sglang30401-hgx-h100.js';
import { scratchDir, TREE_TMP } from '../helpers/scratch.js';

interface AreaCase {
  /** A fault of the family, staged by the drill on the generated HGX H100 node. */
  readonly fault: string;
  /** compare (staged node against the unstaged one): exactly these differences, `impact area subject: a / b`. */
  readonly compare: readonly string[];
  /** Files the family reads, made unreadable on the suspect: exactly these differences (none, or "could not tell"). */
  readonly unreadable: RegExp;
  readonly unknown: readonly string[];
}

// One entry per record: the compiler refuses a registry id without its cases.
const CASES: Readonly<Record<AreaId, AreaCase>> = {
  'pcie-link': {
    fault: 'pcie-link:0000:18:00.0=x8',
    compare: ['critical link-width 0000:18:00.0: Gen5 x8 / Gen5 x16'],
    unreadable: /\/0000:18:00\.0\/(config|(current|max)_link_(speed|width))$/,
    unknown: ['minor payload 0000:18:00.0: not readable / MaxPayload 256 bytes, MaxReadReq 4096 bytes'],
  },
  'pcie-acs': {
    fault: 'pcie-acs:0000:17:00.0=ReqRedir',
    compare: ['critical acs 0000:17:00.0: ACSCtl ReqRedir+ / ACSCtl all off'],
    unreadable: /\/0000:17:00\.0\/config$/,
    unknown: ['minor acs 0000:17:00.0: not readable / ACSCtl all off', 'minor payload 0000:17:00.0: not readable / MaxPayload 256 bytes, MaxReadReq 128 bytes'],
  },
  'pcie-relaxed-ordering': {
    fault: 'pcie-relaxed-ordering:0000:19:00.0=off',
    compare: ['major relaxed-ordering 0000:19:00.0: RlxdOrd- / RlxdOrd+'],
    unreadable: /\/0000:19:00\.0\/config$/,
    unknown: ['minor relaxed-ordering 0000:19:00.0: not readable / RlxdOrd+', 'minor payload 0000:19:00.0: not readable / MaxPayload 256 bytes, MaxReadReq 4096 bytes'],
  },
  'pcie-throttle': {
    fault: 'pcie-throttle:0000:17:00.0=2',
    compare: ['critical link-speed 0000:17:00.0: throttled, state 2 / not throttled'],
    unreadable: /^\/sys\/class\/thermal$/,
    unknown: [],
  },
  'pcie-aer': {
    fault: 'pcie-aer:0000:18:00.0=fatal',
    compare: ['critical aer 0000:18:00.0: uncorrectable: aer_dev_fatal 1 (MalfTLP 1); UESta MalfTLP (severity fatal) / no uncorrectable error'],
    unreadable: /\/0000:18:00\.0\/(config|aer_dev_\w+)$/,
    unknown: ['minor aer 0000:18:00.0: no AER counters (aer_dev_* unknown) / aer_dev_* counters', 'minor payload 0000:18:00.0: not readable / MaxPayload 256 bytes, MaxReadReq 4096 bytes'],
  },
  'pcie-payload': {
    fault: 'pcie-payload:0000:17:00.0=mps512',
    compare: ['critical payload 0000:17:00.0: MaxPayload 512 bytes above its port\'s 256, MaxReadReq 128 bytes / MaxPayload 256 bytes, MaxReadReq 128 bytes'],
    unreadable: /\/0000:17:00\.0\/config$/,
    unknown: ['minor acs 0000:17:00.0: not readable / ACSCtl all off', 'minor payload 0000:17:00.0: not readable / MaxPayload 256 bytes, MaxReadReq 128 bytes'],
  },
  'gpu-bar1': {
    fault: 'gpu-bar1:0000:18:00.0=256M',
    compare: ['critical bar1 0000:18:00.0: 256 MiB / 128 GiB'],
    unreadable: /\/0000:18:00\.0\/resource$/,
    unknown: ['minor bar1 0000:18:00.0: not readable / 128 GiB'],
  },
  'gpu-rebar': {
    fault: 'gpu-rebar:0000:18:00.0=max256M',
    // The cap cuts the window too, as a firmware with Resizable BAR capped leaves it: gpu-bar1 sees that part.
    compare: ['critical bar1 0000:18:00.0: 256 MiB / 128 GiB', 'major gpu-rebar 0000:18:00.0: BAR2 64 MiB–256 MiB / BAR2 64 MiB–128 GiB'],
    unreadable: /\/0000:18:00\.0\/resource2_resize$/,
    unknown: [
      'minor gpu-rebar 0000:18:00.0: unknown (/sys/devices/pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:00.0/0000:18:00.0/resource2_resize: EACCES: permission denied (made unreadable by the test)) / BAR2 64 MiB–128 GiB',
    ],
  },
  memlock: {
    fault: 'memlock=64K',
    compare: ['critical memlock self: 64 KiB / unlimited'],
    unreadable: /^\/proc\/self\/limits$/,
    unknown: ['minor memlock self: not readable / unlimited'],
  },
  'gpudirect-mechanism': {
    fault: 'gpudirect-mechanism=none',
    compare: ['critical gpudirect mechanism: none / dmabuf', 'minor kernel node: 5.4.0-gdrgate-drill / 5.15.0-136-generic'],
    unreadable: /^\/(sys\/module\/nvidia_peermem|sys\/kernel\/mm\/memory_peers|proc\/driver\/nvidia)\//,
    unknown: ['minor gpudirect mechanism: unknown (nvidia_peermem: /sys/kernel/mm/memory_peers/nv_mem/version: EACCES: permission denied (made unreadable by the test)) / dmabuf', 'minor driver nvidia: unknown (/proc/driver/nvidia/version: EACCES: permission denied (made unreadable by the test)) / open 570.133.20'],
  },
};

const EACCES = { ok: false, missing: false, reason: 'EACCES: permission denied (made unreadable by the test)' } as const;

/** The node with every path matching `re` unreadable (a read error, not a missing file). */
class Unreadable implements Host {
  readonly root: string;
  constructor(
    private readonly inner: Host,
    private readonly re: RegExp,
  ) {
    this.root = inner.root;
  }
  list(p: string): Promise<ReadResult<string[]>> {
    return this.re.test(p) ? Promise.resolve(EACCES) : this.inner.list(p);
  }
  readText(p: string): Promise<ReadResult<string>> {
    return this.re.test(p) ? Promise.resolve(EACCES) : this.inner.readText(p);
  }
  readBytes(p: string, max?: number): Promise<ReadResult<Uint8Array>> {
    return this.re.test(p) ? Promise.resolve(EACCES) : this.inner.readBytes(p, max);
  }
  readLink(p: string): Promise<ReadResult<string>> {
    return this.re.test(p) ? Promise.resolve(EACCES) : this.inner.readLink(p);
  }
  realPath(p: string): Promise<ReadResult<string>> {
    return this.re.test(p) ? Promise.resolve(EACCES) : this.inner.realPath(p);
  }
  lstat(p: string): Promise<ReadResult<StatInfo>> {
    return this.re.test(p) ? Promise.resolve(EACCES) : this.inner.lstat(p);
  }
  stat(p: string): Promise<ReadResult<StatInfo>> {
    return this.re.test(p) ? Promise.resolve(EACCES) : this.inner.stat(p);
  }
  access(p: string): Promise<AccessAnswer> {
    return this.re.test(p) ? Promise.resolve({ access: 'unknown', why: 'EACCES' }) : this.inner.access(p);
  }
  untrusted(p: string): string | null {
    return this.inner.untrusted(p);
  }
}

const show = (d: Difference): string => `${d.impact} ${d.area} ${d.subject}: ${d.a} / ${d.b}`;

// Every GPU with a resizable GPUDirect window (resource line 2 in the generator): 64 MiB to its 128 GiB.
const node = structuredClone(HGX);
for (const d of allDevices(node)) if (d.kind === 'gpu') d.rebar = { 2: sizesMiB(64, 128 * 1024) };
const root = scratchDir('gdrgate-areas-', TREE_TMP);
await buildTree(root, node);
const plain = new FsHost(root);
const healthy: Inventory = await buildInventory(plain);

t.test('every registered area has its cases, and every case is of a registered area', async (t) => {
  t.strictSame(Object.keys(CASES).sort(), AREAS.map((a) => a.id).sort());
  for (const a of AREAS) {
    t.ok(a.title.length > 0, `${a.id}: help text`);
    t.ok(CASES[a.id].fault.startsWith(`${a.id}:`) || CASES[a.id].fault.startsWith(`${a.id}=`), `${a.id}: the fault case is the area's own`);
  }
});

t.test('the unstaged node compares equal to itself', async (t) => {
  t.strictSame(compareInventories(healthy, healthy).map(show), []);
});

for (const a of AREAS) {
  const c = CASES[a.id];
  t.test(`${a.id}: fault, compare and unknown cases`, async (t) => {
    const f = parseFault(c.fault);
    if (!t.ok(f.ok, `${c.fault} parses`) || !f.ok) return;
    t.equal(f.value.kind, a.id, 'the fault is staged by this record');
    const staged = await buildInventory(new DrillHost(plain, f.value));
    t.strictSame(compareInventories(staged, healthy).map(show), c.compare, `compare sees ${c.fault}`);
    const broken = await buildInventory(new Unreadable(plain, c.unreadable));
    const said = compareInventories(broken, healthy);
    t.strictSame(said.map(show), c.unknown, `${c.unreadable} unreadable: could not tell, never a change`);
    t.strictSame(said.filter((d) => d.impact !== 'minor').map(show), [], 'a read error is never a critical or major difference');
  });
}
