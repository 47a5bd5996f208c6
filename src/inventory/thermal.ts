// PCIe link-speed cooling devices (drivers/thermal/pcie_cooling.c, PCIe bandwidth controller): a device of type
// `PCIe_Port_Link_Speed_<BDF>` per port the kernel may slow; cur_state > 0 means the kernel holds that port's link
// below its top speed. The thermal class has no link to the port, so every cooling device's `type` is read once.
import type { Host } from '../host/host.js';
import { type Fact, present, unknown } from '../model/fact.js';
import type { PcieCooling } from '../model/inventory.js';
import { factParsed, type Notes, optText, readWhy } from './read.js';

const DIR = '/sys/class/thermal';
const PREFIX = 'PCIe_Port_Link_Speed_';
const state = (s: string) => (/^\d+$/.test(s) ? { ok: true as const, value: Number(s) } : { ok: false as const, error: `not a cooling state: ${JSON.stringify(s.slice(0, 20))}` });

/** Absent: no thermal class at all in the tree (a capture without it, or a kernel without CONFIG_THERMAL): unknown. */
export async function readPcieCooling(host: Host, notes: Notes): Promise<Fact<readonly PcieCooling[]>> {
  const ls = await host.list(DIR);
  if (!ls.ok) return unknown(ls.missing ? `${DIR} absent: a kernel without thermal, or a capture without it` : readWhy(DIR, ls.reason));
  const out = await Promise.all(
    ls.value.filter((n) => /^cooling_device\d+$/.test(n)).map(async (name): Promise<PcieCooling | null> => {
      const type = await optText(host, `${DIR}/${name}/type`, notes);
      if (!type?.startsWith(PREFIX)) return null;
      const [cur, max] = await Promise.all([factParsed(host, `${DIR}/${name}/cur_state`, state, notes, 'absent'), factParsed(host, `${DIR}/${name}/max_state`, state, notes, 'absent')]);
      return { device: name, port: type.slice(PREFIX.length), cur, max: max.state === 'present' ? max.value : null };
    }),
  );
  return present(out.filter((c): c is PcieCooling => c !== null));
}
