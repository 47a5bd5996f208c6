// gdrgate's NCCL topology file against NCCL's own dump of the live H200 node (test/fixtures/device-h200-live/
// nccl-2026-12-03): the file gdrgate writes for the bundled capture of that node is the file it wrote on the node,
// and differs from NCCL's dump only in what the PCI tree does not say (each difference named with why).
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { diffNcclXml, expectedBecause, gpuBusIds, parseNcclXml, pciLessNets, renderDiff } from '../../src/topo/nccl-diff.js';
import { CLI, REPO, fixture } from '../helpers/paths.js';

const live = (f: string): string => readFileSync(fixture('device-h200-live/nccl-2026-12-03', f), 'utf8');
const parse = (text: string) => {
  const p = parseNcclXml(text);
  if (!p.ok) throw new Error(p.error);
  return p.value;
};

const r = spawnSync(process.execPath, [CLI, 'topo', '--nccl-xml', '--root', path.join(REPO, 'examples/h200-vm.tar.gz')], { encoding: 'utf8', timeout: 60_000 });
t.equal(r.status, 0, r.stderr);
t.equal(r.stdout, live('gdrgate.xml'), 'the capture gives the file gdrgate wrote on the live node');

const dump = parse(live('nccl-dump.xml'));
const diffs = diffNcclXml(parse(r.stdout), dump);
const why = diffs.map((d) => [renderDiff([d], { a: 'gdrgate', b: 'nccl' }), expectedBecause(d, gpuBusIds(dump), pciLessNets(dump))] as const);
t.same(why.filter(([, w]) => w === null), [], 'every difference from NCCL\'s dump is one the PCI tree does not say');
t.same(
  why.map(([d]) => d),
  [
    '/system/cpu[-1] host_hash: gdrgate (absent), nccl "0x25f284cf22281a25"',
    'pci[0000:00:06.0]/gpu: only in nccl',
    '/system/cpu[-1]/nic: only in nccl',
    'net[eth0]: only in nccl',
  ],
  'and these are they: the host hash, the GPU element NVML fills, the socket interface NCCL fell back to',
);
t.same(diffNcclXml(parse(live('nccl-load-dump.xml')), dump), [], 'NCCL given gdrgate\'s file reached the tree it detects itself');
t.equal(live('nccl-load-lines.txt').split('\n').filter((l) => /\bWARN\b/.test(l)).length, 0, 'and loaded it without a warning');
