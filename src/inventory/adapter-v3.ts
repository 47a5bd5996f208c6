// The VPD V3 keyword (the adapter's UUID) of each ConnectX NIC function and ConnectX-8 DMA function: what ties a DMA
// function to its adapter (NVIDIA's rdma_topo pairs them by it, and refuses a DMA function it cannot pair). Read only
// on a node with a DMA function; none elsewhere. A `vpd` file missing or holding no V3 is absent; one that could not
// be read is unknown.
import type { Host } from '../host/host.js';
import { ABSENT, type Fact, present, unknown } from '../model/fact.js';
import type { Bdf, PciDevice } from '../model/inventory.js';
import { parseVpd } from '../parsers/vpd.js';
import { typeOf } from '../pcie/pci-kind.js';
import { type Notes, readWhy } from './read.js';

/** The most of a `vpd` file read: VPD-R, with the V3 keyword, comes right after the product name. */
const VPD_READ = 4096;

export async function readAdapterV3(host: Host, pci: ReadonlyMap<Bdf, PciDevice>, notes: Notes): Promise<ReadonlyMap<Bdf, Fact<string>>> {
  const devs = [...pci.values()];
  if (!devs.some((d) => typeOf(d) === 'cx_dma')) return new Map();
  const read = async (d: PciDevice): Promise<[Bdf, Fact<string>]> => {
    const path = `${d.sysPath}/vpd`;
    const r = await host.readBytes(path, VPD_READ);
    if (!r.ok) {
      if (r.missing) return [d.bdf, ABSENT];
      notes.add(path, r.reason);
      return [d.bdf, unknown(readWhy(path, r.reason))];
    }
    const v3 = parseVpd(r.value)?.ro.get('V3');
    return [d.bdf, v3 === undefined ? ABSENT : present(v3)];
  };
  return new Map(await Promise.all(devs.filter((d) => ['cx_nic', 'cx_dma'].includes(typeOf(d))).map(read)));
}
