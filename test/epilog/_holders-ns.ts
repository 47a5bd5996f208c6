// Run by holders-real.test.ts (not a test) as pid 1 of a PID namespace of its own with its own /proc (unshare
// --pid --mount-proc): starts a process that holds `argv[2]` open, scans the real kernel's /proc for it, and prints
// what the scans and the rule said as one JSON line.
import { spawn } from 'node:child_process';
import { FsHost } from '../../src/host/fs-host.js';
import { scanHolders } from '../../src/epilog/holders.js';
import { holdersVerdict } from '../../src/epilog/holders-rule.js';

const file = process.argv[2]!;
// The shell opens the file on fd 7 (no close-on-exec) and becomes sleep, which holds it.
const child = spawn('/bin/sh', ['-c', 'exec 7<"$0"; exec sleep 60', file], { stdio: 'ignore' });
const host = new FsHost('/');
const comm = async (): Promise<string> => ((r) => (r.ok ? r.value : ''))(await host.readText(`/proc/${child.pid}/comm`));
for (let i = 0; i < 500 && (await comm()) !== 'sleep\n'; i++) await new Promise((r) => setTimeout(r, 10));
const match = (link: string): string | null => (link === file ? 'the test file' : null);
// As this process (its child never counts, so its fds are not read), and as another Epilog's would see it.
const mine = { self: process.pid, uidMin: 0 };
const other = { self: 999_999_999, uidMin: 0 };
const [own, scan] = [await scanHolders(host, match, mine), await scanHolders(host, match, other)];
const verdicts = [holdersVerdict(own, mine), holdersVerdict(scan, other)];
child.kill('SIGKILL');
process.stdout.write(`${JSON.stringify({ self: process.pid, child: child.pid, own, scan, verdicts })}\n`);
