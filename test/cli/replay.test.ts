// The bundled real H200 capture, replayed through the real CLI: the report the foundation issue asks for.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { reworded } from '../helpers/reworded.js';
import { cli } from '../helpers/cli.js';
import { fixture, H200 } from '../helpers/paths.js';
import { validate } from '../helpers/schema.js';

interface F { check: string; status: string; subject: string; message: string; code: string; actual?: string }

t.test('check --json on examples/h200-vm', async (t) => {
  const r = cli(['check', '--root', H200, '--json']);
  t.equal(r.code, 0, r.stderr);
  const rep = JSON.parse(r.stdout) as { findings: F[]; result: string; summary: Record<string, number> };
  t.same(validate('report', rep), [], 'validates against schemas/report.schema.json');
  t.equal(rep.result, 'healthy');
  const by = (check: string) => rep.findings.filter((f) => f.check === check);
  const gpu = by('device-inventory').find((f) => f.subject === '0000:00:06.0');
  t.match(gpu?.message, /^GPU H200, Gen5 x16 of Gen5 x16, driver 580\.159\.04$/, 'one H200 at 0000:00:06.0, Gen5 x16 of x16');
  t.equal(by('device-inventory').filter((f) => /^GPU /.test(f.message)).length, 1, 'exactly one GPU');
  t.equal(by('device-inventory').find((f) => f.subject === 'node')?.message, 'no RDMA adapter (/sys/class/infiniband absent or empty)');
  t.equal(by('gpudirect-mechanism')[0]?.message, 'open kernel module 580.159.04, kernel 6.18.44-fc-v657-gpu: DMA-BUF possible, nvidia_peermem absent; no RDMA adapter, so nothing uses it yet');
  t.same(by('iommu-mode')[0], { check: 'iommu-mode', code: 'iommu-ok', status: 'pass', subject: 'node', message: 'no IOMMU (no /sys/class/iommu units, no groups)', expected: 'off', actual: 'off', layer: 'security', tells: 'IOMMU mode matches the design for GPU/NIC peer traffic.', response: 'None.' });
  t.same(by('memlock-limit')[0], { check: 'memlock-limit', code: 'memlock-ok', status: 'pass', subject: 'self', message: 'memlock unlimited', expected: '>= unlimited', actual: 'unlimited', layer: 'scheduler', tells: 'Locked-memory limit is high enough to register RDMA buffers.', response: 'None.' });
  t.same(by('pcie-acs')[0], { check: 'pcie-acs', code: 'acs-na', status: 'skip', subject: 'node', message: 'not applicable: no RDMA adapter, so no bridge lies between a GPU and a NIC', layer: 'server', tells: 'No bridge lies between a GPU and an RDMA adapter on this node.', response: 'None.' });
  t.same(by('pcie-link')[0], { check: 'pcie-link', code: 'link-ok', status: 'pass', subject: '0000:00:06.0', message: 'GPU H200 Gen5 x16 of Gen5 x16', expected: 'Gen5 x16', actual: 'Gen5 x16', layer: 'server', tells: 'The link trained to the expected speed and width.', response: 'None.' });
  t.same(by('gpu-bar1')[0], { check: 'gpu-bar1', code: 'bar1-ok', status: 'pass', subject: '0000:00:06.0', message: 'GPUDirect window 256 GiB (resource line 2, 0x100000000000-0x103fffffffff), on a root bus', expected: 'a 64-bit prefetchable BAR', actual: '256 GiB', layer: 'server', tells: 'The GPU exposes its GPUDirect window (the largest 64-bit prefetchable BAR) at the reference size, inside its bridge window.', response: 'None.' });
  t.same(by('pcie-throttle')[0], { check: 'pcie-throttle', code: 'throttle-unknown', status: 'skip', subject: 'node', message: 'PCIe cooling devices unknown (/sys/class/thermal absent: a kernel without thermal, or a capture without it)', layer: 'scheduler', tells: 'Whether a port is held below its top link speed could not be told: no /sys/class/thermal in this tree, a cooling device\'s state unreadable, or a state above 0 on a port whose Link Control 2 could not be read (a read without root).', response: 'Capture again with gdrgate snapshot on the node; the message names the file.' });
  // A VM: an AER capability in config space, no aer_dev_* files: judged by the status registers, counters unknown.
  t.same(by('pcie-aer').map((f) => [f.status, f.code, f.subject, f.actual, f.message]), [['pass', 'aer-ok', '0000:00:06.0', 'none seen (counters unknown)',
    'no uncorrectable error (UESta, CESta clean); no growth known (no reference run: a run by hand); unknown: fatal counter absent (no aer_dev_* file); non-fatal counter absent (no aer_dev_* file)']]);
  // The GPU sits on the VM's root bus: no port above it to exceed; lspci: MaxPayload 256 bytes, MaxReadReq 4096 bytes.
  t.same(by('pcie-payload').find((f) => f.subject === '0000:00:06.0'), { check: 'pcie-payload', code: 'payload-ok', status: 'pass', subject: '0000:00:06.0', message: 'GPU: MaxPayload 256 bytes, MaxReadReq 4096 bytes, ASPM Disabled (supports 256)', expected: 'no reference', actual: 'MaxPayload 256 bytes, MaxReadReq 4096 bytes, ASPM Disabled', layer: 'server', tells: 'Payload sizes and ASPM are as on the reference node (or, without one, as read), and no device\'s MPS exceeds the port above it.', response: 'None.' });
  // The rest by hand too, not only through the golden file the code once wrote: one GPU, no RDMA adapter, no gres.conf;
  // no ATS capability on the GPU (test/fixtures/device-h200-live/raw-2026-12-01/lspci-vvv.txt: none listed at 00:06.0).
  const seen = (check: string): string[] => by(check).map((f) => `${f.status} ${f.code} ${f.subject}`);
  t.same(seen('pcie-relaxed-ordering'), ['skip ro-na node']);
  t.same(seen('topology-distance'), ['skip topology-na node']);
  t.same(seen('pcie-ats'), ['pass ats-ok 0000:00:06.0']);
  t.same(seen('job-placement'), ['skip gres-na node']);
  t.same(rep.summary, { pass: 11, warn: 0, fail: 0, skip: 5, error: 0 });
});

