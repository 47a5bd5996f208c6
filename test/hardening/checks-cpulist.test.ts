// local_cpulist values no kernel writes (`0-65536` thirty times, a megabyte of commas) cost bounded work: parsed
// once per device into merged ranges, never expanded CPU by CPU, never re-parsed per GPU↔NIC pair.
import t from 'tap';
import { parseCpuList, CPULIST_LIMITS, cpusOverlap } from '../../src/parsers/sysfs.js';
import { topoMatrix } from '../../src/topo/matrix.js';
import { allDevices } from '../gen/sysfs-tree.js';
import { HGX, inventoryOf, patches, put } from '../checks/_trees.js';

const HUGE = Array(30).fill('0-65536').join(',');

t.test('parseCpuList: ranges, merged, bounded', async (t) => {
  t.same(parseCpuList(HUGE), { ok: true, value: [[0, 65536]] }, 'thirty copies of one range are one range');
  // Expanded CPU by CPU, one parse is ~2 million numbers; as ranges, 200 parses take well under a second even loaded.
  const t0 = performance.now();
  for (let i = 0; i < 200; i++) parseCpuList(HUGE);
  t.ok(performance.now() - t0 < 1000, `200 parses in ${Math.round(performance.now() - t0)} ms (bound 1000 ms)`);
  t.same(parseCpuList('48-95,0-47,144-191,96-143'), { ok: true, value: [[0, 191]] }, 'adjacent ranges merge');
  t.same(parseCpuList('1,3,5'), { ok: true, value: [[1, 1], [3, 3], [5, 5]] });
  t.match(parseCpuList('0-1'.padEnd(CPULIST_LIMITS.chars + 1, ',')), { ok: false, error: /characters/ }, 'longer than the bound: refused before splitting');
  t.match(parseCpuList(Array(CPULIST_LIMITS.parts + 1).fill('1').join(',')), { ok: false, error: /ranges/ });
  t.match(parseCpuList(`0-${CPULIST_LIMITS.maxCpu + 1}`), { ok: false, error: /bad cpulist range/ });
  t.match(parseCpuList('0-99999999999'), { ok: false }, 'no 12-digit CPU numbers');
  t.ok(cpusOverlap([[0, 3], [10, 20]], [[4, 9], [20, 30]]));
  t.notOk(cpusOverlap([[0, 3], [10, 19]], [[4, 9], [20, 30]]));
});

t.test('8-GPU tree with every GPU and NIC at local_cpulist 0-65536 x30 and numa_node -1: the matrix in bounded time', async (t) => {
  const ends = allDevices(HGX).filter((d) => d.kind === 'gpu' || d.kind === 'nic');
  const patch = patches(...ends.flatMap((d) => [put(`sys/bus/pci/devices/${d.bdf}/local_cpulist`, `${HUGE}\n`), put(`sys/bus/pci/devices/${d.bdf}/numa_node`, '-1\n')]));
  const inv = await inventoryOf(HGX, patch);
  const t0 = performance.now();
  const m = topoMatrix(inv);
  const cells = m.gpus.flatMap((g) => m.nics.map((n) => m.cell(g.label, n.label)));
  t.ok(performance.now() - t0 < 500, `64 GPU↔NIC cells in ${Math.round(performance.now() - t0)} ms (bound 500 ms)`);
  t.equal(cells.length, 64);
  // Local CPUs spanning both sockets are no affinity (as numa_node -1 says): NODE across host bridges, as nvidia-smi.
  t.ok(cells.every((c) => c === 'PIX' || c === 'NODE'), 'PIX within a switch, NODE across host bridges');
});
