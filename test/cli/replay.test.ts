// The bundled real H200 capture, replayed through the real CLI: the report the foundation issue asks for.
import t from 'tap';
import { readFileSync } from 'node:fs';
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
  t.match(by('device-inventory').find((f) => f.subject === 'node')?.message, /no RDMA adapter/);
  t.match(by('gpudirect-mechanism')[0]?.message, /open kernel module 580\.159\.04.*DMA-BUF possible, nvidia_peermem absent/);
  t.match(by('iommu-mode')[0], { status: /^pass$/, message: /no IOMMU/ });
  t.match(by('memlock-limit')[0], { status: /^pass$/, subject: /^self$/, message: /^memlock unlimited$/ });
  t.match(by('pcie-acs')[0], { status: /^skip$/, code: /^acs-na$/, message: /not applicable/ });
  t.match(by('pcie-link')[0], { status: /^pass$/, subject: /^0000:00:06\.0$/ });
  t.match(by('gpu-bar1')[0], { status: /^pass$/, subject: /^0000:00:06\.0$/, actual: /^256 GiB$/, message: /resource line 2, 0x100000000000-0x103fffffffff/ });
  t.match(by('pcie-throttle')[0], { status: /^skip$/, code: /^throttle-unknown$/ });
  // A VM: an AER capability in config space, no aer_dev_* files: judged by the status registers, counters unknown.
  t.same(by('pcie-aer').map((f) => [f.status, f.code, f.subject, f.actual, f.message]), [['pass', 'aer-ok', '0000:00:06.0', 'none seen (counters unknown)',
    'no uncorrectable error (UESta, CESta clean); no growth known (no reference run: a run by hand); unknown: fatal counter absent (no aer_dev_* file); non-fatal counter absent (no aer_dev_* file)']]);
  // The GPU sits on the VM's root bus: no port above it to exceed; lspci: MaxPayload 256 bytes, MaxReadReq 4096 bytes.
  t.match(by('pcie-payload').find((f) => f.subject === '0000:00:06.0'), { status: /^pass$/, code: /^payload-ok$/, actual: /^MaxPayload 256 bytes, MaxReadReq 4096 bytes, ASPM Disabled$/ });
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
  t.match(r.stdout, /PASS\s+pcie-link\s+0000:00:06\.0\s+GPU H200 Gen5 x16 of Gen5 x16/);
  t.match(r.stdout, /result: healthy \(exit 0\)/);
  const topo = cli(['topo', '--root', H200]);
  t.equal(topo.code, 0);
  t.match(topo.stdout, /^\tGPU0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\nGPU0\tX\t0-15\t0\tN\/A\n/, 'same cells as the captured nvidia-smi topo -m');
});

t.test('usage errors exit 2 with a clear message', async (t) => {
  const bad = cli(['check', '--root', '/nonexistent/root']);
  t.equal(bad.code, 2);
  t.match(bad.stderr, /--root \/nonexistent\/root: no such file or directory/);
  const only = cli(['check', '--root', H200, '--only', 'pcie-nope']);
  t.equal(only.code, 2);
  t.match(only.stderr, /unknown check id pcie-nope/);
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
  const live = readFileSync(fixture('device-h200-live/live-check.json'), 'utf8');
  t.same(validate('report', JSON.parse(live)), []);
  // The checks of the recorded run: a check added since is compared once the device session is run again.
  const ids = [...new Set((JSON.parse(live) as { findings: { check: string }[] }).findings.map((f) => f.check))].join(',');
  t.same(strip(cli(['check', '--root', H200, '--only', ids, '--json']).stdout), strip(live));
});
