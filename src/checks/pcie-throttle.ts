// pcie-throttle: no port of a GPU↔NIC path held below its top link speed by the kernel's PCIe bandwidth controller
// (drivers/thermal/pcie_cooling.c: cooling device `PCIe_Port_Link_Speed_<BDF>`). Its cur_state is the port's top speed
// less the link's current one, whatever slowed the link (a slower device below, a GPU idling at 2.5 GT/s), so a state
// above 0 is a throttle only where the port's Target Link Speed (Link Control 2, which the controller lowers to
// throttle) is below the port's top speed. The same kernels clear the link-bandwidth-change status bits themselves
// (drivers/pci/pcie/bwctrl.c), so those are not read.
import { factText } from '../model/fact.js';
import type { Finding } from '../model/finding.js';
import type { Inventory, PcieCooling } from '../model/inventory.js';
import { genOf } from '../model/names.js';
import { linkHeld } from '../pcie/link-held.js';
import { defineCheck, finder } from './types.js';
import WORDING from './pcie-throttle.json' with { type: 'json' };

const f = finder('pcie-throttle', WORDING.codes);

function judge(inv: Inventory, c: PcieCooling): Finding {
  if (c.cur.state !== 'present') return f('throttle-unknown', 'skip', c.port, `${c.device} cur_state ${factText(c.cur)}`);
  const at = `${c.device} (PCIe_Port_Link_Speed_${c.port}) at state ${c.cur.value}${c.max.state === 'present' ? ` of ${c.max.value}` : ''}`;
  if (c.cur.value === 0) return f('throttle-ok', 'pass', c.port, at, 'state 0', 'state 0');
  const h = linkHeld(inv, c);
  if (h.state !== 'present') return f('throttle-unknown', 'skip', c.port, `${at}: the link runs below the port's top speed; whether it is held there could not be told (${h.state === 'unknown' ? h.why : factText(h)})`);
  const { top, portTop, target } = h.value;
  const want = `Target Link Speed ${genOf(top)}`;
  const got = `${genOf(target)}, state ${c.cur.value}`;
  const whose = top === portTop ? `the port's ${genOf(top)}` : `the link's ${genOf(top)} (the device below ${genOf(top)}, the port ${genOf(portTop)})`;
  if (h.value.held) return f('throttle-on', 'fail', c.port, `${at}: Target Link Speed ${genOf(target)} of ${whose}: the link is held below its top speed`, want, got);
  // The link runs slower than the port can, but nothing holds it there: a slower device, or an idle GPU (pcie-link's).
  return f('throttle-ok', 'pass', c.port, `${at}, Target Link Speed ${genOf(target)} (${top === portTop ? "the port's top" : `the link's top: the device below is ${genOf(top)}`}): the link runs slower, not held there`, want, got);
}

export default defineCheck('pcie-throttle', WORDING, {
  run({ inv }): Finding[] {
    const all = inv.pcieCooling;
    if (all.state !== 'present') return [f('throttle-unknown', 'skip', 'node', `PCIe cooling devices ${factText(all)}`)];
    // inv.pci holds exactly the GPUs, the NICs and the bridges on their paths.
    const onPath = all.value.filter((c) => inv.pci.has(c.port));
    if (onPath.length === 0) {
      const why = all.value.length ? `none (${all.value.length} elsewhere)` : 'none registered (a kernel without the PCIe bandwidth controller, or no port it drives)';
      return [f('throttle-ok', 'pass', 'node', `PCIe link-speed cooling devices on GPU↔NIC paths: ${why}`, 'state 0', 'no device')];
    }
    return onPath.map((c) => judge(inv, c));
  },
});
