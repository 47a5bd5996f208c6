// pcie-aer: AER errors on every GPU, adapter and bridge of a GPU↔NIC path (drivers/pci/pcie/aer.c counters, the AER
// capability's sticky status registers, PCIe Base 6.3 §7.8.4). Uncorrectable errors since boot fail; correctable
// errors are judged by their growth since a reference run against the class's rate: absolute counts mean nothing
// without the uptime. Reporting off (Device Control bits 0-3) makes a zero counter unknown, never "no errors".
import { nul } from '../model/fact.js';
import type { Finding } from '../model/finding.js';
import { defineCheck, finder } from './types.js';
import WORDING from './pcie-aer.json' with { type: 'json' };
import { AER_DEFAULTS, ceNames, lostEnables, correctableGrowth, deviceAer, duration, enablesText, uncorrectable } from './aer-judge.js';

const f = finder('pcie-aer', WORDING.codes);
const DAY_S = 86_400;

export default defineCheck('pcie-aer', WORDING, {
  run({ inv, baseline, aerHistory, now }): Finding[] {
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
      // The class's limits hold for an interval of up to a day; over a longer one (a node idle for weeks between
      // Prologs, a job of a month) the growth is taken per day, else a month's trickle fails as a burst would.
      const long = g.kind === 'growth' && g.seconds !== null && g.seconds > DAY_S;
      const perDayOf = g.kind !== 'growth' ? 0 : long ? (g.n * DAY_S) / g.seconds! : g.n;
      if (g.kind === 'growth' && perDayOf > rate.correctableWarnAbove) {
        const fail = perDayOf > rate.correctableFailAbove;
        const n = `${g.n}${g.exact ? '' : ' or more'}`;
        const perHour = g.seconds ? `, ${((g.n * 3600) / g.seconds).toFixed(g.n * 3600 >= g.seconds * 10 ? 0 : 1)}/h` : '';
        const perDay = long ? ` (over more than a day the class's limits are per day: ${perDayOf.toFixed(perDayOf >= 10 ? 0 : 1)}/day)` : '';
        const limit = `growth <= ${fail ? rate.correctableFailAbove : rate.correctableWarnAbove}${long ? ' a day' : ''}`;
        out.push(f('aer-correctable', fail ? 'fail' : 'warn', d.bdf, `correctable errors +${n} in ${duration(g.seconds)}${perHour} since ${against}${perDay}: ${g.detail}`, limit, `+${n}`));
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
