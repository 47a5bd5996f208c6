// Renders the matrix in `nvidia-smi topo -m`'s layout: GPU rows, then NIC rows, NIC legend (PCIe classes only).
import type { TopoMatrix } from '../topo/matrix.js';
import { escapeControls } from './escape.js';

export const LEGEND = `Legend:

  X    = Self
  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)
  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node
  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)
  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)
  PIX  = Connection traversing at most a single PCIe bridge

Computed from sysfs: GPU↔GPU cells show the PCIe path; NVLink (NV#) is not visible in sysfs and is not shown.`;

export function renderTopo(m: TopoMatrix): string {
  const labels = [...m.gpus.map((g) => g.label), ...m.nics.map((n) => n.label)];
  const head = ['', ...labels, 'CPU Affinity', 'NUMA Affinity', 'GPU NUMA ID'].join('\t');
  const rows = labels.map((r) => {
    const cells = labels.map((c) => m.cell(r, c));
    const isGpu = r.startsWith('GPU');
    const tail = isGpu ? [m.cpuAffinity(r), m.numaAffinity(r), 'N/A'] : ['', '', ''];
    return [r, ...cells, ...tail].map(escapeControls).join('\t').replace(/\t+$/, '');
  });
  const nicLegend = m.nics.length ? `\n\nNIC Legend:\n\n${m.nics.map((n) => escapeControls(`  ${n.label}: ${n.name}`)).join('\n')}` : '';
  return `${head}\n${rows.join('\n')}\n\n${LEGEND}${nicLegend}\n`;
}
