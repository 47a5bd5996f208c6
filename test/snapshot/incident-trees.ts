// The two trees of docs/incident.md: the 8-GPU HGX reference, and the suspect (one GPU x8, ReqRedir on a switch port).
import path from 'node:path';
import { allDevices, buildTree, type GenNode } from '../gen/sysfs-tree.js';
import { node as hgx } from '../gen/topologies/sglang30401-hgx-h100.js';
import { writeCpuTopology } from './cpu-tree.js';

// Run: node --import=@tapjs/typescript/import test/snapshot/incident-trees.ts DIR (CPU topology included, for hwloc).

export function suspect(): GenNode {
  const n = { ...(structuredClone(hgx) as GenNode), hostname: 'gpu017' };
  const d = (bdf: string) => allDevices(n).find((x) => x.bdf === bdf)!;
  Object.assign(d('0000:3a:00.0'), { width: 8, maxWidth: 16 });
  d('0000:39:01.0').acsCtl = 0x0005; // SrcValid + ReqRedir, as a BIOS "ACS enable" leaves it
  return n;
}

export async function buildIncident(dir: string): Promise<void> {
  const nodes: [string, GenNode][] = [['reference', { ...hgx, hostname: 'gpu002' }], ['suspect', suspect()]];
  for (const [name, n] of nodes) {
    await buildTree(path.join(dir, name), n);
    await writeCpuTopology(path.join(dir, name), n); // what hwloc needs besides the checks' files
  }
}

if (process.argv[1]?.endsWith('incident-trees.ts') && process.argv[2]) await buildIncident(process.argv[2]);
