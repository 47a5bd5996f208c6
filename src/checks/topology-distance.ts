// topology-distance: GPU↔NIC path classes (nvidia-smi's PIX…SYS) and NUMA placement against the reference node.
import type { Finding } from '../model/finding.js';
import { isPathClass, PATH_RANK as RANK, type PathClass } from '../model/inventory.js';
import { topoMatrix } from '../topo/matrix.js';
import { defineCheck, finder } from './types.js';
import WORDING from './topology-distance.json' with { type: 'json' };

const f = finder('topology-distance', WORDING.codes);

export default defineCheck('topology-distance', WORDING, {
  run({ inv, baseline }): Finding[] {
    const m = topoMatrix(inv);
    if (m.gpus.length === 0 || m.nics.length === 0) return [f('topology-na', 'skip', 'node', `not applicable: ${m.gpus.length} GPU(s), ${m.nics.length} RDMA adapter(s)`)];
    const out: Finding[] = [];
    if (!baseline) {
      for (const g of m.gpus) {
        const cells = m.nics.map((n) => ({ n, c: m.cell(g.label, n.label) }));
        const known = cells.filter((x): x is { n: typeof x.n; c: PathClass } => isPathClass(x.c));
        const best = known.sort((a, b) => RANK[a.c] - RANK[b.c])[0];
        if (!best) {
          const untold = cells.filter((x) => x.c === '?' && x.n.bdf).map((x) => x.n.name);
          out.push(f('topology-unknown', 'skip', g.bdf, untold.length ? `no path to an RDMA adapter could be told: ${untold.join(', ')} (a place or NUMA node unread)` : 'no RDMA adapter with a PCI function to place against (software RDMA only?)'));
          continue;
        }
        // An adapter whose PCI function could not be read, or whose path to this GPU could not be told (a place or
        // NUMA node unread), may be nearer than any placed one (only PIX is nearest for sure).
        const unplaced = [...new Set([...inv.nics.filter((n) => n.bdf.state === 'unknown').map((n) => n.name), ...cells.filter((x) => x.c === '?' && x.n.bdf).map((x) => x.n.name)])];
        if (best.c !== 'PIX' && unplaced.length) {
          out.push(f('topology-unknown', 'skip', g.bdf, `nearest RDMA adapter not known: ${unplaced.join(', ')} could not be placed (its PCI function, place or NUMA node unread)`));
          continue;
        }
        const s = best.c === 'SYS' ? 'warn' : 'pass';
        out.push(f(s === 'warn' ? 'topology-remote-nic' : 'topology-ok', s, g.bdf, `nearest RDMA adapter ${best.n.name}: ${best.c}`, 'not SYS', best.c));
      }
      return out;
    }
    const gpuLabel = new Map(m.gpus.map((g) => [g.bdf, g.label]));
    // A path names its adapter as the reference node did; the adapter is the one at the address the class records
    // for that name (as device-inventory finds it), whatever this node calls it: names follow probe order, and a
    // node whose mlx5_0 and mlx5_4 swapped names has every path where it was.
    const recorded = new Map(baseline.devices.flatMap((d) => (d.role === 'nic' && d.name !== undefined ? [[d.name, d.bdf] as const] : [])));
    const byBdf = new Map(m.nics.flatMap((n) => (n.bdf ? [[n.bdf, n.label] as const] : [])));
    const byName = new Map(m.nics.map((n) => [n.name, n.label]));
    for (const p of baseline.paths) {
      const a = gpuLabel.get(p.gpu);
      const at = recorded.get(p.nic);
      // Nothing at that address: the adapter that carries the name (moved to another slot, or its function unreadable).
      const b = (at !== undefined ? byBdf.get(at) : undefined) ?? byName.get(p.nic);
      if (!a || !b) continue; // a missing device is device-inventory's finding, not a second one here
      const cell = m.cell(a, b);
      const subject = `${p.gpu}-${p.nic}`;
      if (!isPathClass(cell)) {
        out.push(f('topology-unknown', 'skip', subject, 'GPU↔NIC path could not be computed'));
        continue;
      }
      const got = cell;
      if (got !== p.class) out.push(f('topology-changed', RANK[got] > RANK[p.class] ? 'fail' : 'warn', subject, `GPU↔NIC path ${got}`, p.class, got));
      else out.push(f('topology-ok', 'pass', subject, `GPU↔NIC path ${got}`, p.class, got));
    }
    if (out.length === 0) out.push(f('topology-na', 'skip', 'node', 'not applicable: the baseline has no GPU↔NIC path to compare'));
    for (const d of baseline.devices) {
      const cur = inv.pci.get(d.bdf);
      if (!cur || d.numaNode === undefined) continue;
      const want = String(d.numaNode ?? 'none');
      // numa_node itself, as the baseline recorded it (not the local-CPU fallback, which the capture never used).
      const n = cur.numaNode;
      if (n.state === 'unknown') out.push(f('topology-numa-unknown', 'skip', d.bdf, `NUMA node not readable (${n.why})`, want));
      else if ((n.state === 'present' ? n.value : null) !== d.numaNode) out.push(f('topology-numa-changed', 'fail', d.bdf, `NUMA node ${n.state === 'present' ? n.value : 'none'}`, want, String(n.state === 'present' ? n.value : 'none')));
    }
    return out;
  },
});
