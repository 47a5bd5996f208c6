// pcie-throttle: no port of a GPU↔NIC path held below full speed by the kernel's PCIe bandwidth controller
// (drivers/thermal/pcie_cooling.c: cooling device `PCIe_Port_Link_Speed_<BDF>`, cur_state > 0). The same kernels
// clear the link-bandwidth-change status bits themselves (drivers/pci/pcie/bwctrl.c), so those are not read.
import { factText } from '../model/fact.js';
import type { Finding } from '../model/finding.js';
import { defineCheck, finder } from './types.js';
import WORDING from './pcie-throttle.json' with { type: 'json' };

const f = finder('pcie-throttle', WORDING.codes);

export default defineCheck('pcie-throttle', WORDING, {
  run({ inv }): Finding[] {
    const all = inv.pcieCooling;
    if (all.state !== 'present') return [f('throttle-unknown', 'skip', 'node', `PCIe cooling devices ${factText(all)}`)];
    // inv.pci holds exactly the GPUs, the NICs and the bridges on their paths.
    const onPath = all.value.filter((c) => inv.pci.has(c.port));
    if (onPath.length === 0) {
      const why = all.value.length ? `${all.value.length} elsewhere, none` : 'none registered (a kernel without the PCIe bandwidth controller, or no port it drives)';
      return [f('throttle-ok', 'pass', 'node', `PCIe link-speed cooling devices on GPU↔NIC paths: ${why}`, 'state 0', 'no device')];
    }
    return onPath.map((c) => {
      if (c.cur.state !== 'present') return f('throttle-unknown', 'skip', c.port, `${c.device} cur_state ${factText(c.cur)}`);
      const of = c.max.state === 'present' ? ` of ${c.max.value}` : '';
      if (c.cur.value > 0) return f('throttle-on', 'fail', c.port, `${c.device} (PCIe_Port_Link_Speed_${c.port}) at state ${c.cur.value}${of}: link speed lowered by the kernel`, 'state 0', `state ${c.cur.value}`);
      return f('throttle-ok', 'pass', c.port, `${c.device} at state 0${of}`, 'state 0', 'state 0');
    });
  },
});
