// Pure: which probes to run on this node, with their exact arguments and recipes, from the inventory and the config.
import { ABSENT, valueOf } from '../model/fact.js';
import { type Inventory, isPathClass, PATH_RANK as RANK } from '../model/inventory.js';
import type { ProbeRecipe } from '../samples/sample.js';
import { topoMatrix } from '../topo/matrix.js';
import type { ProbesConfig } from './config.js';
import { DIRECTION, type IbWriteSpec, type NvbwSpec, type ProbeSpec } from './types.js';

/** Loopback: the client reaches the server on this host (perftest's out-of-band exchange is TCP). */
export const LOOPBACK = '127.0.0.1';

/** For each HCA (by name), the GPU nearest to it: lowest nvidia-smi class, then lowest bus address. */
export function nearestGpus(inv: Inventory): Map<string, { bdf: string; index: number }> {
  const m = topoMatrix(inv);
  const out = new Map<string, { bdf: string; index: number }>();
  for (const n of m.nics) {
    let best: { bdf: string; index: number } | null = null;
    let bestRank = Infinity;
    for (const [index, g] of m.gpus.entries()) {
      const cell = m.cell(g.label, n.label);
      const rank = isPathClass(cell) ? RANK[cell] : 9;
      if (rank < bestRank) [best, bestRank] = [{ bdf: g.bdf, index }, rank];
    }
    if (best !== null) out.set(n.name, best);
  }
  return out;
}

function ibWriteSpecs(inv: Inventory, c: ProbesConfig, tool: string): ProbeSpec[][] {
  const s = c.ibWriteBw;
  const near = nearestGpus(inv);
  const gpus = inv.gpus.map((g) => g.bdf);
  const units: ProbeSpec[][] = [];
  for (const nic of inv.nics) {
    const bdf = valueOf(nic.bdf);
    if (bdf === undefined || (s.hcas !== null && !s.hcas.includes(nic.name))) continue;
    const numaNode = c.tools.numactl !== null ? (valueOf(inv.pci.get(bdf)?.numaNode ?? ABSENT) ?? null) : null;
    const numactl = c.tools.numactl !== null && numaNode !== null ? { path: c.tools.numactl, node: numaNode } : null;
    const base = [
      '-d', nic.name, '-s', String(s.msgSize),
      ...(s.durationS !== null ? ['-D', String(s.durationS)] : ['-n', String(s.iterations)]),
      '-q', String(s.qps), '-F', '--report_gbits', '-p', String(s.port),
    ];
    const spec = (probe: IbWriteSpec['probe'], gpu: { bdf: string; index: number } | null): IbWriteSpec => {
      const mem = gpu === null ? [] : [`--use_cuda=${gpu.index}`, ...(s.dmabuf ? ['--use_cuda_dmabuf'] : [])];
      const serverArgs = [...base, ...mem, ...s.extraArgs];
      const args = [...serverArgs, LOOPBACK];
      const recipe: ProbeRecipe = {
        tool: 'ib_write_bw', args, msgSize: s.msgSize, iterations: s.durationS !== null ? null : s.iterations,
        durationS: s.durationS, qps: s.qps, numaNode: numactl?.node ?? null, direction: DIRECTION[probe],
      };
      return { kind: 'ib_write_bw', probe, tool, nic: nic.name, gpu: gpu?.bdf ?? null, gpuIndex: gpu?.index ?? null, gpus, numactl, serverArgs, args, recipe, timeoutMs: s.timeoutMs };
    };
    const unit: ProbeSpec[] = [];
    if (s.host) unit.push(spec('ib-write-host', null));
    const gpu = near.get(nic.name);
    if (s.gpu && gpu) unit.push(spec('ib-write-gpu', gpu));
    if (unit.length) units.push(unit);
  }
  return units;
}

function nvbwSpecs(inv: Inventory, c: ProbesConfig, tool: string): ProbeSpec[] {
  const s = c.nvbandwidth;
  if (inv.gpus.length === 0) return [];
  return s.testcases.map((testcase): NvbwSpec => {
    const probe = testcase === 'device_to_host_memcpy_ce' ? 'nvbw-d2h' : 'nvbw-h2d';
    const args = ['-t', testcase, ...(s.bufferMiB !== null ? ['-b', String(s.bufferMiB)] : []), ...(s.json ? ['-j'] : [])];
    const recipe: ProbeRecipe = {
      tool: 'nvbandwidth', args, msgSize: s.bufferMiB !== null ? s.bufferMiB * 2 ** 20 : null, iterations: null,
      durationS: null, qps: null, numaNode: null, direction: DIRECTION[probe],
    };
    return { kind: 'nvbandwidth', probe, tool, testcase, args, recipe, gpus: inv.gpus.map((g) => g.bdf), timeoutMs: s.timeoutMs };
  });
}

/**
 * Units of work in a stable order: one per HCA (host then GPU memory, so both sides of the GPU↔NIC comparison
 * are measured back to back), then nvbandwidth. A budget cut falls between probes; the runner rotates units.
 */
export function planProbes(inv: Inventory, c: ProbesConfig): ProbeSpec[][] {
  const units = c.tools.ibWriteBw !== null ? ibWriteSpecs(inv, c, c.tools.ibWriteBw) : [];
  const nv = c.tools.nvbandwidth !== null ? nvbwSpecs(inv, c, c.tools.nvbandwidth) : [];
  return nv.length ? [...units, nv] : units;
}
