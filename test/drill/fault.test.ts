// Fault syntax of gdrgate drill: table of valid and invalid faults (ESLint RuleTester style).
import t from 'tap';
import { formatFault, parseFault } from '../../src/drill/fault.js';

const valid: [string, unknown, string][] = [
  ['pcie-link:0000:17:00.0=x8', { kind: 'pcie-link', bdf: '0000:17:00.0', width: 8 }, 'pcie-link:0000:17:00.0=x8'],
  ['pcie-acs:0000:16:02.0=ReqRedir', { kind: 'pcie-acs', bdf: '0000:16:02.0', bit: 'ReqRedir' }, 'pcie-acs:0000:16:02.0=ReqRedir'],
  ['pcie-acs:0000:16:02.0=EgressCtrl', { kind: 'pcie-acs', bdf: '0000:16:02.0', bit: 'EgressCtrl' }, 'pcie-acs:0000:16:02.0=EgressCtrl'],
  ['gpu-bar1:0000:18:00.0=256M', { kind: 'gpu-bar1', bdf: '0000:18:00.0', bytes: 256 << 20 }, 'gpu-bar1:0000:18:00.0=256M'],
  ['gpu-bar1:0000:18:00.0=16G', { kind: 'gpu-bar1', bdf: '0000:18:00.0', bytes: 16 * 2 ** 30 }, 'gpu-bar1:0000:18:00.0=16G'],
  ['pcie-relaxed-ordering:0000:19:00.0=off', { kind: 'pcie-relaxed-ordering', bdf: '0000:19:00.0' }, 'pcie-relaxed-ordering:0000:19:00.0=off'],
  ['pcie-throttle:0000:17:00.0=2', { kind: 'pcie-throttle', bdf: '0000:17:00.0', state: 2 }, 'pcie-throttle:0000:17:00.0=2'],
  ['pcie-aer:0000:18:00.0=fatal', { kind: 'pcie-aer', bdf: '0000:18:00.0', error: 'fatal', n: 1 }, 'pcie-aer:0000:18:00.0=fatal'],
  ['pcie-aer:0000:19:00.0=nonfatal', { kind: 'pcie-aer', bdf: '0000:19:00.0', error: 'nonfatal', n: 1 }, 'pcie-aer:0000:19:00.0=nonfatal'],
  ['pcie-aer:0000:18:00.0=cor+150', { kind: 'pcie-aer', bdf: '0000:18:00.0', error: 'cor', n: 150 }, 'pcie-aer:0000:18:00.0=cor+150'],
  ['pcie-payload:0000:17:00.0=mps512', { kind: 'pcie-payload', bdf: '0000:17:00.0', field: 'mps', bytes: 512 }, 'pcie-payload:0000:17:00.0=mps512'],
  ['pcie-payload:0000:19:00.0=mrrs128', { kind: 'pcie-payload', bdf: '0000:19:00.0', field: 'mrrs', bytes: 128 }, 'pcie-payload:0000:19:00.0=mrrs128'],
  ['memlock=64K', { kind: 'memlock', bytes: 65536 }, 'memlock=64K'],
  ['memlock=65536', { kind: 'memlock', bytes: 65536 }, 'memlock=64K'],
  ['memlock=8M', { kind: 'memlock', bytes: 8 << 20 }, 'memlock=8192K'],
  ['gpudirect-mechanism=none', { kind: 'gpudirect-mechanism', value: 'none' }, 'gpudirect-mechanism=none'],
];
const invalid: [string, string][] = [
  ['pcie-link:0000:17:00.0', 'want <check>[:<subject>]=<value>'],
  ['pcie-link:17:00.0=x8', 'subject must be a PCI address (0000:17:00.0)'],
  ['pcie-link:0000:17:00.0=x3', 'value must be a link width: x1, x2, x4, x8, x12, x16, x32'],
  ['pcie-link:0000:17:00.0=8', 'value must be a link width: x1, x2, x4, x8, x12, x16, x32'],
  ['pcie-acs:0000:16:02.0=SrcValid', 'value must be one of ReqRedir, CmpltRedir, EgressCtrl'],
  ['gpu-bar1:0000:18:00.0=0', 'value must be a window size (256M, 16G)'],
  ['gpu-bar1:18:00.0=256M', 'subject must be a GPU PCI address (0000:18:00.0)'],
  ['pcie-relaxed-ordering:0000:19:00.0=on', 'the only pcie-relaxed-ordering fault is off'],
  ['pcie-throttle:0000:17:00.0=0', 'value must be a cooling state from 1 (one speed step down)'],
  ['pcie-aer:0000:18:00.0=cor', 'value must be fatal, nonfatal or cor+N (N correctable errors more, 1 to 999999999)'],
  ['pcie-aer:0000:18:00.0=cor+0', 'value must be fatal, nonfatal or cor+N (N correctable errors more, 1 to 999999999)'],
  ['pcie-aer:0000:18:00.0=correctable', 'value must be fatal, nonfatal or cor+N (N correctable errors more, 1 to 999999999)'],
  ['pcie-aer:18:00.0=fatal', 'subject must be a PCI address on a GPU↔NIC path (0000:18:00.0)'],
  ['pcie-payload:0000:17:00.0=mps384', 'value must be mps or mrrs and a size in bytes from 128 to 4096 (mps512, mrrs256)'],
  ['pcie-payload:0000:17:00.0=mps8192', 'value must be mps or mrrs and a size in bytes from 128 to 4096 (mps512, mrrs256)'],
  ['pcie-payload:0000:17:00.0=512', 'value must be mps or mrrs and a size in bytes from 128 to 4096 (mps512, mrrs256)'],
  ['pcie-payload:17:00.0=mps512', 'subject must be a PCI address on a GPU↔NIC path (0000:17:00.0)'],
  ['memlock=unlimited', 'value must be a size (64K, 8M, 65536)'],
  ['memlock=lots', 'value must be a size (64K, 8M, 65536)'],
  ['memlock:self=64K', 'memlock takes no subject (memlock=64K)'],
  ['gpudirect-mechanism=peermem', 'the only gpudirect-mechanism fault is gpudirect-mechanism=none'],
  ['iommu-mode=off', 'unknown check "iommu-mode": pcie-link, pcie-acs, pcie-relaxed-ordering, pcie-throttle, pcie-aer, pcie-payload, gpu-bar1, gpu-rebar, memlock, gpudirect-mechanism'],
  ['', 'want <check>[:<subject>]=<value>'],
];

for (const [text, want, printed] of valid) {
  const p = parseFault(text);
  t.same(p, { ok: true, value: want }, `valid: ${text}`);
  if (p.ok) t.equal(formatFault(p.value), printed, `prints as ${printed}`);
  if (p.ok) t.same(parseFault(formatFault(p.value)), p, `${printed} parses back to the same fault`);
}
for (const [text, why] of invalid) {
  const p = parseFault(text);
  t.equal(p.ok, false, `invalid: ${JSON.stringify(text)}`);
  if (!p.ok) t.equal(p.error, `fault ${JSON.stringify(text)}: ${why}`, `says why: ${p.error}`);
}
