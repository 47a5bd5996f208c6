// Snapshot internals in-process: unreadable files replay as unreadable, the allowlist, ticket commands and /dev listing on a live root.
import t from 'tap';
import { FsHost } from '../../src/host/fs-host.js';
import type { Exec, ExecOptions, ExecResult } from '../../src/host/exec.js';
import type { Host, ReadResult, StatInfo } from '../../src/host/host.js';
import { buildInventory } from '../../src/inventory/build.js';
import { buildSnapshot } from '../../src/snapshot/build.js';
import { listDev, runCommands } from '../../src/snapshot/commands.js';
import { allowed } from '../../src/snapshot/extras.js';
import { parseSnapshot } from '../../src/snapshot/open.js';
import { H200 } from '../helpers/paths.js';

/** FsHost over the capture, except the paths given answer EACCES (a non-root read of a root-only file). */
class Denying extends FsHost {
  constructor(root: string, private readonly deny: readonly string[]) {
    super(root);
  }
  override async readBytes(p: string, max?: number): Promise<ReadResult<Uint8Array>> {
    return this.deny.includes(p) ? { ok: false, missing: false, reason: 'EACCES: permission denied' } : super.readBytes(p, max);
  }
  // FsHost.readText reads on its own (no copy through readBytes): denied the same.
  override async readText(p: string): Promise<ReadResult<string>> {
    return this.deny.includes(p) ? { ok: false, missing: false, reason: 'EACCES: permission denied' } : super.readText(p);
  }
}

t.test('a file unreadable at capture is stored unreadable: the replay notes it exactly as the original run', async (t) => {
  const proc = '/proc/self/limits';
  const src = new Denying(H200, [proc]);
  const snap = await buildSnapshot(src, false, { commands: false, now: new Date(0) });
  t.same(snap.manifest.unreadable, [{ path: proc, reason: 'EACCES: permission denied' }]);
  const replay = parseSnapshot('mem.tar.gz', snap.gz);
  const [a, b] = await Promise.all([buildInventory(src), buildInventory(replay)]);
  t.same(b.memlock, a.memlock, 'memlock: not readable, same reason');
  t.same(b.notes, a.notes);
  t.same(await replay.readText(proc), { ok: false, missing: false, reason: 'EACCES: permission denied' });
});

t.test('the allowlist: what the checks read, nothing that can hold a secret', async (t) => {
  const yes = ['/sys/bus/pci/devices/0000:18:00.0', '/sys/devices/pci0000:00/0000:00:06.0/config', '/sys/class/infiniband/mlx5_0', '/sys/module/nvidia/version',
    '/sys/kernel/iommu_groups/12/type', '/sys/kernel/mm/memory_peers/nv_mem/version', '/proc/self/limits', '/proc/4242/status', '/proc/4242/comm',
    '/proc/cmdline', '/proc/driver/nvidia/version', '/proc/sys/kernel/osrelease', '/run/slurmd.pid', '/etc/hostname'];
  const no = ['/proc/self/environ', '/proc/4242/cmdline', '/proc/4242/environ', '/proc/self/maps', '/etc/shadow', '/etc/slurm/slurm.conf',
    '/var/spool/slurmd/job00042/slurm_script', '/home/alice/.ssh/id_rsa', '/sys/firmware/efi/efivars/x', '/sys/kernel/debug/x', '/root/.bash_history'];
  for (const p of yes) t.ok(allowed(p), p);
  for (const p of no) t.notOk(allowed(p), p);
});

/** A live-looking Host: only nvidia-smi installed, /dev with GPU and uverbs nodes. */
function liveHost(): Host {
  const st = (kind: StatInfo['kind'], mode: number, rdev = 0): ReadResult<StatInfo> => ({ ok: true, value: { kind, mode, uid: 0, size: 0, rdev } });
  const none: ReadResult<never> = { ok: false, missing: true, reason: 'ENOENT' };
  const nodes: Record<string, ReadResult<StatInfo>> = {
    '/usr/bin/nvidia-smi': st('file', 0o755),
    '/dev/nvidia0': st('char', 0o666, (195 << 8) | 0),
    '/dev/nvidiactl': st('char', 0o666, (195 << 8) | 255),
    '/dev/nvidia-uvm': st('char', 0o666, (509 << 8) | 0),
    '/dev/nvidia-caps': st('dir', 0o755),
    '/dev/nvidia-caps/nvidia-cap1': st('char', 0o400, (234 << 8) | 1),
    '/dev/infiniband/uverbs0': st('char', 0o666, (231 << 8) | 192),
  };
  const dirs: Record<string, string[]> = { '/dev': ['null', 'nvidia-caps', 'nvidia-uvm', 'nvidia0', 'nvidiactl', 'sda'], '/dev/nvidia-caps': ['nvidia-cap1'], '/dev/infiniband': ['uverbs0'] };
  return {
    root: '/',
    list: async (p) => (dirs[p] ? { ok: true, value: dirs[p]! } : none),
    readText: async () => none,
    readBytes: async () => none,
    readLink: async () => none,
    realPath: async () => none,
    lstat: async (p) => nodes[p] ?? none,
    stat: async (p) => nodes[p] ?? none,
    access: async () => ({ access: 'unknown' }),
    untrusted: () => null,
  };
}

