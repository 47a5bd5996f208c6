// Subsystem vendor and device IDs from a config blob, where the kernel takes them (drivers/pci/probe.c,
// pci_setup_device): a type 0 header's 0x2c/0x2e (PCI Local Bus 3.0 §6.2.4); a PCI-to-PCI bridge's Subsystem ID
// capability (ID 0x0d, PCI-to-PCI Bridge Architecture 1.2 §3.2.5.12: vendor at +4, device at +6), and 0 for both
// when the bridge has none (the kernel leaves them unset); CardBus bridges are not decoded. What sysfs
// subsystem_vendor and subsystem_device print.
import { ABSENT, type Fact, present, unknown } from '../model/fact.js';
import type { PciSubsystem } from '../model/pci.js';
import type { ConfigReader } from './config-reader.js';

export const CAP_ID_SSVID = 0x0d;

/**
 * `caps`: the standard capability list as walked, null when it could not be read; `broken`: why a walk stopped
 * early (a bridge's capability may then lie beyond it). Absent: a bridge without the capability (the kernel shows 0).
 */
export function decodeSubsystem(cfg: ConfigReader, headerType: number, caps: readonly { id: number; offset: number }[] | null, broken?: string): Fact<PciSubsystem> {
  if (headerType === 0) return cfg.has(0x2c, 4) ? present({ vendor: cfg.u16(0x2c), device: cfg.u16(0x2e) }) : unknown('config blob shorter than the header');
  if (headerType !== 1) return unknown(`header type ${headerType}: not decoded`);
  if (caps === null) return unknown('capability list not readable');
  const at = caps.find((c) => c.id === CAP_ID_SSVID)?.offset;
  if (at === undefined) return broken !== undefined ? unknown(broken) : ABSENT;
  return cfg.has(at + 4, 4) ? present({ vendor: cfg.u16(at + 4), device: cfg.u16(at + 6) }) : unknown('Subsystem ID capability cut off');
}
