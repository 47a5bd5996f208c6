// A snapshot vouches for an absence only where its recording found one (manifest `missing`): a path the gdrgate
// that took it never asked for is unknown ("not recorded"), never absent. The case: a current snapshot of the
// bundled H200 capture made "older" by dropping the ASPM policy file from its tar, as a gdrgate that predates that
// read would have left it; and the opposite, the same file dropped and recorded missing, stays absent.
import t, { type Test } from 'tap';
import { promises as fsp, readFileSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { ASPM_POLICY } from '../../src/inventory/payload.js';
import { openSnapshot } from '../../src/snapshot/open.js';
import { readTar, writeTar, type TarEntry } from '../../src/snapshot/tar.js';
import { cli } from '../helpers/cli.js';
import { H200 } from '../helpers/paths.js';
import { answers, every } from './_answers.js';

interface Manifest {
  missing: string[];
  version: string;
}

/** A current snapshot of the bundled H200 capture, as tar entries. */
function current(t: Test): { dir: string; entries: TarEntry[] } {
  const dir = t.testdir({});
  const file = path.join(dir, 'h200.tar.gz');
  const r = cli(['snapshot', '--root', H200, '--out', file]);
  t.equal(r.code, 0, r.stderr);
  return { dir, entries: readTar(gunzipSync(readFileSync(file))) };
}

/** The snapshot without the entries `drop` picks, its manifest's `missing` list edited by `edit`. */
async function variant(dir: string, name: string, entries: TarEntry[], drop: (p: string) => boolean, edit: (missing: string[]) => string[]): Promise<string> {
  const out = entries
    .filter((e) => !drop(`/${e.path}`))
    .map((e) => {
      if (e.path !== 'manifest.json') return e;
      const m = JSON.parse(Buffer.from(e.data!).toString('utf8')) as Manifest;
      m.missing = edit(m.missing).sort();
      return { ...e, data: Buffer.from(`${JSON.stringify(m, null, 2)}\n`) };
    });
  const file = path.join(dir, name);
  await fsp.writeFile(file, gzipSync(writeTar(out)));
  return file;
}

interface Finding {
  check: string;
  code: string;
  status: string;
  subject: string;
  message: string;
  actual?: string;
}

const ENOENT = 'ENOENT: no such file or directory, snapshot ';
const PAYLOAD_UNREAD = 'Payload sizes or ASPM could not be read (config space beyond the 64-byte header needs root, no PCI Express capability, or a kernel file unreadable).';
/** The node-wide pcie-payload finding of a kernel without the policy file. */
const NO_POLICY = {
  check: 'pcie-payload', code: 'payload-ok', status: 'pass', subject: 'node',
  message: 'no pci=pcie_bus_*, ASPM policy none (no pcie_aspm policy file: a kernel without ASPM support, or a capture without it); no reference: recorded only',
  expected: 'no reference', actual: 'no pci=pcie_bus_*, ASPM policy none', layer: 'server',
  tells: "Payload sizes and ASPM are as on the reference node (or, without one, as read), and no device's MPS exceeds the port above it.", response: 'None.',
};

function nodeFinding(t: Test, root: string): Finding | undefined {
  const r = cli(['check', '--root', root, '--only', 'pcie-payload', '--json']);
  t.not(r.stdout, '', r.stderr);
  return (JSON.parse(r.stdout) as { findings: Finding[] }).findings.find((f) => f.subject === 'node');
}

t.test('the policy file in a current snapshot: read, and the node-wide payload finding judges it', async (t) => {
  const { entries } = current(t);
  t.ok(entries.some((e) => `/${e.path}` === ASPM_POLICY), 'the current recording keeps the policy file');
});

t.test('a file the snapshot never recorded (an older gdrgate did not read it) is unknown, and the check skips', async (t) => {
  const { dir, entries } = current(t);
  const older = await variant(dir, 'older.tar.gz', entries, (p) => p === ASPM_POLICY, (m) => m.filter((p) => p !== ASPM_POLICY));
  const h = await openSnapshot(older);
  const version = (JSON.parse(Buffer.from(entries.find((e) => e.path === 'manifest.json')!.data!).toString('utf8')) as Manifest).version;
  const unrecorded = `not recorded by this snapshot (taken by gdrgate ${version}): ${ASPM_POLICY}`;
  const unknown = { ok: false, missing: false, reason: unrecorded };
  // Every answer about the path: none of them may say "absent" (nor make up a value).
  t.strictSame(await answers(h, ASPM_POLICY), every(unknown), 'every read of it');
  t.same(await h.readText(`${ASPM_POLICY}/below`), unknown, 'a path below it');
  t.same(await h.access(ASPM_POLICY), { access: 'unknown', why: 'a snapshot cannot answer access(2)' }, 'access(2): never answered by a snapshot');
  // What the recording did find absent stays absent.
  const m = JSON.parse(Buffer.from(entries.find((e) => e.path === 'manifest.json')!.data!).toString('utf8')) as Manifest;
  t.ok(m.missing.length > 0, 'the H200 recording found some paths absent');
  // The component the archive lacks, where it is a directory above the path.
  const absentAt: Record<string, string> = {
    '/etc/slurm/gres.conf': '/etc/slurm', '/etc/slurm/slurm.conf': '/etc/slurm', '/run/slurm/conf/slurm.conf': '/run', '/proc/413/comm': '/proc/413', '/proc/413/status': '/proc/413', '/proc/sys/kernel/random/boot_id': '/proc/sys/kernel/random',
    '/run/slurmd.pid': '/run', '/sys/devices/system/cpu/online': '/sys/devices/system/cpu', '/sys/kernel/iommu_groups': '/sys/kernel',
    '/sys/kernel/mm/memory_peers/nv_mem/version': '/sys/kernel', '/sys/kernel/mm/memory_peers/nv_mem_nc/version': '/sys/kernel',
    '/sys/module/nvidia_peermem/version': '/sys/module/nvidia_peermem', '/var/run/slurmd.pid': '/var',
  };
  for (const p of m.missing) t.same(await h.stat(p), { ok: false, missing: true, reason: `${ENOENT}${absentAt[p] ?? p}` }, `${p}: recorded missing`);

  const f = nodeFinding(t, older);
  t.same(f, { check: 'pcie-payload', code: 'payload-unknown', status: 'skip', subject: 'node', message: `ASPM policy unknown (${unrecorded})`, layer: 'scheduler', tells: PAYLOAD_UNREAD, response: 'Run the gate as root (Slurm Prolog does); the message names what was missing.' }, 'skips, naming why: not "ASPM policy none"');
});

t.test('a file recorded missing (the path, or a directory above it) stays absent', async (t) => {
  const { dir, entries } = current(t);
  const gone = await variant(dir, 'gone.tar.gz', entries, (p) => p === ASPM_POLICY, (m) => [...m, ASPM_POLICY]);
  const h = await openSnapshot(gone);
  t.same(await h.readText(ASPM_POLICY), { ok: false, missing: true, reason: `${ENOENT}${ASPM_POLICY}` });
  t.same(await h.lstat(ASPM_POLICY), { ok: false, missing: true, reason: `${ENOENT}${ASPM_POLICY}` });
  t.same(nodeFinding(t, gone), NO_POLICY, 'judged as a kernel without the policy file');

  const top = '/sys/module/pcie_aspm';
  const noDir = await variant(dir, 'nodir.tar.gz', entries, (p) => p === top || p.startsWith(`${top}/`), (m) => [...m, top]);
  const d = await openSnapshot(noDir);
  for (const p of [top, `${top}/parameters`, ASPM_POLICY]) t.same(await d.stat(p), { ok: false, missing: true, reason: `${ENOENT}${top}` }, `${p}: under a directory recorded missing`);
  t.same(nodeFinding(t, noDir), NO_POLICY);
});
