// The Epilog's look at the probed adapters' port counters before probing, on a real capture (hwloc's 32em64t-2n8c,
// mlx4_0 port 1, whose counters files are as the kernel wrote them) and on a generated two-port adapter: traffic over
// the threshold keeps it from probing, said with the port and the rate; a port whose traffic cannot be told (no
// counters, the PMA's "N/A", a stopped 32-bit counter, a reset) is named and probed as before; 64-bit counters past
// 2^53 are exact.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { portTraffic } from '../../src/epilog/port-traffic.js';
import { trafficReason, untoldText } from '../../src/epilog/port-traffic-rule.js';
import { FsHost } from '../../src/host/fs-host.js';
import { buildInventory } from '../../src/inventory/build.js';
import { parsePortCounter } from '../../src/parsers/ib-counter.js';
import { PROBE_DEFAULTS } from '../../src/probes/config.js';
import { planProbes } from '../../src/probes/plan.js';
import { buildTree, type GenDevice } from '../gen/sysfs-tree.js';
import { node as dgx1v } from '../gen/topologies/dgx1v-8xv100-4nic.js';
import { node as gh200 } from '../gen/topologies/gh200-cx7.js';
import { fixture } from '../helpers/paths.js';
import { scratchDir } from '../helpers/scratch.js';

const TMP = existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir();
const dir = scratchDir('gdrgate-traffic-', TMP);
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
execFileSync('/bin/tar', ['xjf', fixture('sysfs-real/32em64t-2n8c+dax+nvme+mic+dimms.tar.bz2'), '-C', dir], { timeout: 120_000 });
const root = path.join(dir, '32em64t-2n8c+1mic');
const COUNTERS = path.join(root, 'sys/devices/pci0000:80/0000:80:02.2/0000:82:00.0/infiniband/mlx4_0/ports/1/counters');
const XMIT = path.join(COUNTERS, 'port_xmit_data');
const RCV = path.join(COUNTERS, 'port_rcv_data');
const ORIGINAL = { xmit: readFileSync(XMIT, 'utf8'), rcv: readFileSync(RCV, 'utf8') };
const restore = (): void => {
  writeFileSync(XMIT, ORIGINAL.xmit);
  writeFileSync(RCV, ORIGINAL.rcv);
};

const Q = { windowMs: 250, belowGbps: 1 };
/** Over the 250 ms window, `gbps` is this many 4-octet units. */
const units = (gbps: number): bigint => BigInt(Math.round((gbps * 1e9 * 0.25) / 32));

/** The verdict on `r`, the window passing on a clock that reads 0 then 250 ms, `during` run meanwhile. */
async function look(r: string, during: () => void = () => {}, q = Q) {
  const host = new FsHost(r);
  const inv = await buildInventory(host);
  const plan = planProbes(inv, PROBE_DEFAULTS);
  const clock = [0, 250];
  return portTraffic(host, inv, plan, q, { wait: async () => during(), now: () => clock.shift()! });
}

t.test('the parser on the capture and on what else the kernel prints', async (t) => {
  t.same(parsePortCounter(ORIGINAL.xmit), { ok: true, value: 8039908n }, 'the capture as the kernel wrote it');
  t.same(parsePortCounter('0\n'), { ok: true, value: 0n }, 'a counter never moved');
  t.same(parsePortCounter('18446744073709551615\n'), { ok: true, value: 18446744073709551615n }, "a 64-bit counter's largest value");
  t.same(parsePortCounter('N/A (no PMA)\n'), { ok: false, error: 'the adapter\'s performance agent does not answer ("N/A (no PMA)")' });
  t.same(parsePortCounter('4294967295\n'), { ok: false, error: 'a 32-bit counter that has stopped at its maximum (4294967295)' });
  t.same(parsePortCounter('18446744073709551616\n'), { ok: false, error: 'not a counter: 18446744073709551616 is beyond 64 bits' });
  // Past the 20 digits of a 64-bit counter the text is refused before it is read as a number.
  t.same(parsePortCounter('100000000000000000000\n'), { ok: false, error: 'not a counter: "100000000000000000000"' }, '21 digits');
  for (const bad of ['', '\n', '-1\n', ' 12\n', '12 \n', '0x10\n', '1e9\n', '12\n\n', '0796\n', '00\n'])
    t.same(parsePortCounter(bad), { ok: false, error: `not a counter: ${JSON.stringify(bad.endsWith('\n') ? bad.slice(0, -1) : bad)}` }, JSON.stringify(bad));
});

