// One path device's payload sizes and ASPM as the inventory holds them, in the words lspci and the kernel use:
// what pcie-payload judges, baseline capture records and compare shows, read the same way by all three.
import { aspmCtlText, LINK_ASPM_FILES } from '../parsers/aspm.js';
import { type Fact, present, unknown, within } from './fact.js';
import type { Bdf, Inventory, LinkAspm } from './inventory.js';

export interface DevicePayload {
  readonly mps: number;
  readonly mrrs: number;
  /** Device Capabilities Max_Payload_Size Supported; null for a reserved encoding. */
  readonly mpsSupported: number | null;
  /** Link Control ASPM Control as lspci prints it (`L1 Enabled`, `Disabled`). */
  readonly aspm: string;
  readonly clockPm: boolean;
}

/** Unknown with the reason when config space beyond the header was not read, holds no PCIe capability, or a reserved size. */
export function devicePayload(inv: Inventory, bdf: Bdf): Fact<DevicePayload> {
  const d = inv.pci.get(bdf);
  const cfg = d ? d.config : unknown('not in the inventory');
  const pcie = within(cfg, (c) => c.pcie, 'config space absent');
  if (pcie.state !== 'present') return pcie.state === 'absent' ? unknown('no PCI Express capability') : pcie;
  const p = pcie.value;
  if (p.devCtl.mps === null || p.devCtl.mrrs === null) return unknown('Device Control holds a reserved payload size encoding');
  // A function with no link (model/pci.ts linkless) has no Link Control: no ASPM enabled, whatever its reserved bits hold.
  return present({ mps: p.devCtl.mps, mrrs: p.devCtl.mrrs, mpsSupported: p.mpsSupported, aspm: aspmCtlText(p.lnkCtl?.aspm ?? 0), clockPm: p.lnkCtl?.clockPm ?? false });
}

/** `MaxPayload 256 bytes, MaxReadReq 4096 bytes, ASPM Disabled`: lspci's own words for the three fields. */
export const payloadText = (p: { readonly mps: number; readonly mrrs: number; readonly aspm: string }): string =>
  `MaxPayload ${p.mps} bytes, MaxReadReq ${p.mrrs} bytes, ASPM ${p.aspm}`;

/** `l1_aspm=1 clkpm=0`, in the kernel's attribute order; `none` when the kernel shows no attribute. */
export function linkAspmText(l: LinkAspm): string {
  const parts = LINK_ASPM_FILES.flatMap((n) => (l[n] === undefined ? [] : [`${n}=${l[n] ? 1 : 0}`]));
  return parts.length ? parts.join(' ') : 'none';
}

/** The kernel's policies in one line: `pci=pcie_bus_perf, ASPM policy default` (names as the kernel spells them). */
export function policyText(bus: string, pcieAspm: string, aspmPolicy: string | null): string {
  const aspm = pcieAspm === 'default' ? '' : `, pcie_aspm=${pcieAspm}`;
  return `${bus === 'default' ? 'no pci=pcie_bus_*' : `pci=${bus}`}${aspm}, ASPM policy ${aspmPolicy ?? 'none'}`;
}
