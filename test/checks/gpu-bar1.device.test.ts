// gpu-bar1 on the live H200, from what scripts/device-pcie.sh saved there (the lead copies its $OUT files into
// test/fixtures/device-h200-live/): the gate's window equals nvidia-smi -q's "BAR1 Memory Usage: Total", the resource
// file decodes to it, and lspci -vvv -F on the GPU's config dump puts that BAR at the same address.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { bar1Window, parseResource, type PciResource } from '../../src/parsers/pci-resource.js';
import { fixture } from '../helpers/paths.js';
import { haveLspci, LSPCI, splitDevices } from '../parsers/lspci-oracle.js';
import { exactly } from '../helpers/exactly.js';

const FILES = ['pcie-nvsmi-q.txt', 'pcie-resource.txt', 'pcie-check.json', 'pcie-config.txt'] as const;
const at = (f: string): string => fixture('device-h200-live', f);
const missing = FILES.filter((f) => !existsSync(at(f)));
if (missing.length) t.pass('live H200 outputs', { skip: `live H200 outputs not saved yet (${missing.join(', ')}): run scripts/device-pcie.sh on the H200 and copy $OUT/* into test/fixtures/device-h200-live/` });
else {
  const read = (f: (typeof FILES)[number]): string => readFileSync(at(f), 'utf8');
  /** nvidia-smi -q: "GPU 00000000:00:06.0" sections, each with "BAR1 Memory Usage / Total : N MiB". */
  const nvsmi = new Map<string, bigint>();
  for (const sec of read('pcie-nvsmi-q.txt').split(/^GPU (?=[0-9A-Fa-f]{8}:)/m).slice(1)) {
    const mib = /BAR1 Memory Usage\s*\n\s*Total\s*:\s*(\d+) MiB/.exec(sec);
    if (mib) nvsmi.set(sec.slice(4, 16).toLowerCase(), BigInt(mib[1]!) << 20n);
  }
  /** pcie-resource.txt: "== <bdf>" then the GPU's lines (the parent's block is "== <bdf> parent …"). */
  const resources = new Map<string, PciResource[]>();
  for (const block of read('pcie-resource.txt').split(/^== /m).slice(1)) {
    const [head, ...body] = block.split('\n');
    const r = parseResource(body.join('\n'));
    if (!head!.includes(' parent') && r.ok) resources.set(head!.trim(), r.value);
  }
  const report = JSON.parse(read('pcie-check.json')) as { findings: { check: string; code: string; status: string; subject: string; actual?: string }[] };
  const findings = report.findings.filter((f) => f.check === 'gpu-bar1');

  t.test('every GPU: the gate says pass with the size nvidia-smi -q reports as BAR1 Total', async (t) => {
    t.ok(nvsmi.size > 0, 'nvidia-smi -q reports a BAR1 Total');
    for (const [bdf, bytes] of nvsmi) {
      const f = findings.find((x) => x.subject === bdf);
      t.match(f, { status: /^pass$/, code: /^bar1-ok$/, actual: exactly(`${bytes >> 30n} GiB`) }, `${bdf}: ${bytes >> 20n} MiB`);
      t.equal(bar1Window(resources.get(bdf) ?? [])?.size, bytes, `${bdf}: resource decodes to the same size`);
    }
  });

  t.test('pcie-throttle there agrees with the cooling devices the script listed (pcie-thermal.txt)', { skip: !existsSync(at('pcie-thermal.txt')) && 'pcie-thermal.txt not saved' }, async (t) => {
    const ports = readFileSync(at('pcie-thermal.txt'), 'utf8').split('\n').filter((l) => / PCIe_Port_Link_Speed_/.test(l));
    const thr = report.findings.filter((f) => f.check === 'pcie-throttle');
    if (ports.length === 0) t.same(thr.map((f) => `${f.status} ${f.code} ${f.subject}: ${f.actual}`), ['pass throttle-ok node: no device'], 'no PCIe cooling device: one pass for the node');
    else t.ok(thr.every((f) => f.status !== 'skip'), 'the live kernel\'s cooling devices are read, never unknown');
  });

  t.test('lspci -vvv -F on the config dump: the window\'s BAR is 64-bit prefetchable at the resource start', { skip: !haveLspci() && `${LSPCI} not installed` }, async (t) => {
    const text = execFileSync(LSPCI, ['-vvv', '-F', at('pcie-config.txt')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    for (const [bdf, rs] of resources) {
      const w = bar1Window(rs)!;
      const block = text.split(/\n(?=\S)/).find((b) => b.startsWith(bdf.replace(/^0000:/, '')) || b.startsWith(bdf)) ?? '';
      t.match(block, new RegExp(`Region ${w.index}: Memory at ${w.start.toString(16)} \\(64-bit, prefetchable\\)`), `${bdf}: Region ${w.index}`);
    }
  });

  const payload = report.findings.filter((f) => f.check === 'pcie-payload');
  t.test('pcie-payload there: each GPU\'s MaxPayload, MaxReadReq and ASPM as lspci -vvv -F decodes its config dump; the policy and command line as pcie-aspm.txt lists them', { skip: (payload.length === 0 && 'pcie-check.json predates pcie-payload: run scripts/device-pcie.sh again') || (!haveLspci() && `${LSPCI} not installed`) }, async (t) => {
    const text = execFileSync(LSPCI, ['-vvv', '-F', at('pcie-config.txt')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    const listed = splitDevices(text);
    t.ok(listed.length > 0, 'lspci decodes the dump');
    for (const dev of listed) {
      const f = payload.find((x) => x.subject === dev.slot || x.subject === `0000:${dev.slot}`);
      const want = `MaxPayload ${dev.devCtl?.mps} bytes, MaxReadReq ${dev.devCtl?.mrrs} bytes, ASPM ${dev.lnkCtl?.aspm}`;
      t.ok(f?.actual?.startsWith(want), `${dev.slot}: the gate says ${f?.actual}; lspci ${want}`);
    }
    if (!existsSync(at('pcie-aspm.txt'))) return;
    const lines = readFileSync(at('pcie-aspm.txt'), 'utf8').split('\n');
    const active = /\[([a-z]+)\]/.exec(lines.find((l) => l.startsWith('policy ')) ?? '')?.[1] ?? 'none';
    t.match(payload.find((f) => f.subject === 'node'), { actual: new RegExp(`ASPM policy ${active}$`) }, `node: ASPM policy ${active}`);
    const bus = /\bpci=\S*(pcie_bus_[a-z0-9_]+)/.exec(lines.find((l) => l.startsWith('cmdline ')) ?? '')?.[1];
    t.match(payload.find((f) => f.subject === 'node'), { actual: bus ? new RegExp(`^pci=${bus}`) : /^no pci=pcie_bus_\*/ }, `node: ${bus ?? 'no pci=pcie_bus_*'}`);
  });
}