t.test('the capture as it is: quiet, told, probed', async (t) => {
  restore();
  t.same(await look(root), { probe: true, busy: [], untold: [], windowMs: 250 });
});

t.test('40 Gb/s sent over the window: busy, not probed, said', async (t) => {
  restore();
  const v = await look(root, () => writeFileSync(XMIT, `${8039908n + units(40)}\n`));
  t.same(v, { probe: false, busy: [{ nic: 'mlx4_0', port: 1, sentGbps: 40, receivedGbps: 0 }], untold: [], windowMs: 250 });
  t.equal(trafficReason(v!, false), "mlx4_0 port 1 moved 40.0 Gb/s (40.0 sent, 0.00 received) in the 250 ms before probing, traffic no process here holds a verbs device for (IPoIB, NFS over RDMA, Lustre, a peer's RDMA): not probed, it would read as a slow path");
  t.equal(trafficReason(v!, true), "mlx4_0 port 1 moved 40.0 Gb/s (40.0 sent, 0.00 received) in the 250 ms before probing, traffic no process here holds a verbs device for (IPoIB, NFS over RDMA, Lustre, a peer's RDMA): an Epilog would not probe");
});

t.test('the threshold: sent plus received at 1 Gb/s is quiet, one unit more is busy', async (t) => {
  restore();
  const half = units(0.5);
  const at = await look(root, () => {
    writeFileSync(XMIT, `${8039908n + half}\n`);
    writeFileSync(RCV, `${5550796n + half}\n`);
  });
  t.same(at?.probe, true, 'exactly 1 Gb/s');
  restore();
  const over = await look(root, () => {
    writeFileSync(XMIT, `${8039908n + half}\n`);
    writeFileSync(RCV, `${5550796n + half + 1n}\n`);
  });
  t.same(over?.probe, false, 'one unit past it');
  t.same(over?.busy.length, 1);
});

t.test('64-bit counters past 2^53 are exact', async (t) => {
  const big = 2n ** 60n + 3n;
  writeFileSync(XMIT, `${big}\n`);
  writeFileSync(RCV, `${big}\n`);
  const v = await look(root, () => writeFileSync(RCV, `${big + units(2)}\n`));
  t.same(v?.busy, [{ nic: 'mlx4_0', port: 1, sentGbps: 0, receivedGbps: 2 }]);
  restore();
});

t.test('traffic that cannot be told: named, probed as without the look', async (t) => {
  const cases: [string, () => void, () => void, string][] = [
    ['no PMA', () => writeFileSync(XMIT, 'N/A (no PMA)\n'), () => {}, 'port_xmit_data: the adapter\'s performance agent does not answer ("N/A (no PMA)")'],
    ['a stopped 32-bit counter', () => writeFileSync(RCV, '4294967295\n'), () => {}, 'port_rcv_data: a 32-bit counter that has stopped at its maximum (4294967295)'],
    ['a reset meanwhile', () => {}, () => writeFileSync(XMIT, '12\n'), 'port_xmit_data: went back from 8039908 to 12 (reset meanwhile)'],
    ['no counters', () => rmSync(COUNTERS, { recursive: true }), () => {}, 'port_xmit_data: no such file (the driver keeps no counters for this port)'],
  ];
  for (const [name, before, during, why] of cases) {
    restore();
    before();
    const v = await look(root, during);
    t.same(v, { probe: true, busy: [], untold: [{ nic: 'mlx4_0', port: 1, untold: why }], windowMs: 250 }, name);
    t.equal(untoldText(v!), `traffic not told on mlx4_0 port 1 (${why}): probed as without the look`, name);
  }
  execFileSync('/bin/mkdir', ['-p', COUNTERS]);
  restore();
});

t.test('window 0: no look at all', async (t) => {
  t.equal(await look(root, () => writeFileSync(XMIT, `${8039908n + units(40)}\n`), { windowMs: 0, belowGbps: 1 }), null);
  restore();
});

