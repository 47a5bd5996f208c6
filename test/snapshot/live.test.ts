// The real H200: the report of a live `check --json` equals the replay of the snapshot taken right after it.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { reworded } from '../helpers/reworded.js';
import { cli } from '../helpers/cli.js';
import { H200, REPO } from '../helpers/paths.js';
import { validate } from '../helpers/schema.js';

const FX = `${REPO}/test/snapshot/fixtures`;
const SNAP = `${FX}/h200_firecracker_vm_live_snapshot.tar.gz`;
const strip = (s: string): unknown => {
  const o = JSON.parse(s) as Record<string, unknown>;
  for (const k of ['time', 'durationMs', 'root']) delete o[k];
  return o;
};

t.test('live check --json on the H200 equals check --root of its snapshot', async (t) => {
  const live = reworded(readFileSync(`${FX}/h200_firecracker_vm_live_check.json`, 'utf8'));
  t.same(validate('report', JSON.parse(live)), []);
  // The checks of the recorded run: a check added since (job-placement) has no live recording to equal yet.
  const ids = [...new Set((JSON.parse(live) as { findings: { check: string }[] }).findings.map((f) => f.check))].join(',');
  const r = cli(['check', '--root', SNAP, '--only', ids, '--json']);
  t.equal(r.code, 0, r.stderr);
  // The findings are the live run's. The notes are not: this gdrgate reads files the one that took the snapshot
  // never asked for (the ASPM policy, the root port's AER counters, the boot id), and the snapshot answers those
  // "not recorded" (unknown, with a note), never "absent on the node".
  const got = strip(r.stdout) as { notes: string[]; findings: { check: string; subject: string }[]; summary: { skip: number } };
  const want = strip(live) as { notes: string[] };
  // One finding more than the node gave (as test/snapshot/live-device.test.ts): the walk up to slurmd looks at pid 1
  // too now, and this snapshot's gdrgate never read /proc/1/comm, so the replay cannot tell whether pid 1 is slurmd.
  const isUntold = (f: { check: string; subject: string }): boolean => f.check === 'memlock-limit' && f.subject === 'slurmd';
  t.same(got.findings.filter(isUntold).map((f) => (f as unknown as { message: string }).message), ["memlock not readable: slurmd's process could not be looked for: /proc/1/comm: not recorded by this snapshot (taken by gdrgate 0.1.0): /proc/1"]);
  const rest = { ...got, findings: got.findings.filter((f) => !isUntold(f)), summary: { ...got.summary, skip: got.summary.skip - 1 } };
  t.same({ ...rest, notes: [] }, { ...want, notes: [] });
  t.same(want.notes, [], 'the live run had no notes');
  t.ok(got.notes.length > 0, 'the replay names what the snapshot did not record');
  const unrecorded = [
    ['/proc/sys/kernel/random/boot_id', '/proc/sys/kernel/random'],
    ['/sys/devices/pci0000:00/0000:00:06.0/aer_dev_correctable', '/sys/devices/pci0000:00/0000:00:06.0/aer_dev_correctable'],
    ['/sys/devices/pci0000:00/0000:00:06.0/aer_dev_nonfatal', '/sys/devices/pci0000:00/0000:00:06.0/aer_dev_nonfatal'],
    ['/sys/devices/pci0000:00/0000:00:06.0/aer_dev_fatal', '/sys/devices/pci0000:00/0000:00:06.0/aer_dev_fatal'],
    ['/proc/driver/nvidia/params', '/proc/driver/nvidia/params'],
    ['/sys/module/pcie_aspm/parameters/policy', '/sys/module/pcie_aspm/parameters'],
    ['/proc/1/comm', '/proc/1'],
  ].map(([p, at]) => `${p}: not recorded by this snapshot (taken by gdrgate 0.1.0): ${at}`);
  t.equal(got.notes.length, unrecorded.length, 'one note per path not recorded');
  for (const [i, n] of got.notes.entries()) t.equal(n, unrecorded[i], n);
  t.ok(got.notes.some((n) => n.startsWith('/sys/module/pcie_aspm/parameters/policy: ')), 'the ASPM policy among them');
});

t.test('the live snapshot: manifest of a live root, ticket commands, /dev listed, and equivalent to the bundled capture', async (t) => {
  const r = cli(['snapshot', '--root', SNAP, '--out', '-']);
  t.equal(r.code, 0);
  const { gunzipSync } = await import('node:zlib');
  const { readTar } = await import('../../src/snapshot/tar.js');
  const entries = readTar(gunzipSync(readFileSync(SNAP)));
  const m = JSON.parse(Buffer.from(entries.find((e) => e.path === 'manifest.json')!.data!).toString()) as {
    live: boolean; host: string; commands: { name: string; status: string }[]; dev: { path: string; rdev: number[] | null }[];
  };
  t.same([m.live, m.host], [true, 'vm']);
  t.same(m.commands.map((c) => `${c.name} ${c.status}`), ['nvidia-smi_topo_m exited', 'nvidia-smi_q exited', 'ibv_devinfo_v missing', 'lspci_tv missing', 'lspci_vvv missing']);
  t.same(m.dev.find((d) => d.path === '/dev/nvidia0')?.rdev, [195, 0], 'the GPU node: char 195,0');
  t.ok(entries.some((e) => e.path === 'capture/cmd/nvidia-smi_topo_m.txt'), 'nvidia-smi topo -m saved');
  t.ok(entries.some((e) => e.path === 'proc/self' && e.kind === 'link'), '/proc/self stays a link');
  // This snapshot predates the ASPM policy file the bundled capture now carries (examples/h200-vm/PROVENANCE.md).
  // Its gdrgate never asked for that file, so the snapshot cannot tell whether the node had it: the policy is
  // unknown on that side ("not readable"), a minor unknown-side entry, not a policy difference ("ASPM policy none"
  // would claim the node had no policy file, which nothing recorded).
  const c = cli(['compare', SNAP, H200, '--json']);
  const diffs = (JSON.parse(c.stdout) as { differences: { area: string; subject: string; a: string; b: string; impact: string }[] }).differences;
  t.same(diffs.map((d) => `${d.area} ${d.subject}: ${d.a} | ${d.b}`), ['payload node: not readable | no pci=pcie_bus_*, ASPM policy default'], 'the live node still matches its bundled capture but for the file it did not keep');
  t.same(diffs[0], {
    impact: 'minor', area: 'payload', subject: 'node', a: 'not readable', b: 'no pci=pcie_bus_*, ASPM policy default',
    response: 'One side could not tell: not root, a file absent, or a snapshot from an older gdrgate that did not record it (its notes say "not recorded"). Take the snapshot again, as root and with this gdrgate, before concluding.',
  }, 'a side that could not tell (unknown-side), not a major payload-policy-changed');
});

t.test('the live snapshot of 2026-12-01 (kernel v973) against the bundled capture (v657): only the kernel build differs', async (t) => {
  const c = cli(['compare', `${REPO}/test/fixtures/device-h200-live/live-2026-12-01b.tar.gz`, H200, '--json']);
  const diffs = (JSON.parse(c.stdout) as { differences: { area: string; subject: string; a: string; b: string }[] }).differences;
  t.same(diffs.map((d) => `${d.area} ${d.subject}: ${d.a} | ${d.b}`), ['kernel node: 6.18.44-fc-v973-gpu | 6.18.44-fc-v657-gpu']);
});
