// `baseline capture` on a node where a fact could not be read records no value for it, and says so: an unread GPU
// numa_node was recorded as null ("no NUMA node"), every group type unread as IOMMU "off", a DMA function whose IDs
// could not be read as a classic ACS policy, and each healthy node of the class then failed against it.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { glob } from 'node:fs/promises';
import { captureClass } from '../../src/baseline/capture.js';
import type { Finding } from '../../src/model/finding.js';
import { node as GB300 } from '../gen/topologies/gb300-cx8-dma-direct.js';
import { HGX, inventoryOf, P0, patches, put, runCheck, unreadable, valid, type Patch } from '../checks/_trees.js';
import { limitsText } from '../gen/sysfs-tree.js';
import { H200 } from '../helpers/paths.js';

const OPTS = { name: 'x', match: ['*'], platform: 'bare-metal', at: '2026-01-01T00:00:00Z' } as const;
const notPassed = (fs: readonly Finding[]): string[] => fs.filter((f) => f.status !== 'pass').map((f) => `${f.status} ${f.code} ${f.subject}`);
/** Every IOMMU group's `type` of the written tree made unreadable. */
const noGroupTypes: Patch = async (root) => {
  for await (const f of glob('sys/kernel/iommu_groups/*/type', { cwd: root })) await unreadable(f)(root);
};

t.test("an unread GPU numa_node: left out of the class, said; the healthy node then passes topology-distance", async (t) => {
  const { cls, warnings } = captureClass(await inventoryOf(HGX, unreadable(`sys/bus/pci/devices/${P0.gpu}/numa_node`)), OPTS);
  valid(cls);
  const gpu0 = cls.devices.find((d) => d.bdf === P0.gpu)!;
  t.equal('numaNode' in gpu0, false, 'no numaNode in the record');
  t.equal(cls.devices.find((d) => d.bdf === P0.nic)!.numaNode, 0, 'the others recorded as read');
  t.same(warnings.filter((w) => w.includes('NUMA')), [`${P0.gpu}: NUMA node not recorded, /sys/devices/pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:00.0/${P0.gpu}/numa_node: EISDIR: illegal operation on a directory, read`]);
  t.same(notPassed(runCheck('topology-distance', await inventoryOf(HGX), cls)), []);
});

t.test('every IOMMU group type unread: the class says "any", said; never "off" (16 fails on the healthy HGX)', async (t) => {
  const { cls, warnings } = captureClass(await inventoryOf(HGX, noGroupTypes), OPTS);
  t.equal(cls.iommu, 'any');
  t.equal(warnings.filter((w) => w.startsWith('IOMMU mode not recorded: the type of IOMMU group ')).length, 1, warnings.join('\n'));
  t.same(notPassed(runCheck('iommu-mode', await inventoryOf(HGX), cls)), []);
});

t.test('GB300 whose DMA function cannot be told (config space and device ID unread): no ACS policy recorded, said; the healthy GB300 passes pcie-acs', async (t) => {
  const dma = '0009:03:00.0';
  const { cls, warnings } = captureClass(await inventoryOf(GB300, patches(unreadable(`sys/bus/pci/devices/${dma}/config`), unreadable(`sys/bus/pci/devices/${dma}/device`))), OPTS);
  valid(cls);
  t.equal('acsPolicy' in cls, false);
  t.equal(warnings.filter((w) => w.startsWith(`ACS policy not recorded: what PCI function ${dma} is could not be read`)).length, 1, warnings.join('\n'));
  const healthy = await inventoryOf(GB300);
  t.same(notPassed(runCheck('pcie-acs', healthy, cls)), []);
  t.equal(runCheck('pcie-acs', healthy, cls).filter((f) => f.code === 'acs-mask-ok').length > 0, true, 'judged by the Direct NIC masks the node is found to have');
});

t.test('a readable node captures as before: its numa nodes, its IOMMU mode, its ACS policy, no such warning', async (t) => {
  const { cls, warnings } = captureClass(await inventoryOf(HGX), OPTS);
  t.same([cls.iommu, cls.acsPolicy, cls.devices.find((d) => d.bdf === P0.gpu)!.numaNode], ['passthrough', 'classic', 0]);
  t.same(warnings.filter((w) => /not recorded/.test(w)), []);
});

t.test("slurmd found, its limits unread: the class's memlock minimum is the rule's unlimited, said", async (t) => {
  // This process's walk up ends at init; /run/slurmd.pid names 4242, a process called slurmd whose limits cannot be read.
  const status = readFileSync(`${H200}/proc/self/status`, 'utf8').replace(/^Name:.*$/m, 'Name:\tslurmd').replace(/^Pid:.*$/m, 'Pid:\t4242').replace(/^PPid:.*$/m, 'PPid:\t1');
  const slurmd = patches(put('proc/self/status', 'Name:\tnode\nState:\tR (running)\nPid:\t5151\nPPid:\t1\n'), put('run/slurmd.pid', '4242\n'), put('proc/4242/comm', 'slurmd\n'), put('proc/4242/status', status));
  const { cls, warnings } = captureClass(await inventoryOf(HGX, patches(slurmd, unreadable('proc/4242/limits'))), OPTS);
  t.equal(cls.memlockMin, 'unlimited');
  t.same(warnings.filter((w) => w.startsWith('memlock minimum')), ["memlock minimum recorded as unlimited (the rule without a baseline): slurmd's limit could not be read (EISDIR: illegal operation on a directory, read)"]);
  // Its limits read: recorded as they are, and nothing said of an unread limit.
  const read = captureClass(await inventoryOf(HGX, patches(slurmd, put('proc/4242/limits', limitsText('unlimited')))), OPTS);
  t.equal(read.cls.memlockMin, 'unlimited');
  t.same(read.warnings.filter((w) => w.startsWith('memlock minimum')), []);
});
