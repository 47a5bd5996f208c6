// PCIe link-speed cooling devices (pcie-throttle, drivers/thermal/pcie_cooling.c), read by the shared inventory pass.
// A drill registers one more cooling device for a port, at the state given.
import { throttle } from '../compare/throttle.js';
import { defineArea } from './types.js';

/** One extra cooling device, as drivers/thermal/pcie_cooling.c registers it for the port. */
const THERMAL = '/sys/class/thermal';
const DRILL_CDEV = 'cooling_device999999';

export type ThrottleFault = { readonly kind: 'pcie-throttle'; readonly bdf: string; readonly state: number };

export default defineArea<'pcie-throttle', ThrottleFault>({
  id: 'pcie-throttle',
  title: 'PCIe ports the kernel slows through a link-speed cooling device',
  compare: throttle,
  fault: {
    syntax: 'pcie-throttle:<port bdf>=2',
    subject: 'a port PCI address (0000:17:00.0)',
    parse(bdf, value) {
      if (!/^[1-9]\d{0,2}$/.test(value)) return { ok: false, error: 'value must be a cooling state from 1 (one speed step down)' };
      return { ok: true, value: { kind: 'pcie-throttle', bdf, state: Number(value) } };
    },
    format: (f) => `pcie-throttle:${f.bdf}=${f.state}`,
    stage: {
      lists: (_f, dir) => (dir === THERMAL ? [DRILL_CDEV] : []),
      adds(f, p) {
        if (!p.startsWith(`${THERMAL}/${DRILL_CDEV}/`)) return null;
        const file = { type: `PCIe_Port_Link_Speed_${f.bdf}`, cur_state: `${f.state}`, max_state: `${Math.max(3, f.state)}` }[p.slice(THERMAL.length + DRILL_CDEV.length + 2)];
        return file === undefined ? null : `${file}\n`;
      },
    },
  },
});
