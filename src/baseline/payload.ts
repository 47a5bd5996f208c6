// baseline capture: payload sizes and ASPM of every GPU↔NIC path device, and the kernel's policies (pcie-payload).
import type { BaselinePayload, BaselinePayloadDevice } from '../model/baseline.js';
import type { Inventory } from '../model/inventory.js';
import { devicePayload } from '../model/payload.js';

/** What could not be read on the reference is left out (a device, a policy): never a value guessed for it. */
export function capturePayload(inv: Inventory): BaselinePayload {
  const { cmdline, aspmPolicy, linkAspm } = inv.payload;
  const devices = [...inv.pci.keys()].sort().flatMap((bdf): BaselinePayloadDevice[] => {
    const p = devicePayload(inv, bdf);
    if (p.state !== 'present') return [];
    const link = linkAspm.get(bdf);
    const shown = link?.state === 'present' && Object.keys(link.value).length ? { link: link.value } : {};
    return [{ bdf, mps: p.value.mps, mrrs: p.value.mrrs, aspm: p.value.aspm, ...shown }];
  });
  return {
    ...(cmdline.state === 'present' ? { busPolicy: cmdline.value.busPolicy ?? 'default', pcieAspm: cmdline.value.aspm ?? 'default' } : {}),
    ...(aspmPolicy.state !== 'unknown' ? { aspmPolicy: aspmPolicy.state === 'present' ? aspmPolicy.value.active : null } : {}),
    devices,
  };
}
