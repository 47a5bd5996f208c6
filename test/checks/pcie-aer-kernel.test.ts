// pcie-aer where the kernel's handling shapes what is left to read: an advisory non-fatal error the kernel handled
// as correctable (its UESta bit left set, CESta cleared: drivers/pci/pcie/aer.c pci_aer_handle_error), and the class's
// correctable limits over an interval longer than a day (the previous Prolog weeks ago on an idle node).
import type { GenNode } from '../gen/sysfs-tree.js';
import { dev, P0, table, THIS_RUN, type Want } from './_trees.js';

const ok = (subject: string, actual = 'none'): Want => ({ status: 'pass', code: 'aer-ok', subject, expected: 'no uncorrectable error', actual });
const unc = (subject: string, actual: string): Want => ({ status: 'fail', code: 'aer-uncorrectable', subject, expected: 'no uncorrectable error', actual });
const MALF_TLP = 1 << 18;
const gpuCor = (n: number) => (g: GenNode): void => void (dev(g, P0.gpu).aerCounters = { cor: { 6: n } });
const daysBefore = (d: number): Date => new Date(THIS_RUN.getTime() - d * 86_400_000);

export const cases = table('pcie-aer', [
  // An advisory error the kernel handled (CEMsk AdvNonFatalErr- as on the live H200): it counts it as correctable
  // (bit 13) and clears CESta alone (aer.c pci_aer_handle_error); the Completer Abort's UESta bit stays.
  ...(['new', 'old'] as const).map((labels) => ({
    name: `valid: a Completer Abort handled as advisory by the kernel (${labels === 'new' ? '"NonFatalErr 1"' : '4.19: "Advisory Non-Fatal 1"'}, none non-fatal), CESta cleared: correctable`,
    change: (n: GenNode) => void Object.assign(dev(n, P0.gpu), { aer: { ueSta: 1 << 15, ceMsk: 0 }, aerCounters: { cor: { 13: 1 }, labels } }),
    subjects: [P0.gpu],
    bare: [ok(P0.gpu)],
    based: [ok(P0.gpu)],
  })),
  {
    name: 'invalid: the same, but a non-fatal error counted too: which bit was which cannot be told, the counter fails',
    change: (n) => void Object.assign(dev(n, P0.gpu), { aer: { ueSta: 1 << 15, ceMsk: 0 }, aerCounters: { cor: { 13: 1 }, nonfatal: { 15: 1 } } }),
    subjects: [P0.gpu],
    bare: [unc(P0.gpu, 'non-fatal 1, UESta CmpltAbrt')],
    based: [unc(P0.gpu, 'non-fatal 1, UESta CmpltAbrt')],
  },
  {
    name: 'invalid: a Completer Abort left in UESta with no advisory error counted: not advisory',
    change: (n) => void (dev(n, P0.gpu).aer = { ueSta: 1 << 15, ceMsk: 0 }),
    subjects: [P0.gpu],
    bare: [unc(P0.gpu, 'UESta CmpltAbrt')],
    based: [unc(P0.gpu, 'UESta CmpltAbrt')],
  },
  {
    name: 'invalid: an advisory error counted, but the UESta bit is a Malformed TLP (never advisory): fails',
    change: (n) => void Object.assign(dev(n, P0.gpu), { aer: { ueSta: MALF_TLP, ueSvrt: 0, ceMsk: 0 }, aerCounters: { cor: { 13: 1 } } }),
    subjects: [P0.gpu],
    bare: [unc(P0.gpu, 'UESta MalfTLP')],
    based: [unc(P0.gpu, 'UESta MalfTLP')],
  },
  {
    name: 'invalid: an advisory error counted, NonFatalErr reporting off: a real non-fatal one would not be counted, so not advisory',
    change: (n) => void Object.assign(dev(n, P0.gpu), { errorEnables: 0xd, aer: { ueSta: 1 << 15, ceMsk: 0 }, aerCounters: { cor: { 13: 1 } } }),
    subjects: [P0.gpu],
    bare: [unc(P0.gpu, 'UESta CmpltAbrt')],
    based: [
      { status: 'warn', code: 'aer-reporting-off', subject: P0.gpu, expected: 'CorrErr+ NonFatalErr+ FatalErr+ UnsupReq+', actual: 'CorrErr+ NonFatalErr- FatalErr+ UnsupReq+' },
      unc(P0.gpu, 'UESta CmpltAbrt'),
    ],
  },
  // [name, days since the previous Prolog, its count, this count, status, the limit as worded]
  ...([
    ['valid: 110 correctable errors over 30 days since the previous Prolog (3.7 a day): warns, never fails', 30, 40, 150, 'warn', 'growth <= 0 a day'],
    ['invalid: 1,000 correctable errors over 2 days (500 a day): fails', 2, 0, 1000, 'fail', 'growth <= 100 a day'],
    ['invalid: 101 correctable errors in exactly a day: the limit holds as a count, fails', 1, 0, 101, 'fail', 'growth <= 100'],
  ] as const).map(([name, days, was, now, status, expected]) => {
    const want: Want = { status, code: 'aer-correctable', subject: P0.gpu, expected, actual: `+${now - was}` };
    return { name, previous: gpuCor(was), previousAt: daysBefore(days), change: gpuCor(now), subjects: [P0.gpu], bare: [want], based: [want] };
  }),
]);
