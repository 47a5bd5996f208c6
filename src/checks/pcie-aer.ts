// pcie-aer: AER errors on every GPU, adapter and bridge of a GPU↔NIC path (drivers/pci/pcie/aer.c counters, the AER
// capability's sticky status registers, PCIe Base 6.3 §7.8.4). Uncorrectable errors since boot fail; correctable
// errors are judged by their growth since a reference run against the class's rate: absolute counts mean nothing
// without the uptime. Reporting off (Device Control bits 0-3) makes a zero counter unknown, never "no errors".
import { nul } from '../model/fact.js';
import { type Check, type Codes, defineCheck, finder } from './types.js';
import { AER_DEFAULTS, ceNames, lostEnables, correctableGrowth, deviceAer, duration, enablesText, uncorrectable } from './aer-judge.js';

const CODES = {
  'aer-ok': { tells: 'No uncorrectable PCIe error since boot and no correctable growth beyond the class\'s rate on this device (the message says what was judged: the kernel\'s counters, the status registers).', do: 'None.', layer: 'server' },
  'aer-uncorrectable': { tells: 'A fatal or non-fatal (uncorrectable) PCIe error was recorded on this device since boot: a lost or poisoned transaction on a GPU↔NIC path, often followed by a reset, a GPU fallen off the bus (Xid 79) or RDMA timeouts.', do: 'Drain and read dmesg (AER lines name the device and the TLP header); reseat or replace the card, riser or cable; the status bits stay set until cleared or power-cycled.', layer: 'server' },
  'aer-correctable': { tells: 'Correctable PCIe errors grew since the reference run (the previous Prolog, or the job\'s Prolog): every one is a replayed transfer, and a growing count marks a degrading link before it fails.', do: 'Watch the rate over the next jobs; above the class\'s threshold, reseat or replace the card, riser or retimer; compare the link width and speed with pcie-link.', layer: 'server' },
  'aer-reset': { tells: 'The correctable counters went down, or the node booted, since the reference run: the reference starts again from here.', do: 'None (a reboot, a driver reload or a cleared status register); growth is judged from the next run.', layer: 'server' },
  'aer-reporting-off': { tells: 'Error reporting (Device Control CorrErr/NonFatalErr/FatalErr/UnsupReq) is off where the reference node had it on: the kernel\'s counters for those errors stay 0 whatever happens.', do: 'Find what turned it off (a BIOS setting, firmware-first handling, pci=noaer, setpci at boot); compare lspci DevCtl with the reference node.', layer: 'server' },
  'aer-unknown': { tells: 'Whether this device had PCIe errors could not be told: no counters the kernel keeps with reporting on, and no readable AER status registers (config space beyond 64 bytes needs root).', do: 'Run the gate as root (Slurm Prolog does); on a VM the status registers are what there is.', layer: 'scheduler' },
  'aer-na': { tells: 'No GPU or RDMA adapter, so no GPU↔NIC path to judge.', do: 'None.', layer: 'server' },
} as const satisfies Codes;

const f = finder('pcie-aer', CODES);

const check: Check<'pcie-aer', typeof CODES> = defineCheck({
  id: 'pcie-aer',
  title: 'AER errors on the GPU↔NIC paths',
  reasonLabel: 'pcie-aer',
  codes: CODES,
  docs: 'docs/checks/pcie-aer.md',
  run({ inv, baseline, aerHistory, now }) {
    // inv.pci holds exactly the GPUs, the NICs and the bridges on their paths.
    const devices = [...inv.pci.values()];
    if (devices.length === 0) return [f('aer-na', 'skip', 'node', 'not applicable: no GPU or RDMA adapter with a PCI function')];
    const rate = baseline?.aer ?? AER_DEFAULTS;
    const at = now ?? new Date();
    return devices.flatMap((d) => {
      const x = deviceAer(d);
      const out = [];
      const u = uncorrectable(d, x);
      const refDev = baseline?.devices.find((b) => b.bdf === d.bdf);
      const ref = refDev?.errorReporting;
      // Only against a reference; the same text as the reference's (the usual case) has lost nothing.
      const enables = ref !== undefined && x.devCtl ? enablesText(x.devCtl) : null;
      if (ref !== undefined && enables !== null && enables !== ref) {
        const lost = lostEnables(ref, enables);
        if (lost.length) out.push(f('aer-reporting-off', 'warn', d.bdf, `DevCtl ${enables} where the reference had ${ref}: those errors are not counted`, ref, enables));
      }
      // The reference's kernel kept counters for this device; this one keeps none (pci=noaer, AER handed to firmware).
      if (refDev?.aerCounters === true && d.aer.correctable.state === 'absent')
        out.push(f('aer-reporting-off', 'warn', d.bdf, 'no aer_dev_* counters where the reference node had them: the kernel no longer counts this device\'s errors (pci=noaer, firmware-first)', 'aer_dev_* counters', 'no counters'));
      const notes = u.notes.length ? `; ${u.notes.join('; ')}` : '';
      if (u.errors.length) out.push(f('aer-uncorrectable', 'fail', d.bdf, `uncorrectable errors since boot: ${u.errors.join('; ')}${notes}`, 'no uncorrectable error', u.actual));
      const g = correctableGrowth(d, x, nul(inv.bootId), aerHistory ?? null, at);
      const against = aerHistory?.against ?? 'the reference run';
      if (g.kind === 'growth' && g.n > rate.correctableWarnAbove) {
        const fail = g.n > rate.correctableFailAbove;
        const n = `${g.n}${g.exact ? '' : ' or more'}`;
        const perHour = g.seconds ? `, ${((g.n * 3600) / g.seconds).toFixed(g.n * 3600 >= g.seconds * 10 ? 0 : 1)}/h` : '';
        out.push(f('aer-correctable', fail ? 'fail' : 'warn', d.bdf, `correctable errors +${n} in ${duration(g.seconds)}${perHour} since ${against}: ${g.detail}`, `growth <= ${fail ? rate.correctableFailAbove : rate.correctableWarnAbove}`, `+${n}`));
      }
      if (out.length) return out;
      // Nothing wrong found: say exactly what that rests on, and what could not be judged.
      const judged = [...u.sources, ...(g.kind === 'growth' ? [`correctable ${g.detail}`] : x.cap ? [`CESta ${ceNames(x.cap.corStatus) || 'clean'}`] : [])];
      const unknownNow = [...u.unknown, ...(g.kind === 'unknown' ? [g.why] : [])];
      const growthText = g.kind === 'growth' ? '' : g.kind === 'unknown' ? '' : `; ${g.why}`;
      if (u.sources.length === 0) return [f('aer-unknown', 'skip', d.bdf, `PCIe errors unknown: ${unknownNow.join('; ')}`)];
      // A counter the kernel keeps could not be read: clean status registers say nothing (the kernel clears them).
      if (u.unreadCounters.length) return [f('aer-unknown', 'skip', d.bdf, `uncorrectable errors unknown: ${u.unreadCounters.join('; ')} (the kernel clears the status bits of errors it counted)`)];
      const tail = `${unknownNow.length ? `; unknown: ${unknownNow.join('; ')}` : ''}${notes}`;
      if (g.kind === 'reset') return [f('aer-reset', 'pass', d.bdf, `no uncorrectable error (${u.sources.join(', ')}); ${g.why}${tail}`, 'no uncorrectable error', 'reference reset')];
      return [f('aer-ok', 'pass', d.bdf, `no uncorrectable error (${judged.join(', ')})${growthText}${tail}`, 'no uncorrectable error', u.unknown.length ? 'none seen (counters unknown)' : 'none')];
    });
  },
});

export default check;