t.test("a two-port adapter: the second port's traffic counts too", async (t) => {
  // The GH200 tree (gh200-cx7.ts) with its ConnectX-7 a dual-port card, both ports up at 200 Gb/s.
  const node = structuredClone(gh200);
  const port = { state: '4: ACTIVE', physState: '5: LinkUp', rate: '200 Gb/sec (4X HDR)', linkLayer: 'InfiniBand' };
  const walk = (d: GenDevice): void => {
    if (d.ib) d.ib.ports = [port, port];
    for (const c of d.children ?? []) walk(c);
  };
  for (const h of node.hostBridges) for (const d of h.devices) walk(d);
  const tree = path.join(dir, 'two-port');
  await buildTree(tree, node);
  const p2 = path.join(tree, 'sys/class/infiniband/mlx5_0/ports/2/counters/port_rcv_data');
  const v = await look(tree, () => writeFileSync(p2, `${5550796n + units(150)}\n`));
  t.same(v, { probe: false, busy: [{ nic: 'mlx5_0', port: 2, sentGbps: 0, receivedGbps: 150 }], untold: [], windowMs: 250 });
  t.equal(trafficReason(v!, false).split(',')[0], 'mlx5_0 port 2 moved 150 Gb/s (0.00 sent');
});

t.test('an adapter without a ports directory: named as such, probed', async (t) => {
  restore();
  const ports = path.join(COUNTERS, '../..');
  renameSync(ports, `${ports}.away`);
  t.teardown(() => renameSync(`${ports}.away`, ports));
  const v = await look(root);
  t.same(v, { probe: true, busy: [], untold: [{ nic: 'mlx4_0', port: null, untold: 'its ports could not be listed' }], windowMs: 250 });
  t.equal(untoldText(v!), 'traffic not told on mlx4_0 (its ports could not be listed): probed as without the look');
});

t.test('the window: the wait is given windowMs, the rate is over the time that passed between the reads', async (t) => {
  restore();
  const host = new FsHost(root);
  const inv = await buildInventory(host);
  const waited: number[] = [];
  // The timer came late (a loaded node): 500 ms passed, not 250; 40 Gb/s worth of the window's units is 20 Gb/s over it.
  const clock = [0, 500];
  const v = await portTraffic(host, inv, planProbes(inv, PROBE_DEFAULTS), Q, {
    wait: async (ms) => {
      waited.push(ms);
      writeFileSync(XMIT, `${8039908n + units(40)}\n`);
    },
    now: () => clock.shift()!,
  });
  t.same(waited, [250]);
  t.same(v, { probe: false, busy: [{ nic: 'mlx4_0', port: 1, sentGbps: 20, receivedGbps: 0 }], untold: [], windowMs: 250 });
  restore();
});

t.test("the window is timed from the first read's start to the second's, each read a query that takes time", async (t) => {
  restore();
  // Each counter read takes 100 ms of this clock (a PMA query the driver answers); the wait 300 ms.
  let clock = 0;
  class SlowReads extends FsHost {
    override readText(p: string) {
      if (p.includes('/counters/')) clock += 100;
      return super.readText(p);
    }
  }
  const host = new SlowReads(root);
  const inv = await buildInventory(host);
  clock = 0;
  const plan = planProbes(inv, PROBE_DEFAULTS);
  const v = await portTraffic(host, inv, plan, Q, {
    wait: async () => {
      clock += 300;
      writeFileSync(XMIT, `${8039908n + units(40)}\n`);
    },
    now: () => clock,
  });
  // From 0 to 500 (two reads and the wait): 40 Gb/s worth of 250 ms is 20 Gb/s over it.
  t.same(v?.busy, [{ nic: 'mlx4_0', port: 1, sentGbps: 20, receivedGbps: 0 }]);
  restore();
});

t.test('no time passed between the two reads: not told, probed', async (t) => {
  restore();
  const host = new FsHost(root);
  const inv = await buildInventory(host);
  const v = await portTraffic(host, inv, planProbes(inv, PROBE_DEFAULTS), Q, { wait: async () => writeFileSync(XMIT, `${8039908n + units(40)}\n`), now: () => 7 });
  t.same(v, { probe: true, busy: [], untold: [{ nic: 'mlx4_0', port: 1, untold: 'no time passed between the two reads' }], windowMs: 250 });
  restore();
});

