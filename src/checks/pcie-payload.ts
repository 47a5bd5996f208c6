// pcie-payload: Max Payload Size and Max Read Request Size (Device Control bits 7:5 and 14:12, PCIe Base 6.3
// §7.5.3.4), ASPM (Link Control bits 1:0 §7.5.3.7, the kernel's link/*aspm attributes and pcie_aspm.policy) and the
// kernel's pci=pcie_bus_* policy (drivers/pci/probe.c pcie_bus_configure_settings) of every GPU↔NIC path device,
// judged against the reference only: no universal value. The one rule: a device's MPS must not exceed the MPS of
// the port above it (§7.5.3.4; a TLP larger than the receiver's MPS is a Malformed TLP, §2.2.2).
import type { BaselinePayload } from '../model/baseline.js';
import { factText, type Fact, valueOf } from '../model/fact.js';
import type { Inventory, LinkAspm, PciDevice } from '../model/inventory.js';
import { devicePayload, type DevicePayload, linkAspmText, payloadText, policyText } from '../model/payload.js';
import { LINK_ASPM_FILES } from '../parsers/aspm.js';
import { type Check, type Codes, defineCheck, finder } from './types.js';

const CODES = {
  'payload-ok': { tells: 'Payload sizes and ASPM are as on the reference node (or, without one, as read), and no device\'s MPS exceeds the port above it.', do: 'None.', layer: 'server' },
  'payload-mps-over': { tells: 'A device\'s Max Payload Size is above the MPS of a port upstream on its path (the spec forbids it): its larger TLPs are Malformed TLPs at that port, seen as AER fatal errors, dropped transfers or a hung GPU↔NIC path.', do: 'Boot with the reference node\'s pci=pcie_bus_* option (pcie_bus_safe makes every MPS the path\'s lowest), or find what rewrote Device Control (setpci at boot, a driver, a hot-plug without the kernel\'s MPS configuration).', layer: 'server' },
  'payload-changed': { tells: 'Max Payload Size, Max Read Request Size or ASPM of a GPU↔NIC path device differs from the reference node: DMA efficiency or latency differ (smaller payloads and reads cost bandwidth; ASPM L0s/L1 adds exit latency).', do: 'Compare the reference node\'s pci= and pcie_aspm= kernel options, BIOS PCIe settings (MPS, MRRS, ASPM) and driver parameters with this node\'s.', layer: 'server' },
  'payload-policy-changed': { tells: 'The kernel\'s pci=pcie_bus_* option, pcie_aspm= option or ASPM policy differs from the reference node: the kernel sets payload sizes or ASPM differently at boot.', do: 'Boot with the reference node\'s kernel command line, or set /sys/module/pcie_aspm/parameters/policy as the reference has it.', layer: 'server' },
  'payload-unknown': { tells: 'Payload sizes or ASPM could not be read (config space beyond the 64-byte header needs root, no PCI Express capability, or a kernel file unreadable).', do: 'Run the gate as root (Slurm Prolog does); the message names what was missing.', layer: 'scheduler' },
} as const satisfies Codes;

const f = finder('pcie-payload', CODES);

function nodeFinding(inv: Inventory, ref: BaselinePayload | undefined) {
  const { cmdline, aspmPolicy } = inv.payload;
  if (cmdline.state !== 'present') return f('payload-unknown', 'skip', 'node', `kernel command line ${factText(cmdline)}`);
  if (aspmPolicy.state === 'unknown') return f('payload-unknown', 'skip', 'node', `ASPM policy unknown (${aspmPolicy.why})`);
  const now = { bus: cmdline.value.busPolicy ?? 'default', aspm: cmdline.value.aspm ?? 'default', policy: aspmPolicy.state === 'present' ? aspmPolicy.value.active : null };
  const actual = policyText(now.bus, now.aspm, now.policy);
  const none = now.policy === null ? ' (no pcie_aspm policy file: a kernel without ASPM support, or a capture without it)' : '';
  if (!ref) return f('payload-ok', 'pass', 'node', `${actual}${none}; no reference: recorded only`, 'no reference', actual);
  const want = { bus: ref.busPolicy ?? now.bus, aspm: ref.pcieAspm ?? now.aspm, policy: ref.aspmPolicy === undefined ? now.policy : ref.aspmPolicy };
  const expected = policyText(want.bus, want.aspm, want.policy);
  if (expected !== actual) return f('payload-policy-changed', 'warn', 'node', `${actual}${none}: not as the reference`, expected, actual);
  return f('payload-ok', 'pass', 'node', `${actual}${none}, as the reference`, expected, actual);
}

