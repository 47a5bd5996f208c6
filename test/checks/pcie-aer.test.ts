// pcie-aer on the HGX tree: the kernel's counters (both label sets), the sticky status registers, correctable growth
// against the previous run's counters, reporting enables, and what cannot be told (non-root, no counters).
import { allDevices, type GenNode } from '../gen/sysfs-tree.js';
import { dev, detach, HGX, P0, put, table, unreadable, type Want } from './_trees.js';

const PATH0 = [P0.rp, P0.up, P0.downGpu, P0.downNic, P0.gpu, P0.nic];
const ALL = [...new Set(allDevices(HGX).filter((d) => d.kind !== 'other').map((d) => d.bdf))];
const ok = (subject: string, actual = 'none'): Want => ({ status: 'pass', code: 'aer-ok', subject, expected: 'no uncorrectable error', actual });
const unc = (subject: string, actual: string): Want => ({ status: 'fail', code: 'aer-uncorrectable', subject, expected: 'no uncorrectable error', actual });
const cor = (status: 'warn' | 'fail', subject: string, limit: number, actual: string): Want => ({ status, code: 'aer-correctable', subject, expected: `growth <= ${limit}`, actual });
const unknown = (subject: string): Want => ({ status: 'skip', code: 'aer-unknown', subject });
const MALF_TLP = 1 << 18;
const CMPLT_TO = 1 << 14;
const UNSUP_REQ = 1 << 20;
const ADV_NONFATAL = 1 << 13;
const BAD_TLP = 1 << 6;
const RX_ERR = 1 << 0;
/** DevCtl error reporting: NonFatalErr+ FatalErr+ UnsupReq+, CorrErr- (correctable reporting off). */
const NO_CORR_ERR = 0xe;
/** The GPU's correctable counters: BadTLP (bit 6) at n. */
const gpuCor = (n: number) => (g: GenNode): void => void (dev(g, P0.gpu).aerCounters = { cor: { 6: n } });
const noCounters = (g: GenNode): void => allDevices(g).forEach((d) => (d.aerCounters = null));

