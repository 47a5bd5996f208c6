// RDMA adapters from /sys/class/infiniband (drivers/infiniband/core/sysfs.c): PCI function, firmware, ports.
import type { Host } from '../host/host.js';
import type { RdmaNic, RdmaPort } from '../model/inventory.js';
import { BDF_RE, parseFwVer } from '../parsers/sysfs.js';
import { factParsed, factText, Notes } from './read.js';

const CLASS = '/sys/class/infiniband';

async function port(host: Host, dir: string, n: number, notes: Notes): Promise<RdmaPort> {
  const p = `${dir}/ports/${n}`;
  const [state, physState, rate, linkLayer] = await Promise.all(['state', 'phys_state', 'rate', 'link_layer'].map((a) => factText(host, `${p}/${a}`, notes)));
  return { port: n, state: state!, physState: physState!, rate: rate!, linkLayer: linkLayer! };
}

export async function listRdma(host: Host, notes: Notes): Promise<RdmaNic[]> {
  const ls = await host.list(CLASS);
  if (!ls.ok) {
    if (!ls.missing) notes.add(CLASS, ls.reason);
    return [];
  }
  return Promise.all(
    ls.value.map(async (name): Promise<RdmaNic> => {
      const dir = `${CLASS}/${name}`;
      const dev = await host.realPath(`${dir}/device`);
      const bdf = dev.ok ? (dev.value.split('/').pop() ?? '') : '';
      const ports = await host.list(`${dir}/ports`);
      const nums = ports.ok ? ports.value.filter((p) => /^\d+$/.test(p)).map(Number).sort((a, b) => a - b) : [];
      const [fwVer, nodeGuid, portList] = await Promise.all([
        // An empty or garbled fw_ver (a FIFO, a driver that wrote nothing) says nothing about the firmware: unknown.
        factParsed(host, `${dir}/fw_ver`, parseFwVer, notes, 'absent'),
        factText(host, `${dir}/node_guid`, notes),
        Promise.all(nums.map((n) => port(host, dir, n, notes))),
      ]);
      return { name, bdf: BDF_RE.test(bdf) ? bdf : null, fwVer, nodeGuid, ports: portList };
    }),
  );
}
