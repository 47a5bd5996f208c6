// The GPUs' `resource` files and their upstream bridges' (gpu-bar1): two small reads per GPU, sysfs only.
import type { Host } from '../host/host.js';
import { ABSENT, type Fact } from '../model/fact.js';
import type { Bdf, Gpu, PciDevice } from '../model/inventory.js';
import { BRIDGE_LINES, parseResource } from '../parsers/pci-resource.js';
import { factParsed, type Notes } from './read.js';

const read = (host: Host, dir: string, notes: Notes, min?: number) => factParsed(host, `${dir}/resource`, (t) => parseResource(t, min), notes, 'absent');

/** Each GPU with its BARs and its parent bridge's windows (absent on a root bus: a VM's passthrough GPU). */
export async function readGpus(host: Host, gpus: readonly Bdf[], pci: ReadonlyMap<Bdf, PciDevice>, notes: Notes): Promise<Gpu[]> {
  return Promise.all(
    gpus.map(async (bdf): Promise<Gpu> => {
      const d = pci.get(bdf);
      const parent = d ? pci.get(d.bridges[d.bridges.length - 1] ?? '') : undefined;
      const [resource, upstream] = await Promise.all([d ? read(host, d.sysPath, notes) : ABSENT, parent ? read(host, parent.sysPath, notes, BRIDGE_LINES) : (ABSENT as Fact<never>)]);
      return { bdf, device: d?.device ?? ABSENT, resource, upstream };
    }),
  );
}
