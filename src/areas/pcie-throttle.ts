// PCIe link-speed cooling devices (pcie-throttle, drivers/thermal/pcie_cooling.c), read by the shared inventory pass.
// A drill registers one more cooling device for a port, at the state given, and lowers the port's Target Link Speed.
import { throttle } from '../compare/throttle.js';
import { valueOf } from '../model/fact.js';
import { parsePciConfig } from '../parsers/pci-config.js';
import { base, devOf, patch16 } from './stage.js';
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
      // The port's Link Control 2 Target Link Speed lowered by the state, as the bandwidth controller throttles
      // (bwctrl.c pcie_set_target_speed): a cooling state alone is also what any slower link reads.
      rewrite(f, p, b) {
        if (devOf(p) !== f.bdf || base(p) !== 'config') return b;
        const at = valueOf(parsePciConfig(b).pcie)?.offset;
        if (at === undefined || at + 0x32 > b.length) return b;
        const top = b[at + 0x0c]! & 0xf;
        return patch16(b, at + 0x30, (v) => (v & ~0xf) | Math.max(1, top - f.state));
      },
      lists: (_f, dir) => (dir === THERMAL ? [DRILL_CDEV] : []),
      adds(f, p) {
        if (!p.startsWith(`${THERMAL}/${DRILL_CDEV}/`)) return null;
        const file = { type: `PCIe_Port_Link_Speed_${f.bdf}`, cur_state: `${f.state}`, max_state: `${Math.max(3, f.state)}` }[p.slice(THERMAL.length + DRILL_CDEV.length + 2)];
        return file === undefined ? null : `${file}\n`;
      },
    },
  },
});