t.test('the replay equals the recorded golden report (time and duration aside)', async (t) => {
  const r = cli(['check', '--root', H200, '--json']);
  const strip = (s: string) => {
    const o = JSON.parse(s) as Record<string, unknown>;
    delete o.time;
    delete o.durationMs;
    delete o.root;
    return o;
  };
  t.same(strip(r.stdout), strip(readFileSync(fixture('golden/h200-vm-check.json'), 'utf8')));
});

t.test('text report and topo on the capture', async (t) => {
  const r = cli(['check', '--root', H200]);
  t.equal(r.code, 0);
  t.equal(r.stdout, [
    `gdrgate check — root ${H200}, no baseline (universal rules only)`,
    'STATUS  CHECK                  SUBJECT       FINDING',
    'SKIP    pcie-acs               node          not applicable: no RDMA adapter, so no bridge lies between a GPU and a NIC',
    'SKIP    pcie-relaxed-ordering  node          not applicable: no RDMA adapter with a PCI function',
    'SKIP    pcie-throttle          node          PCIe cooling devices unknown (/sys/class/thermal absent: a kernel without thermal, or a capture without it)',
    'SKIP    topology-distance      node          not applicable: 1 GPU(s), 0 RDMA adapter(s)',
    'SKIP    job-placement          node          no /etc/slurm/gres.conf',
    'PASS    device-inventory       0000:00:06.0  GPU H200, Gen5 x16 of Gen5 x16, driver 580.159.04',
    'PASS    device-inventory       node          no RDMA adapter (/sys/class/infiniband absent or empty)',
    'PASS    pcie-link              0000:00:06.0  GPU H200 Gen5 x16 of Gen5 x16',
    'PASS    pcie-ats               0000:00:06.0  no ATS capability',
    'PASS    pcie-aer               0000:00:06.0  no uncorrectable error (UESta, CESta clean); no growth known (no reference run: a run by hand); unknown: fatal counter absent (no aer_dev_* file); non-fatal counter absent (no aer_dev_* file)',
    'PASS    pcie-payload           0000:00:06.0  GPU: MaxPayload 256 bytes, MaxReadReq 4096 bytes, ASPM Disabled (supports 256)',
    'PASS    pcie-payload           node          no pci=pcie_bus_*, ASPM policy default; no reference: recorded only',
    'PASS    gpu-bar1               0000:00:06.0  GPUDirect window 256 GiB (resource line 2, 0x100000000000-0x103fffffffff), on a root bus',
    'PASS    iommu-mode             node          no IOMMU (no /sys/class/iommu units, no groups)',
    'PASS    gpudirect-mechanism    node          open kernel module 580.159.04, kernel 6.18.44-fc-v657-gpu: DMA-BUF possible, nvidia_peermem absent; no RDMA adapter, so nothing uses it yet',
    'PASS    memlock-limit          self          memlock unlimited',
    'result: healthy (exit 0) — 0 fail, 0 error, 0 warn, 11 pass, 5 skip',
    '',
  ].join('\n'));
  t.equal(r.stdout.split('\n').at(-2), 'result: healthy (exit 0) — 0 fail, 0 error, 0 warn, 11 pass, 5 skip');
  const topo = cli(['topo', '--root', H200]);
  t.equal(topo.code, 0);
  t.equal(topo.stdout, '\tGPU0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\nGPU0\tX\t0-15\t0\tN/A\n\nLegend:\n\n  X    = Self\n  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)\n  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node\n  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)\n  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)\n  PIX  = Connection traversing at most a single PCIe bridge\n\nComputed from sysfs: GPU↔GPU cells show the PCIe path; NVLink (NV#) is not visible in sysfs and is not shown.\n', 'same cells as the captured nvidia-smi topo -m');
});