class FakeExec implements Exec {
  readonly calls: { file: string; args: readonly string[]; opts: ExecOptions }[] = [];
  async run(file: string, args: readonly string[], opts: ExecOptions): Promise<ExecResult> {
    this.calls.push({ file, args, opts });
    if (args[0] === '-q') return { exitCode: null, stdout: '', stderr: '', timedOut: true, error: `timed out after ${opts.timeoutMs} ms`, durationMs: opts.timeoutMs };
    return { exitCode: 0, stdout: '\tGPU0\tNIC0\nGPU0\t X \tPIX\n', stderr: '', timedOut: false, error: null, durationMs: 31 };
  }
}

t.test('ticket commands: absolute paths, 10 s timeout each, no inherited environment; a missing tool and a timeout are recorded', async (t) => {
  const exec = new FakeExec();
  const outs = await runCommands(liveHost(), exec);
  t.same(exec.calls.map((c) => [c.file, ...c.args]), [['/usr/bin/nvidia-smi', 'topo', '-m'], ['/usr/bin/nvidia-smi', '-q']]);
  t.ok(exec.calls.every((c) => c.opts.timeoutMs === 10_000 && Object.keys(c.opts.env ?? {}).sort().join() === 'LC_ALL,PATH'));
  const rec = Object.fromEntries(outs.map((o) => [o.record.name, o.record]));
  t.same(rec['nvidia-smi_topo_m'], { name: 'nvidia-smi_topo_m', argv: ['/usr/bin/nvidia-smi', 'topo', '-m'], status: 'exited', exitCode: 0, error: null, durationMs: 31, stdoutBytes: 24, stderrBytes: 0 });
  t.equal(rec['nvidia-smi_topo_m']?.error, null);
  t.same(rec['nvidia-smi_topo_m']?.argv, ['/usr/bin/nvidia-smi', 'topo', '-m']);
  t.same(rec['nvidia-smi_q'], { name: 'nvidia-smi_q', argv: ['/usr/bin/nvidia-smi', '-q'], status: 'timeout', exitCode: null, error: 'timed out after 10000 ms', durationMs: 10000, stdoutBytes: 0, stderrBytes: 0 });
  t.equal(rec['nvidia-smi_q']?.exitCode, null, 'no exit code after a timeout');
  for (const [m, tool] of [['ibv_devinfo_v', 'ibv_devinfo'], ['lspci_tv', 'lspci'], ['lspci_vvv', 'lspci']] as const) {
    t.same(rec[m], { name: m, argv: null, status: 'missing', exitCode: null, error: `${tool} not found in /usr/bin /usr/sbin /bin /sbin /usr/local/nvidia/bin`, durationMs: 0, stdoutBytes: 0, stderrBytes: 0 }, m);
    t.equal(rec[m]?.argv, null, `${m}: no argv`);
  }
  const files = Object.fromEntries(outs.flatMap((o) => o.files));
  t.equal(files['nvidia-smi_topo_m.exit'], '0\n');
  t.equal(files['nvidia-smi_q.exit'], 'timeout\n');
  t.equal(files['lspci_tv.exit'], 'missing\n');
});

t.test('/dev is listed with modes and device numbers, never opened', async (t) => {
  const dev = await listDev(liveHost());
  t.same(dev, [
    { path: '/dev/nvidia-caps', kind: 'dir', mode: '0755', rdev: null },
    { path: '/dev/nvidia-caps/nvidia-cap1', kind: 'char', mode: '0400', rdev: [234, 1] },
    { path: '/dev/nvidia-uvm', kind: 'char', mode: '0666', rdev: [509, 0] },
    { path: '/dev/nvidia0', kind: 'char', mode: '0666', rdev: [195, 0] },
    { path: '/dev/nvidiactl', kind: 'char', mode: '0666', rdev: [195, 255] },
    { path: '/dev/infiniband/uverbs0', kind: 'char', mode: '0666', rdev: [231, 192] },
  ]);
});