const shown = (p: Pick<DevicePayload, 'mps' | 'mrrs' | 'aspm'>, l: Fact<LinkAspm>): string => `${payloadText(p)}${l.state === 'present' && linkAspmText(l.value) !== 'none' ? `; link ${linkAspmText(l.value)}` : ''}`;

function deviceFinding(inv: Inventory, d: PciDevice, ref: BaselinePayload | undefined) {
  const who = inv.nics.find((n) => valueOf(n.bdf) === d.bdf)?.name ?? (inv.gpus.some((g) => g.bdf === d.bdf) ? 'GPU' : 'bridge');
  const p = devicePayload(inv, d.bdf);
  if (p.state !== 'present') return f('payload-unknown', 'skip', d.bdf, `${who}: MaxPayload/MaxReadReq/ASPM ${factText(p)}`);
  // The nearest port above with a readable MPS: each link is judged once, and an unreadable port is stepped over.
  let up: { b: string; p: Fact<DevicePayload> } | undefined;
  for (let i = d.bridges.length - 1; i >= 0 && up === undefined; i--) {
    const b = d.bridges[i]!;
    const bp = devicePayload(inv, b);
    if (bp.state === 'present') up = { b, p: bp };
  }
  const upMps = up?.p.state === 'present' ? up.p.value.mps : null;
  const cap = p.value.mpsSupported === null ? '' : ` (supports ${p.value.mpsSupported})`;
  if (upMps !== null && p.value.mps > upMps)
    return f('payload-mps-over', 'fail', d.bdf, `${who}: MaxPayload ${p.value.mps} bytes${cap} above ${up!.b}'s ${upMps} bytes, the port above it`, `at most ${upMps} bytes`, `${p.value.mps} bytes`);
  // The port right above could not be read: this link's MaxPayload was not compared, so no pass for it.
  const parent = d.bridges[d.bridges.length - 1];
  const pp = parent === undefined ? null : devicePayload(inv, parent);
  if (pp !== null && pp.state === 'unknown') return f('payload-unknown', 'skip', d.bdf, `${who}: ${payloadText(p.value)}${cap}; the port above, ${parent}, could not be read (${pp.why}): MaxPayload not compared`);
  const link = inv.payload.linkAspm.get(d.bdf) ?? { state: 'absent' };
  const rd = ref?.devices.find((x) => x.bdf === d.bdf);
  if (!rd) {
    const actual = shown(p.value, link);
    const lk = link.state === 'unknown' ? `; link/ ASPM attributes unknown (${link.why})` : '';
    return f('payload-ok', 'pass', d.bdf, `${who}: ${actual}${cap}${lk}${ref ? ' (not in the reference)' : ''}`, upMps === null ? 'no reference' : `MaxPayload at most ${upMps} bytes`, actual);
  }
  const refLink = rd.link ?? {};
  if (link.state === 'unknown' && Object.keys(refLink).length) return f('payload-unknown', 'skip', d.bdf, `${who}: ASPM link attributes unknown (${link.why})`);
  const now = link.state === 'present' ? link.value : {};
  const differs = rd.mps !== p.value.mps || rd.mrrs !== p.value.mrrs || rd.aspm !== p.value.aspm || LINK_ASPM_FILES.some((n) => refLink[n] !== now[n]);
  const expected = shown(rd, { state: 'present', value: refLink });
  const actual = shown(p.value, { state: 'present', value: now });
  if (differs) return f('payload-changed', 'warn', d.bdf, `${who}: ${actual}: not as the reference`, expected, actual);
  return f('payload-ok', 'pass', d.bdf, `${who}: ${actual}${cap}, as the reference`, expected, actual);
}

const check: Check<'pcie-payload', typeof CODES> = defineCheck({
  id: 'pcie-payload',
  title: 'Payload and read-request sizes, ASPM',
  reasonLabel: 'pcie-mps',
  codes: CODES,
  docs: 'docs/checks/pcie-payload.md',
  run({ inv, baseline }) {
    // inv.pci holds exactly the GPUs, the NICs and the bridges on their paths up to the root ports.
    return [nodeFinding(inv, baseline?.payload), ...[...inv.pci.values()].map((d) => deviceFinding(inv, d, baseline?.payload))];
  },
});

export default check;
