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
  // Work in counts, not time: expanded CPU by CPU one parse would be ~2 million numbers; as ranges its size is the
  // number of parts, and the largest input accepted at all (CPULIST_LIMITS) still comes out as one range.
  const widest = `0-${CPULIST_LIMITS.maxCpu}`;
  const most = Array(Math.min(CPULIST_LIMITS.parts, Math.floor((CPULIST_LIMITS.chars + 1) / (widest.length + 1)))).fill(widest).join(',');
  t.ok(most.length <= CPULIST_LIMITS.chars && most.split(',').length <= CPULIST_LIMITS.parts, `the largest accepted input: ${most.length} characters`);
  t.same(parseCpuList(most), { ok: true, value: [[0, CPULIST_LIMITS.maxCpu]] }, `${most.split(',').length} parts of ${CPULIST_LIMITS.maxCpu + 1} CPUs each: one range`);
  t.same(parseCpuList('48-95,0-47,144-191,96-143'), { ok: true, value: [[0, 191]] }, 'adjacent ranges merge');
  t.same(parseCpuList('1,3,5'), { ok: true, value: [[1, 1], [3, 3], [5, 5]] });
  t.same(parseCpuList('0-1'.padEnd(CPULIST_LIMITS.chars + 1, ',')), { ok: false, error: `cpulist of ${CPULIST_LIMITS.chars + 1} characters (more than ${CPULIST_LIMITS.chars})` }, 'longer than the bound: refused before splitting');
  t.same(parseCpuList(Array(CPULIST_LIMITS.parts + 1).fill('1').join(',')), { ok: false, error: `cpulist of more than ${CPULIST_LIMITS.parts} ranges` });
  t.same(parseCpuList(`0-${CPULIST_LIMITS.maxCpu + 1}`), { ok: false, error: `bad cpulist range 0-${CPULIST_LIMITS.maxCpu + 1}` });
  t.same(parseCpuList('0-99999999999'), { ok: false, error: 'unexpected cpulist part "0-99999999999"' }, 'no 12-digit CPU numbers');
  t.ok(cpusOverlap([[0, 3], [10, 20]], [[4, 9], [20, 30]]));
  t.notOk(cpusOverlap([[0, 3], [10, 19]], [[4, 9], [20, 30]]));
});

t.test('8-GPU tree with every GPU and NIC at local_cpulist 0-65536 x30 and numa_node -1: the matrix in bounded time', async (t) => {
  const ends = allDevices(HGX).filter((d) => d.kind === 'gpu' || d.kind === 'nic');
  const patch = patches(...ends.flatMap((d) => [put(`sys/bus/pci/devices/${d.bdf}/local_cpulist`, `${HUGE}\n`), put(`sys/bus/pci/devices/${d.bdf}/numa_node`, '-1\n')]));
  const inv = await inventoryOf(HGX, patch);
  // Parsed once per device, when the node is read: what the matrix (and every pair) gets is one merged range per
  // device, so a pair costs one overlap test of 1 range against the NUMA nodes', whatever the text was.
  const parsed = [...inv.pci.values()].filter((d) => ends.some((e) => e.bdf === d.bdf)).map((d) => (d.localCpus.state === 'present' ? d.localCpus.value : null));
  t.equal(parsed.length, ends.length, 'every GPU and NIC read');
  t.ok(parsed.every((v) => v !== null && v.length === 1 && v[0]![0] === 0 && v[0]![1] === 65536), 'each: one range, 0-65536');
  const m = topoMatrix(inv);
  const cells = m.gpus.flatMap((g) => m.nics.map((n) => m.cell(g.label, n.label)));
  t.equal(cells.length, 64);
  // Local CPUs spanning both sockets are no affinity (as numa_node -1 says): across host bridges the path may cross
  // the sockets or not, and two NUMA nodes have CPUs: '?' (could not tell), never NODE (near) or SYS; PIX in a switch.
  const count = (c: string): number => cells.filter((x) => x === c).length;
  t.same({ PIX: count('PIX'), '?': count('?') }, { PIX: 8, '?': 56 }, 'PIX within a switch, ? across host bridges');
});
