// RDMA adapters from /sys/class/infiniband (drivers/infiniband/core/sysfs.c): PCI function, firmware, ports.
import type { Host } from '../host/host.js';
import { ABSENT, type Fact, present, unknown } from '../model/fact.js';
import type { Bdf, RdmaNic, RdmaPort } from '../model/inventory.js';
import { BDF_RE, parseFwVer } from '../parsers/sysfs.js';
import { factParsed, factText, listWhole, Notes, readWhy } from './read.js';

const CLASS = '/sys/class/infiniband';

async function port(host: Host, dir: string, n: number, notes: Notes): Promise<RdmaPort> {
  const p = `${dir}/ports/${n}`;
  const [state, physState, rate, linkLayer] = await Promise.all(['state', 'phys_state', 'rate', 'link_layer'].map((a) => factText(host, `${p}/${a}`, notes)));
  return { port: n, state: state!, physState: physState!, rate: rate!, linkLayer: linkLayer! };
}

/**
 * The PCI function a `device` link resolves to. No link, or one to a device that is not a PCI function (siw on the
 * loopback takes the netdev itself as its parent: drivers/infiniband/sw/siw/siw_main.c siw_device_create), is absent;
 * a link that cannot be resolved is unknown: the adapter may well sit on a PCI function, which one cannot be told.
 */
async function pciFunction(host: Host, link: string, notes: Notes): Promise<Fact<Bdf>> {
  const r = await host.realPath(link);
  if (!r.ok) {
    if (r.missing) return ABSENT;
    notes.add(link, r.reason);
    return unknown(readWhy(link, r.reason));
  }
  const last = r.value.slice(r.value.lastIndexOf('/') + 1);
  if (BDF_RE.test(last)) return present(last);
  // Resolved to itself, the adapter's own `device` entry: not a link (a capture copied with links dereferenced), so
  // where it points cannot be told. Only a link to something that is not a PCI function (siw's netdev) is none.
  if (r.value.endsWith(`/${link.split('/').slice(-2).join('/')}`)) {
    notes.add(link, 'not a link');
    return unknown(`${link}: not a link, so its PCI function cannot be told`);
  }
  return ABSENT;
}

export async function listRdma(host: Host, notes: Notes): Promise<RdmaNic[]> {
  return Promise.all(
    (await listWhole(host, CLASS, notes)).map(async (name): Promise<RdmaNic> => {
      const dir = `${CLASS}/${name}`;
      const bdf = await pciFunction(host, `${dir}/device`, notes);
      const ports = await host.list(`${dir}/ports`);
      // Shown only (the inventory line, the NCCL topology file): unlisted ports are said, not taken for none.
      if (!ports.ok && !ports.missing) notes.add(`${dir}/ports`, ports.reason);
      const nums = ports.ok ? ports.value.filter((p) => /^\d+$/.test(p)).map(Number).sort((a, b) => a - b) : [];
      const [fwVer, nodeGuid, portList] = await Promise.all([
        // An empty or garbled fw_ver (a FIFO, a driver that wrote nothing) says nothing about the firmware: unknown.
        factParsed(host, `${dir}/fw_ver`, parseFwVer, notes, 'absent'),
        factText(host, `${dir}/node_guid`, notes),
        Promise.all(nums.map((n) => port(host, dir, n, notes))),
      ]);
      return { name, bdf, fwVer, nodeGuid, ports: portList };
    }),
  );
}