t.test('usage errors exit 2 with a clear message', async (t) => {
  const bad = cli(['check', '--root', '/nonexistent/root']);
  t.equal(bad.code, 2);
  t.equal(bad.stderr, 'gdrgate: --root /nonexistent/root: no such file or directory\n');
  const only = cli(['check', '--root', H200, '--only', 'pcie-nope']);
  t.equal(only.code, 2);
  t.equal(only.stderr, 'gdrgate: unknown check id pcie-nope (known: device-inventory, pcie-link, pcie-acs, pcie-ats, pcie-relaxed-ordering, pcie-throttle, pcie-aer, pcie-payload, gpu-bar1, iommu-mode, gpudirect-mechanism, memlock-limit, topology-distance, job-placement)\n');
  const sel = cli(['check', '--root', H200, '--only', 'pcie-link,memlock-limit', '--json']);
  t.same([...new Set((JSON.parse(sel.stdout) as { findings: F[] }).findings.map((f) => f.check))].sort(), ['memlock-limit', 'pcie-link']);
  // One word with blanks, as a site's script passes "$ONLY": the same selection as separate words or commas.
  for (const ids of [['pcie-link memlock-limit'], ['pcie-link, memlock-limit'], ['pcie-link', 'memlock-limit']]) {
    const r = cli(['check', '--root', H200, '--only', ...ids, '--json']);
    t.same([...new Set((JSON.parse(r.stdout) as { findings: F[] }).findings.map((f) => f.check))].sort(), ['memlock-limit', 'pcie-link'], ids.join(' | '));
  }
});

t.test('the live run on the real H200 equals the replay of its capture', async (t) => {
  const strip = (s: string) => {
    const o = JSON.parse(s) as Record<string, unknown>;
    for (const k of ['time', 'durationMs', 'root', 'host', 'version']) delete o[k];
    return o;
  };
  const live = reworded(readFileSync(fixture('device-h200-live/live-check.json'), 'utf8'));
  t.same(validate('report', JSON.parse(live)), []);
  // The checks of the recorded run: a check added since is compared once the device session is run again.
  const ids = [...new Set((JSON.parse(live) as { findings: { check: string }[] }).findings.map((f) => f.check))].join(',');
  t.same(strip(cli(['check', '--root', H200, '--only', ids, '--json']).stdout), strip(live));
});
