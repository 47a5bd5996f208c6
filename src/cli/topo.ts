// `gdrgate topo`: the GPU↔NIC matrix from sysfs, in nvidia-smi topo -m's layout or as JSON; or the node in NCCL's topology XML.
import { renderTopo } from '../report/topo-text.js';
import { topoMatrix } from '../topo/matrix.js';
import { readNode } from '../engine/evaluate.js';
import { VERSION } from '../version.js';
import { out } from './common.js';
import { UsageError } from '../errors.js';

export async function topoCommand(a: { root: string; json: boolean; ncclXml?: boolean }): Promise<number> {
  const { host, inv } = await readNode({ root: a.root, baseline: null, node: null, trust: [] });
  if (a.ncclXml) {
    if (a.json) throw new UsageError('--nccl-xml and --json: choose one output');
    const { readNcclTopo } = await import('../topo/nccl-read.js');
    const { renderNcclXml, NcclXmlError } = await import('../topo/nccl-xml.js');
    const notes: string[] = [];
    let xml: string;
    try {
      xml = renderNcclXml(await readNcclTopo(host, inv), 0, notes);
    } catch (e) {
      if (e instanceof NcclXmlError) throw new UsageError(`no NCCL topology file: ${e.message}`);
      throw e;
    }
    for (const n of notes) process.stderr.write(`gdrgate: ${n}\n`);
    out(xml.trimEnd());
    return 0;
  }
  const m = topoMatrix(inv);
  if (!a.json) {
    out(renderTopo(m));
    return 0;
  }
  const labels = [...m.gpus.map((g) => g.label), ...m.nics.map((n) => n.label)];
  const cells = Object.fromEntries(labels.map((r) => [r, Object.fromEntries(labels.map((c) => [c, m.cell(r, c)]))]));
  const affinity = Object.fromEntries(m.gpus.map((g) => [g.label, { cpu: m.cpuAffinity(g.label), numa: m.numaAffinity(g.label) }]));
  out(JSON.stringify({ tool: 'gdrgate', command: 'topo', version: VERSION, root: a.root, gpus: m.gpus, nics: m.nics, cells, affinity, nvlink: 'not computed (not visible in sysfs)' }, null, 2));
  return 0;
}