t.test('a counter that is there but cannot be read: named with the read error, probed', async (t) => {
  restore();
  rmSync(XMIT);
  execFileSync('/bin/mkdir', [XMIT]);
  t.teardown(() => {
    rmSync(XMIT, { recursive: true });
    restore();
  });
  const v = await look(root);
  t.same(v, { probe: true, busy: [], untold: [{ nic: 'mlx4_0', port: 1, untold: 'port_xmit_data: EISDIR: illegal operation on a directory, read' }], windowMs: 250 });
});

t.test('GH200: a plan of GPU memory only looks at its adapter; a plan without ib_write_bw has no look and no wait', async (t) => {
  const tree = path.join(dir, 'gh200');
  await buildTree(tree, gh200);
  const host = new FsHost(tree);
  const inv = await buildInventory(host);
  const rcv = path.join(tree, 'sys/class/infiniband/mlx5_0/ports/1/counters/port_rcv_data');
  const gpuOnly = planProbes(inv, { ...PROBE_DEFAULTS, ibWriteBw: { ...PROBE_DEFAULTS.ibWriteBw, host: false } });
  t.same(gpuOnly.flat().map((s) => s.probe), ['ib-write-gpu']);
  const clock = [0, 250];
  const v = await portTraffic(host, inv, gpuOnly, Q, { wait: async () => writeFileSync(rcv, `${5550796n + units(40)}\n`), now: () => clock.shift()! });
  t.same(v, { probe: false, busy: [{ nic: 'mlx5_0', port: 1, sentGbps: 0, receivedGbps: 40 }], untold: [], windowMs: 250 });
  const nvbwOnly = planProbes(inv, { ...PROBE_DEFAULTS, tools: { ibWriteBw: null, nvbandwidth: '/usr/bin/nvbandwidth', numactl: null } });
  t.same(nvbwOnly.flat().map((s) => s.probe), ['nvbw-h2d', 'nvbw-d2h']);
  const waited: number[] = [];
  t.equal(await portTraffic(host, inv, nvbwOnly, Q, { wait: async (ms) => void waited.push(ms) }), null);
  t.same(waited, [], 'no window waited');
});

t.test('DGX-1V (four EDR adapters): the first two busy ports named, the rest counted; the same for ports not told', async (t) => {
  const tree = path.join(dir, 'dgx1v');
  await buildTree(tree, dgx1v);
  const file = (n: number, f: string): string => path.join(tree, `sys/class/infiniband/mlx5_${n}/ports/1/counters/${f}`);
  const v = await look(tree, () => {
    writeFileSync(file(0, 'port_xmit_data'), `${8039908n + units(90)}\n`);
    writeFileSync(file(0, 'port_rcv_data'), `${5550796n + units(10)}\n`);
    writeFileSync(file(1, 'port_xmit_data'), `${8039908n + units(0.75)}\n`);
    writeFileSync(file(1, 'port_rcv_data'), `${5550796n + units(0.75)}\n`);
    writeFileSync(file(2, 'port_rcv_data'), `${5550796n + units(5)}\n`);
  });
  t.same(v?.busy, [
    { nic: 'mlx5_0', port: 1, sentGbps: 90, receivedGbps: 10 },
    { nic: 'mlx5_1', port: 1, sentGbps: 0.75, receivedGbps: 0.75 },
    { nic: 'mlx5_2', port: 1, sentGbps: 0, receivedGbps: 5 },
  ]);
  t.equal(trafficReason(v!, false), "mlx5_0 port 1 moved 100 Gb/s (90.0 sent, 10.0 received), mlx5_1 port 1 moved 1.50 Gb/s (0.75 sent, 0.75 received), +1 more in the 250 ms before probing, traffic no process here holds a verbs device for (IPoIB, NFS over RDMA, Lustre, a peer's RDMA): not probed, it would read as a slow path");
  for (const n of [1, 2, 3]) writeFileSync(file(n, 'port_xmit_data'), 'N/A (no PMA)\n');
  const u = await look(tree);
  t.equal(u?.probe, true);
  const why = 'port_xmit_data: the adapter\'s performance agent does not answer ("N/A (no PMA)")';
  t.equal(untoldText(u!), `traffic not told on mlx5_1 port 1 (${why}), mlx5_2 port 1 (${why}), +1 more: probed as without the look`);
});