export const cases = table('pcie-aer', [
  {
    name: 'valid: healthy HGX, every counter 0 with reporting on, nothing in UESta/CESta',
    subjects: PATH0,
    bare: PATH0.map((b) => ok(b)),
    based: PATH0.map((b) => ok(b)),
  },
  {
    name: 'invalid: a fatal Malformed TLP on GPU0, counted by the kernel (5.x labels) and in UESta',
    change: (n) => Object.assign(dev(n, P0.gpu), { aerCounters: { fatal: { 18: 1 } }, aer: { ueSta: MALF_TLP } }),
    bare: [unc(P0.gpu, 'fatal 1, UESta MalfTLP')],
    based: [unc(P0.gpu, 'fatal 1, UESta MalfTLP')],
  },
  {
    name: 'invalid: the same on a 4.19 kernel ("Malformed TLP"): labels are not matched by name',
    change: (n) => Object.assign(dev(n, P0.gpu), { aerCounters: { fatal: { 18: 2 }, labels: 'old' } }),
    bare: [unc(P0.gpu, 'fatal 2')],
    based: [unc(P0.gpu, 'fatal 2')],
  },
  {
    name: 'invalid: firmware-first: counters stay 0, UESta holds a non-fatal Completion Timeout on mlx5_0',
    change: (n) => void (dev(n, P0.nic).aer = { ueSta: CMPLT_TO }),
    bare: [unc(P0.nic, 'UESta CmpltTO')],
    based: [unc(P0.nic, 'UESta CmpltTO')],
  },
  {
    name: 'invalid: the root port above GPU0 was sent a non-fatal error from below (aer_rootport_total_err_nonfatal)',
    change: (n) => void (dev(n, P0.rp).aerCounters = { rootport: { cor: 0, nonfatal: 1, fatal: 0 } }),
    bare: [unc(P0.rp, 'below: fatal 0, non-fatal 1')],
    based: [unc(P0.rp, 'below: fatal 0, non-fatal 1')],
  },
  {
    name: 'valid: UnsupReq masked in UEMsk, AdvNonFatalErr in CESta (as lspci shows a ConnectX-7 on the ESC8000A)',
    change: (n) => void (dev(n, P0.nic).aer = { ueSta: UNSUP_REQ, ueMsk: UNSUP_REQ, ceSta: ADV_NONFATAL }),
    subjects: [P0.nic],
    bare: [ok(P0.nic)],
    based: [ok(P0.nic)],
  },
  {
    name: 'valid: an advisory non-fatal Unsupported Request (unmasked, non-fatal severity, AdvNonFatalErr+) is correctable',
    change: (n) => void (dev(n, P0.nic).aer = { ueSta: UNSUP_REQ, ceSta: ADV_NONFATAL }),
    subjects: [P0.nic],
    bare: [ok(P0.nic)],
    based: [ok(P0.nic)],
  },
  {
    name: 'invalid: a Completion Timeout of fatal severity (UESvrt bit 14) beside AdvNonFatalErr+: only non-fatal ones are advisory',
    change: (n) => void (dev(n, P0.nic).aer = { ueSta: CMPLT_TO, ueSvrt: 0x00462030 | CMPLT_TO, ceSta: ADV_NONFATAL }),
    subjects: [P0.nic],
    bare: [unc(P0.nic, 'UESta CmpltTO')],
    based: [unc(P0.nic, 'UESta CmpltTO')],
  },
  // The other errors a requester or completer may handle as advisory (PCIe Base 6.3 §6.2.3.2.4), each on its own.
  ...([[12, 'a Poisoned TLP'], [14, 'a Completion Timeout'], [15, 'a Completer Abort'], [16, 'an Unexpected Completion']] as const).map(([bit, what]) => ({
    name: `valid: ${what} (bit ${bit}), non-fatal severity, AdvNonFatalErr+: advisory, so correctable`,
    change: (n: GenNode) => void (dev(n, P0.nic).aer = { ueSta: 1 << bit, ceSta: ADV_NONFATAL }),
    subjects: [P0.nic],
    bare: [ok(P0.nic)],
    based: [ok(P0.nic)],
  })),
  {
    name: 'invalid: GPU0\'s BadTLP counter grew by 3 since the previous Prolog: warn; the class may allow it',
    previous: gpuCor(2),
    change: gpuCor(5),
    edit: { aer: { correctableWarnAbove: 5, correctableFailAbove: 100 } },
    subjects: [P0.gpu],
    bare: [cor('warn', P0.gpu, 0, '+3')],
    based: [ok(P0.gpu)],
  },
  {
    name: 'invalid: 150 correctable errors in an hour fail by default; a class allowing 1000 only warns',
    previous: gpuCor(0),
    change: gpuCor(150),
    edit: { aer: { correctableWarnAbove: 0, correctableFailAbove: 1000 } },
    bare: [cor('fail', P0.gpu, 100, '+150')],
    based: [cor('warn', P0.gpu, 0, '+150')],
  },
  {
    name: 'valid: a Malformed TLP masked in UEMsk, nothing advisory beside it: masked is said, never failed',
    change: (n) => void (dev(n, P0.nic).aer = { ueSta: MALF_TLP, ueMsk: MALF_TLP }),
    subjects: [P0.nic],
    bare: [ok(P0.nic)],
    based: [ok(P0.nic)],
  },
  {
    name: 'invalid: exactly 100 correctable errors since the previous Prolog warn; 101 fail (the default fail limit is "above 100")',
    previous: gpuCor(0),
    change: gpuCor(100),
    subjects: [P0.gpu],
    bare: [cor('warn', P0.gpu, 0, '+100')],
    based: [cor('warn', P0.gpu, 0, '+100')],
  },
  {
    name: 'invalid: 101 correctable errors fail',
    previous: gpuCor(0),
    change: gpuCor(101),
    subjects: [P0.gpu],
    bare: [cor('fail', P0.gpu, 100, '+101')],
    based: [cor('fail', P0.gpu, 100, '+101')],
  },
  {
    name: 'invalid: the root port above GPU0 was sent 5 correctable errors from below, its own counter flat: growth +5',
    previous: (n) => void (dev(n, P0.rp).aerCounters = { rootport: { cor: 0, nonfatal: 0, fatal: 0 } }),
    change: (n) => void (dev(n, P0.rp).aerCounters = { rootport: { cor: 5, nonfatal: 0, fatal: 0 } }),
    subjects: [P0.rp],
    bare: [cor('warn', P0.rp, 0, '+5')],
    based: [cor('warn', P0.rp, 0, '+5')],
  },
  {
    name: 'valid: no counters (a VM), a CESta bit cleared since the previous Prolog: the reference is reset, said so',
    previous: (n) => (noCounters(n), void (dev(n, P0.gpu).aer = { ceSta: BAD_TLP })),
    ref: noCounters,
    change: noCounters,
    subjects: [P0.gpu],
    bare: [{ status: 'pass', code: 'aer-reset', subject: P0.gpu, expected: 'no uncorrectable error', actual: 'reference reset' }],
    based: [{ status: 'pass', code: 'aer-reset', subject: P0.gpu, expected: 'no uncorrectable error', actual: 'reference reset' }],
  },
  {
    name: 'valid: no counters, a new AdvNonFatalErr bit in CESta is advisory, not a correctable error',
    previous: noCounters,
    ref: noCounters,
    change: (n) => (noCounters(n), void (dev(n, P0.gpu).aer = { ceSta: ADV_NONFATAL })),
    subjects: [P0.gpu],
    bare: [ok(P0.gpu, 'none seen (counters unknown)')],
    based: [ok(P0.gpu, 'none seen (counters unknown)')],
  },
  {
    name: "valid: 150 more correctable errors, but this boot's boot_id reads empty: no growth known (a new boot's counters are never set against the last boot's)",
    previous: gpuCor(0),
    change: (n) => (gpuCor(150)(n), (n.bootId = '')),
    subjects: [P0.gpu],
    bare: [ok(P0.gpu)],
    based: [ok(P0.gpu)],
  },
  {
    name: "valid: the same when the previous run's boot_id was torn: no growth known",
    previous: (n) => (gpuCor(0)(n), (n.bootId = '6f1d2c3b-8a4e')),
    change: gpuCor(150),
    subjects: [P0.gpu],
    bare: [ok(P0.gpu)],
    based: [ok(P0.gpu)],
  },
  {
    name: 'valid: another boot since the previous Prolog (boot_id changed) though the counter grew: the reference is reset, said so',
    previous: gpuCor(0),
    change: (n) => (gpuCor(150)(n), (n.bootId = '0b9e6c1a-3d2f-4e8b-a5c7-9f1e2d3c4b5a')),
    subjects: [P0.gpu],
    bare: [{ status: 'pass', code: 'aer-reset', subject: P0.gpu, expected: 'no uncorrectable error', actual: 'reference reset' }],
    based: [{ status: 'pass', code: 'aer-reset', subject: P0.gpu, expected: 'no uncorrectable error', actual: 'reference reset' }],
  },
  {
    name: 'valid: the counter went down since the previous Prolog (reboot, clear): the reference is reset, said so',
    previous: gpuCor(50),
    change: gpuCor(2),
    subjects: [P0.gpu],
    bare: [{ status: 'pass', code: 'aer-reset', subject: P0.gpu, expected: 'no uncorrectable error', actual: 'reference reset' }],
    based: [{ status: 'pass', code: 'aer-reset', subject: P0.gpu, expected: 'no uncorrectable error', actual: 'reference reset' }],
  },
  {
    name: 'invalid: no counters (a VM): a new CESta BadTLP bit since the previous Prolog is at least one error',
    previous: noCounters,
    ref: noCounters,
    change: (n) => {
      noCounters(n);
      dev(n, P0.gpu).aer = { ceSta: BAD_TLP };
    },
    bare: [cor('warn', P0.gpu, 0, '+1 or more')],
    based: [cor('warn', P0.gpu, 0, '+1 or more')],
  },
  {
    name: 'valid: no counters, CESta RxErr set at the previous Prolog and still set: nothing new, never an error on every run',
    previous: (n) => (noCounters(n), void (dev(n, P0.gpu).aer = { ceSta: RX_ERR })),
    ref: noCounters,
    change: (n) => (noCounters(n), void (dev(n, P0.gpu).aer = { ceSta: RX_ERR })),
    subjects: [P0.gpu],
    bare: [ok(P0.gpu, 'none seen (counters unknown)')],
    based: [ok(P0.gpu, 'none seen (counters unknown)')],
  },
  {
    name: 'invalid: correctable reporting off (CorrErr-), the counter flat at 0, a new CESta RxErr: the status register counts, not the idle counter',
    previous: (n) => void (dev(n, P0.gpu).errorEnables = NO_CORR_ERR),
    ref: (n) => void (dev(n, P0.gpu).errorEnables = NO_CORR_ERR),
    change: (n) => void Object.assign(dev(n, P0.gpu), { errorEnables: NO_CORR_ERR, aer: { ceSta: RX_ERR } }),
    subjects: [P0.gpu],
    bare: [cor('warn', P0.gpu, 0, '+1 or more')],
    based: [cor('warn', P0.gpu, 0, '+1 or more')],
  },
  {
    name: 'valid: no aer_dev_* files (the live H200 VM\'s GPU): judged by the status registers, counters unknown, never "0 errors"',
    change: noCounters,
    ref: noCounters,
    subjects: [P0.gpu, P0.nic],
    bare: [ok(P0.gpu, 'none seen (counters unknown)'), ok(P0.nic, 'none seen (counters unknown)')],
    based: [ok(P0.gpu, 'none seen (counters unknown)'), ok(P0.nic, 'none seen (counters unknown)')],
  },
  {
    name: 'invalid with baseline: GPU0 reports fatal errors only (DevCtl FatalErr+), the reference reported all four',
    change: (n) => void (dev(n, P0.gpu).errorEnables = 0x4),
    subjects: [P0.gpu],
    bare: [ok(P0.gpu, 'none seen (counters unknown)')],
    based: [{ status: 'warn', code: 'aer-reporting-off', subject: P0.gpu, expected: 'CorrErr+ NonFatalErr+ FatalErr+ UnsupReq+', actual: 'CorrErr- NonFatalErr- FatalErr+ UnsupReq-' }],
  },
  {
    name: 'valid with baseline: GPU0 reports correctable errors the reference did not (CorrErr+ where it had CorrErr-): nothing lost',
    ref: (n) => void (dev(n, P0.gpu).errorEnables = NO_CORR_ERR),
    subjects: [P0.gpu],
    bare: [ok(P0.gpu)],
    based: [ok(P0.gpu)],
  },
  {
    name: 'invalid with baseline: the kernel keeps no counters for GPU0 where the reference kept them (pci=noaer)',
    change: (n) => void (dev(n, P0.gpu).aerCounters = null),
    subjects: [P0.gpu],
    bare: [ok(P0.gpu, 'none seen (counters unknown)')],
    based: [{ status: 'warn', code: 'aer-reporting-off', subject: P0.gpu, expected: 'aer_dev_* counters', actual: 'no counters' }],
  },
  {
    name: 'skip: non-root read (64-byte configs): zero counters with unknown enables and no status registers are unknown, never pass',
    change: (n) => allDevices(n).forEach((d) => (d.configBytes = 64)),
    subjects: ALL,
    bare: ALL.map(unknown),
    based: ALL.map(unknown),
  },
  {
    name: 'skip: AER capability cut off (256-byte config) and no counters: unknown',
    ref: noCounters,
    change: (n) => {
      noCounters(n);
      dev(n, P0.gpu).configBytes = 256;
    },
    subjects: [P0.gpu],
    bare: [unknown(P0.gpu)],
    based: [unknown(P0.gpu)],
  },
  {
    name: 'skip: aer_dev_fatal counting 2^64-1 (rejected) with a clean UESta: the kernel clears what it counted, so unknown, never "no error"',
    patch: put(`sys/bus/pci/devices/${P0.gpu}/aer_dev_fatal`, 'Undefined 0\nDLP 0\nTOTAL_ERR_FATAL 18446744073709551615\n'),
    subjects: [P0.gpu],
    bare: [unknown(P0.gpu)],
    based: [unknown(P0.gpu)],
  },
  {
    name: 'skip: aer_dev_nonfatal with an extra line after its total, as root: unknown, never "no error"',
    patch: put(`sys/bus/pci/devices/${P0.gpu}/aer_dev_nonfatal`, 'Undefined 0\nDLP 0\nTOTAL_ERR_NONFATAL 0\nextra 1\n'),
    subjects: [P0.gpu],
    bare: [unknown(P0.gpu)],
    based: [unknown(P0.gpu)],
  },
  {
    // pci_dev_aer_stats_incr adds 1 to the total for every error and 1 to each status bit it had: no bit can count more
    // than the total. Read by its total alone, this file was "no uncorrectable error", a pass.
    name: 'skip: aer_dev_fatal counting DLP 3 under TOTAL_ERR_FATAL 0 (no kernel writes it), a clean UESta: unknown, never "no error"',
    patch: put(`sys/bus/pci/devices/${P0.gpu}/aer_dev_fatal`, 'Undefined 0\nDLP 3\nTOTAL_ERR_FATAL 0\n'),
    subjects: [P0.gpu],
    bare: [unknown(P0.gpu)],
    based: [unknown(P0.gpu)],
  },
  {
    name: 'skip: aer_dev_fatal unreadable on a non-root read of GPU0',
    change: (n) => void (dev(n, P0.gpu).configBytes = 64),
    patch: unreadable(`sys/bus/pci/devices/${P0.gpu}/aer_dev_fatal`),
    subjects: [P0.gpu],
    bare: [unknown(P0.gpu)],
    based: [unknown(P0.gpu)],
  },
  {
    name: 'skip: no GPU and no RDMA adapter (aer-na)',
    change: (n) => allDevices(HGX).filter((d) => d.kind === 'gpu' || d.kind === 'nic').forEach((d) => detach(n, d.bdf)),
    bare: [{ status: 'skip', code: 'aer-na', subject: 'node' }],
    based: [{ status: 'skip', code: 'aer-na', subject: 'node' }],
  },
]);
