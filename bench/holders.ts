// The Epilog's look for processes holding a probed GPU or adapter open (src/epilog/holders.ts), timed over a generated
// /proc of 2,000 processes: 1,900 root's or a system account's (systemd units, kernel-side helpers, the GPU daemons)
// with 500 fds each, 100 users' job processes with 20 fds each, none on the probed devices. Prints, for each round, the
// verdict under the Epilog's own bounds and under no time bound, the wall time, and how many fd links and files were
// read. Figures to compare, never asserted. Run: `node .bench/bench/holders.js [ROUNDS]` after `npm run bench`
// compiled it (or `tsc -p bench/tsconfig.json`).
import { mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { FsHost } from '../src/host/fs-host.js';
import type { Host } from '../src/host/host.js';
import { devicesHeld } from '../src/epilog/holders.js';
import { SCAN_LIMITS } from '../src/epilog/holders-limits.js';
import { heldReason } from '../src/epilog/holders-rule.js';
import type { ProbeSpec } from '../src/probes/types.js';
import { cudaFds, type GenProcess, writeProcesses } from '../test/gen/proc-pids.js';

const ROUNDS = Number(process.argv[2] ?? 3);
const tmp = process.env.TMPDIR ?? (process.platform === 'linux' ? '/dev/shm' : '/tmp');

function procs(): GenProcess[] {
  const out: GenProcess[] = [];
  const services = ['nvidia-persistenced', 'nvidia-dcgm', 'nvidia-fabricmanager', 'containerd', 'munge', 'slurmd', 'sshd', 'rsyslog'];
  for (let i = 0; i < 1_900; i++) {
    const unit = services[i % services.length]!;
    const fds = Array.from({ length: 500 }, (_, fd) => (fd < 8 ? `/dev/nvidia${fd}` : fd % 3 ? `socket:[${100_000 + i * 500 + fd}]` : `anon_inode:[eventfd]`));
    out.push({ pid: 1_000 + i, ppid: 1, comm: unit.slice(0, 15), uid: i % 5 ? 0 : 998, cgroup: `/system.slice/${unit}.service`, fds });
  }
  for (let i = 0; i < 100; i++) {
    const fds = [...cudaFds(), ...Array.from({ length: 13 }, (_, k) => `pipe:[${900_000 + i * 20 + k}]`)];
    out.push({ pid: 50_000 + i, ppid: 40_000, comm: 'python3', uid: 1_000 + (i % 7), cgroup: `/system.slice/slurmstepd.scope/job_${700 + (i >> 3)}/step_0/user/task_${i & 7}`, fds });
  }
  return out;
}

// The probes of mlx5_0 from the memory of GPU 0000:41:00.0: with no /proc/driver/nvidia under the tree, any /dev/nvidiaN counts.
const spec = { kind: 'ib_write_bw', probe: 'ib-write-gpu', tool: '/usr/bin/ib_write_bw', nic: 'mlx5_0', gpu: '0000:41:00.0', gpuIndex: 0, gpus: ['0000:41:00.0'], numactl: null, serverArgs: [], args: [], timeoutMs: 1 } as unknown as ProbeSpec;

/** Counts what the look reads through the Host (fd directories are listed beside it, in src/host/dirs.ts). */
function counting(inner: Host): { host: Host; n: Record<string, number> } {
  const n: Record<string, number> = { readLink: 0, readText: 0 };
  const host = new Proxy(inner, {
    get(target, prop, recv) {
      const v = Reflect.get(target, prop, recv) as unknown;
      if (typeof v !== 'function') return v;
      return (...a: unknown[]) => {
        if (typeof prop === 'string' && prop in n) n[prop]!++;
        return (v as (...x: unknown[]) => unknown).apply(target, a);
      };
    },
  });
  return { host, n };
}

const root = mkdtempSync(path.join(tmp, 'gdrgate-bench-holders-'));
try {
  const t0 = performance.now();
  const ps = procs();
  writeProcesses(root, ps);
  const fdsTotal = ps.reduce((a, p) => a + p.fds.length, 0);
  console.log(`generated ${ps.length} processes, ${fdsTotal} fds in ${((performance.now() - t0) / 1000).toFixed(1)} s under ${root}`);
  for (let r = 1; r <= ROUNDS; r++)
    for (const [label, limits] of [['bounds', SCAN_LIMITS], ['no time bound', { ...SCAN_LIMITS, ms: 1e9 }]] as const) {
      const { host, n } = counting(new FsHost(root));
      const s = performance.now();
      const v = await devicesHeld(host, [[spec]], 999_999, { limits });
      const ms = performance.now() - s;
      console.log(`round ${r} ${label}: ${ms.toFixed(0)} ms, ${n.readLink} fd links and ${n.readText} files read: ${v.probe ? 'probe' : heldReason(v, false)}`);
    }
} finally {
  rmSync(root, { recursive: true, force: true });
}
