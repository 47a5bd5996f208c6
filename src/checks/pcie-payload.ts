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
import type { Finding } from '../model/finding.js';
import { defineCheck, finder } from './types.js';
import WORDING from './pcie-payload.json' with { type: 'json' };

const f = finder('pcie-payload', WORDING.codes);

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

/**
 * A GPU's or NIC's writes to a peer of the other kind below the same switch (GPUDirect RDMA) cross the bridges below
 * their nearest common one and land in the peer: a TLP larger than the MPS of any of them is Malformed (§2.2.2). The
 * kernel keeps peers equal in its default and pcie_bus_safe modes (probe.c pci_configure_mps, pcie_find_smpss), but
 * pcie_bus_perf gives each device min(its MPSS, its parent's MPS) "on the assumption that downstream communication
 * will never be larger than the MRRS" (pcie_write_mps), and firmware may do the same: a 512-byte NIC beside a 256-byte
 * GPU. The smallest MPS on such a path below this device's own, or null; a device not read there is not compared
 * (its own finding says so), and peers joined only through the Root Complex are not judged.
 */
function peerOver(inv: Inventory, d: PciDevice, mps: number): { limit: number; at: string; peer: string } | null {
  const gpus = inv.gpus.map((g) => g.bdf);
  const nics = inv.nics.flatMap((n) => (n.bdf.state === 'present' ? [n.bdf.value] : []));
  const peers = gpus.includes(d.bdf) ? nics : nics.includes(d.bdf) ? gpus : [];
  let worst: { limit: number; at: string; peer: string } | null = null;
  for (const bdf of peers) {
    const peer = inv.pci.get(bdf);
    if (!peer) continue;
    let k = 0;
    while (k < d.bridges.length && d.bridges[k] === peer.bridges[k]) k++;
    if (k === 0) continue;
    for (const b of [...d.bridges.slice(k), ...peer.bridges.slice(k), bdf]) {
      const bp = devicePayload(inv, b);
      if (bp.state === 'present' && bp.value.mps < mps && (worst === null || bp.value.mps < worst.limit)) worst = { limit: bp.value.mps, at: b, peer: bdf };
    }
  }
  return worst;
}

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
    return f('payload-mps-over', 'fail', d.bdf, `${who}: MaxPayload ${p.value.mps} bytes${cap} above ${up!.b}'s ${upMps} bytes, ${up!.b === d.bridges[d.bridges.length - 1] ? 'the port above it' : 'the nearest port above it that could be read'}`, `at most ${upMps} bytes`, `${p.value.mps} bytes`);
  const over = peerOver(inv, d, p.value.mps);
  if (over)
    return f('payload-peer-mps', 'fail', d.bdf, `${who}: MaxPayload ${p.value.mps} bytes${cap} above ${over.at}'s ${over.limit} bytes on the path to its peer ${over.peer} under the same switch: its writes there are Malformed TLPs`, `at most ${over.limit} bytes`, `${p.value.mps} bytes`);
  // The port right above could not be read: this link's MaxPayload was not compared, so no pass for it.
  const parent = d.bridges[d.bridges.length - 1];
  const pp = parent === undefined ? null : devicePayload(inv, parent);
  if (pp !== null && pp.state === 'unknown') return f('payload-unknown', 'skip', d.bdf, `${who}: ${payloadText(p.value)}${cap}; the port above, ${parent}, could not be read (${pp.why}): MaxPayload not compared`);
  const link = inv.payload.linkAspm.get(d.bdf) ?? { state: 'absent' };
  const rd = ref?.devices.find((x) => x.bdf === d.bdf);
  if (!rd) {
    const actual = shown(p.value, link);
    const lk = link.state === 'unknown' ? `; link ASPM attributes unknown (${link.why})` : '';
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

export default defineCheck('pcie-payload', WORDING, {
  run({ inv, baseline }): Finding[] {
    // inv.pci holds exactly the GPUs, the NICs and the bridges on their paths up to the root ports.
    return [nodeFinding(inv, baseline?.payload), ...[...inv.pci.values()].map((d) => deviceFinding(inv, d, baseline?.payload))];
  },
});
