// The live H200 of 2026-12-01 (test/fixtures/device-h200-live/SOURCES of that run in README.md there): the report
// of `gdrgate check --json` on the node equals the replay of the snapshot taken in the same session, for every
// check, the new PCIe and placement checks included. Notes may differ: the replay refuses the capture's absolute
// /var/run -> /run link (a replay never reads outside its root), which only the slurmd pid file lookup meets.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { reworded } from '../helpers/reworded.js';
import { cli } from '../helpers/cli.js';
import { fixture } from '../helpers/paths.js';

const PAYLOAD_UNREAD = 'Payload sizes or ASPM could not be read (config space beyond the 64-byte header needs root, no PCI Express capability, or a kernel file unreadable).';

type Report = { findings: { check: string; subject: string; tells?: string; response?: string }[]; summary: unknown; outcome?: unknown; exitCode?: unknown };

t.test('live check on the H200 equals the replay of its snapshot (findings, summary, exit code)', async (t) => {
  const live = JSON.parse(reworded(readFileSync(fixture('device-h200-live/live-check-2026-12-01.json'), 'utf8'))) as Report;
  // The checks the recording ran (a check added since is compared on the next recording).
  const ids = [...new Set(live.findings.map((f) => f.check))].join(',');
  const r = cli(['check', '--root', fixture('device-h200-live/live-2026-12-01.tar.gz'), '--only', ids, '--json']);
  t.equal(r.code, 0, r.stderr);
  const replay = JSON.parse(r.stdout) as Report;
  // What the node said, not the catalog's wording of a code (`tells`, `response`), which changes with gdrgate.
  const facts = (fs: Report['findings']): unknown[] => fs.map(({ tells: _t, response: _r, ...f }) => f);
  // One finding more than the node gave: the walk up to slurmd now looks at pid 1 too (slurmd as a container's init),
  // and this snapshot's gdrgate never read /proc/1/comm (its walk ended at 459, whose parent is 1), so the replay
  // cannot tell whether pid 1 is slurmd: a skip that names the file, where the node, which had it, said nothing.
  const untold = { check: 'memlock-limit', code: 'memlock-unknown', status: 'skip', subject: 'slurmd', message: "memlock not readable: slurmd's process could not be looked for: /proc/1/comm: not recorded by this snapshot (taken by gdrgate 0.1.0): /proc/1", layer: 'scheduler' };
  const replayed = facts(replay.findings);
  const isUntold = (f: unknown): boolean => (f as { check: string; subject: string }).check === 'memlock-limit' && (f as { subject: string }).subject === 'slurmd';
  t.same(replayed.filter(isUntold), [untold]);
  t.same(replayed.filter((f) => !isUntold(f)), facts(live.findings));
  t.same(replay.summary, { ...(live.summary as Record<string, number>), skip: (live.summary as Record<string, number>).skip! + 1 });
  t.same(replay.exitCode, live.exitCode);
  t.ok(live.findings.some((f) => f.check === 'gpu-bar1'), 'the recording has the new checks');
});

t.test('pcie-payload on the snapshot of the live H200: the GPU as its own lspci -vvv shows it (raw-2026-12-01/lspci-vvv.txt)', async (t) => {
  const r = cli(['check', '--root', fixture('device-h200-live/live-2026-12-01.tar.gz'), '--only', 'pcie-payload', '--json']);
  t.equal(r.code, 0, r.stderr);
  const fs = (JSON.parse(r.stdout) as { findings: { status: string; subject: string; actual?: string }[] }).findings;
  // lspci: DevCtl MaxPayload 256 bytes, MaxReadReq 4096 bytes; LnkCtl ASPM Disabled; on the VM's root bus, no port above.
  const [read, done] = ['Payload sizes and ASPM are as on the reference node (or, without one, as read), and no device\'s MPS exceeds the port above it.', 'None.'];
  t.same(fs.find((f) => f.subject === '0000:00:06.0'), { check: 'pcie-payload', code: 'payload-ok', status: 'pass', subject: '0000:00:06.0', message: 'GPU: MaxPayload 256 bytes, MaxReadReq 4096 bytes, ASPM Disabled (supports 256)', expected: 'no reference', actual: 'MaxPayload 256 bytes, MaxReadReq 4096 bytes, ASPM Disabled', layer: 'server', tells: read, response: done });
  // The node-wide policy: this snapshot's gdrgate listed /sys/module but never read the ASPM policy file (the node
  // has one: raw-2026-12-01/pcie-aspm.txt), so the snapshot cannot tell it and the check skips, naming why; it
  // used to judge "ASPM policy none", which nothing recorded.
  t.same(fs.find((f) => f.subject === 'node'), { check: 'pcie-payload', code: 'payload-unknown', status: 'skip', subject: 'node', message: 'ASPM policy unknown (/sys/module/pcie_aspm/parameters/policy: not recorded by this snapshot (taken by gdrgate 0.1.0): /sys/module/pcie_aspm/parameters)', layer: 'scheduler', tells: PAYLOAD_UNREAD, response: 'Run the gate as root (Slurm Prolog does); the message names what was missing.' }, 'the policy file was not recorded');
});
