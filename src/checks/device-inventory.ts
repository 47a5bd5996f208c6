// device-inventory: the GPUs and RDMA adapters present, by address, model, firmware and driver, against the baseline.
import { factText, valueOf, ABSENT, nul } from '../model/fact.js';
import type { Finding } from '../model/finding.js';
import { deviceName, hex4, linkText } from '../model/names.js';
import { silent } from '../model/pci.js';
import { defineCheck, finder } from './types.js';
import WORDING from './device-inventory.json' with { type: 'json' };

const f = finder('device-inventory', WORDING.codes);

export default defineCheck('device-inventory', WORDING, {
  run({ inv, baseline }): Finding[] {
    const out: Finding[] = [];
    const idOf = (bdf: string) => {
      const d = inv.pci.get(bdf);
      return d && d.vendor.state === 'present' && d.device.state === 'present' ? `0x${hex4(d.vendor.value)}:0x${hex4(d.device.value)}` : '?';
    };
    const drv = valueOf(inv.gpudirect.driver)?.version;
    for (const g of inv.gpus) {
      const d = inv.pci.get(g.bdf);
      const link = d && d.current.speed.state === 'present' ? `, ${linkText(d.current.speed, d.current.width)} of ${linkText(d.max.speed, d.max.width)}` : '';
      out.push(f('inventory-ok', 'pass', g.bdf, `GPU ${deviceName(nul(d?.vendor ?? ABSENT), nul(d?.device ?? ABSENT))}${link}${drv ? `, driver ${drv}` : ''}`));
    }
    for (const n of inv.nics) {
      // Two adapters claiming one PCI function: the class listing is not one the kernel writes, and which is real cannot be told.
      const bdf = valueOf(n.bdf);
      const twins = bdf === undefined ? [] : inv.nics.filter((m) => valueOf(m.bdf) === bdf && m !== n);
      if (twins.length) {
        out.push(f('inventory-unknown', 'skip', n.name, `RDMA adapter ${n.name} at ${bdf}: ${twins.map((m) => m.name).join(', ')} claims the same PCI function`));
        continue;
      }
      // An unreadable `device` link says nothing of where the adapter is: never a device present, missing or extra.
      if (n.bdf.state === 'unknown') {
        out.push(f('inventory-unknown', 'skip', n.name, `RDMA adapter ${n.name}: its PCI function could not be read (${n.bdf.why})`));
        continue;
      }
      const d = bdf ? inv.pci.get(bdf) : undefined;
      const ports = n.ports.map((p) => `port ${p.port} ${nul(p.state) ?? '?'} ${nul(p.rate) ?? ''}`.trim()).join('; ');
      out.push(f('inventory-ok', 'pass', n.name, `${bdf ? `RDMA ${deviceName(nul(d?.vendor ?? ABSENT), nul(d?.device ?? ABSENT))} at ${bdf}` : 'RDMA device with no PCI function (software RDMA)'}, fw ${n.fwVer.state === 'present' ? n.fwVer.value : '?'}${ports ? `, ${ports}` : ''}`));
    }
    // A GPU, RDMA adapter or bridge on their paths that no longer answers configuration reads is there for sysfs
    // only: whatever else it reads as is unknown, and the device is unusable (its checks skip; this fails).
    for (const d of inv.pci.values()) {
      if (d.config.state !== 'present' || d.vendor.state !== 'present' || !silent(d.config.value, d.vendor.value)) continue;
      const role = inv.gpus.some((g) => g.bdf === d.bdf) ? 'GPU' : inv.nics.some((n) => valueOf(n.bdf) === d.bdf) ? 'RDMA adapter' : 'bridge';
      out.push(f('inventory-not-responding', 'fail', d.bdf, `${role} ${deviceName(d.vendor.value, nul(d.device))} does not answer configuration reads (vendor ID reads 0xffff, sysfs says 0x${hex4(d.vendor.value)}): fallen off the bus`, 'answers', 'all ones'));
    }
    // A function whose class or vendor could not be read may be a GPU: "none" cannot be told.
    if (inv.gpus.length === 0 && inv.unidentified.length) out.push(f('inventory-unknown', 'skip', 'node', `whether an NVIDIA GPU is on the PCI bus cannot be told: what PCI function ${inv.unidentified.join(', ')} is could not be read (its sysfs link, class or vendor)`));
    else if (inv.gpus.length === 0) out.push(f('inventory-ok', 'pass', 'node', 'no NVIDIA GPU on the PCI bus'));
    if (inv.nics.length === 0) out.push(f('inventory-ok', 'pass', 'node', 'no RDMA adapter (/sys/class/infiniband absent or empty)'));
    if (!baseline) return out;

    const gpus = new Set(inv.gpus.map((g) => g.bdf));
    const nics = new Map(inv.nics.map((n) => [valueOf(n.bdf) ?? n.name, n]));
    const unread = inv.nics.filter((n) => n.bdf.state === 'unknown').map((n) => n.name);
    for (const b of baseline.devices.filter((x) => x.role !== 'bridge')) {
      const present = b.role === 'gpu' ? gpus.has(b.bdf) : nics.has(b.bdf);
      // A function at that address whose class or vendor could not be read may well be this device: unknown, not missing.
      if (!present && b.role === 'nic' && unread.length) {
        out.push(f('inventory-unknown', 'skip', b.bdf, `NIC at ${b.bdf}: may be ${unread.join(', ')}, whose PCI function could not be read`, 'present'));
        continue;
      }
      if (!present && inv.unidentified.includes(b.bdf)) {
        out.push(f('inventory-unknown', 'skip', b.bdf, `${b.role.toUpperCase()} at ${b.bdf}: what the PCI function there is could not be read (its sysfs link, class or vendor)`, 'present'));
        continue;
      }
      if (!present) {
        out.push(f('inventory-missing', 'fail', b.bdf, `${b.role.toUpperCase()} ${b.name ?? ''} missing`.replace('  ', ' '), 'present', 'missing'));
        continue;
      }
      const want = b.vendor && b.device ? `${b.vendor}:${b.device}` : null;
      const id = idOf(b.bdf);
      if (want && id === '?') out.push(f('inventory-unknown', 'skip', b.bdf, 'device id not readable (vendor/device and config space)', want));
      else if (want && id !== want) out.push(f('inventory-mismatch', 'fail', b.bdf, `device id ${id}`, want, id));
      const nic = nics.get(b.bdf);
      if (!nic || !b.fwVer) continue;
      // A version that could not be read is no evidence of a different one: skip with why, never a mismatch.
      if (nic.fwVer.state !== 'present') out.push(f('firmware-unknown', 'skip', nic.name, `firmware ${factText(nic.fwVer)}`, b.fwVer));
      else if (nic.fwVer.value !== b.fwVer) out.push(f('firmware-mismatch', 'fail', nic.name, `firmware ${nic.fwVer.value}`, b.fwVer, nic.fwVer.value));
    }
    const known = new Set(baseline.devices.map((d) => d.bdf));
    for (const g of inv.gpus) if (!known.has(g.bdf)) out.push(f('inventory-extra', 'warn', g.bdf, 'GPU not in the baseline', 'absent', 'present'));
    for (const n of inv.nics) if (n.bdf.state === 'present' && !known.has(n.bdf.value)) out.push(f('inventory-extra', 'warn', n.name, `RDMA adapter at ${n.bdf.value} not in the baseline`, 'absent', 'present'));
    const bd = baseline.driver;
    const d = inv.gpudirect.driver;
    // A driver version that could not be read is no evidence of another one: skip with why, never a mismatch.
    if (bd && d.state === 'unknown') out.push(f('inventory-unknown', 'skip', 'nvidia', `driver ${d.why}`, `${bd.flavour} ${bd.version}`));
    else if (bd && (d.state === 'absent' || (d.state === 'present' && (bd.version !== d.value.version || bd.flavour !== d.value.flavour)))) {
      const got = d.state === 'present' ? `${d.value.flavour} ${d.value.version}` : 'none';
      out.push(f('driver-mismatch', 'fail', 'nvidia', `driver ${got}`, `${bd.flavour} ${bd.version}`, got));
    }
    const rel = inv.kernelRelease;
    if (baseline.kernel && rel.state !== 'present') out.push(f('inventory-unknown', 'skip', 'kernel', 'kernel release could not be read (/proc/sys/kernel/osrelease, /proc/version)', baseline.kernel));
    else if (baseline.kernel && rel.state === 'present' && baseline.kernel !== rel.value) out.push(f('driver-mismatch', 'warn', 'kernel', `kernel ${rel.value}`, baseline.kernel, rel.value));
    return out;
  },
});
