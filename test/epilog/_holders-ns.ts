// Run by holders-real.test.ts (not a test) as pid 1 of a PID namespace of its own with its own /proc (unshare
// --pid --mount-proc): starts a process that holds `argv[2]` open, scans the real kernel's /proc for it, and prints
// what the scan and the rule said as one JSON line.
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
const scan = await scanHolders(host, (link) => (link === file ? 'the test file' : null));
const verdicts = [holdersVerdict(scan, { self: process.pid, uidMin: 0 }), holdersVerdict(scan, { self: 999_999_999, uidMin: 0 })];
child.kill('SIGKILL');
process.stdout.write(`${JSON.stringify({ self: process.pid, child: child.pid, scan, verdicts })}\n`);
