// The PCIe-state checks (gpu-bar1, pcie-relaxed-ordering, pcie-throttle, pcie-aer, pcie-payload) on a real capture taken as a normal user
// (hwloc's 32em64t tree: 64-byte configs, a ConnectX-3, no thermal class, no NVIDIA GPU): each says it cannot tell.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CHECKS } from '../../src/checks/index.js';
import { FsHost } from '../../src/host/fs-host.js';
import { buildInventory } from '../../src/inventory/build.js';
import { fixture } from '../helpers/paths.js';
import { scratchDir } from '../helpers/scratch.js';

const TMP = existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir();
const dir = scratchDir('gdrgate-pcie-state-', TMP);
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
execFileSync('/bin/tar', ['xjf', fixture('sysfs-real/32em64t-2n8c+dax+nvme+mic+dimms.tar.bz2'), '-C', dir], { timeout: 120_000 });
const inv = await buildInventory(new FsHost(path.join(dir, '32em64t-2n8c+1mic')));
const run = (id: string) => CHECKS.find((c) => c.id === id)!.run({ inv, baseline: null }).map((f) => `${f.status} ${f.code} ${f.subject}`);

t.same(run('pcie-relaxed-ordering'), ['skip ro-unreadable 0000:82:00.0'], 'mlx4_0 behind a 64-byte config: Device Control unknown');
t.same(run('pcie-throttle'), ['skip throttle-unknown node'], 'no /sys/class/thermal in the capture: unknown');
t.same(run('gpu-bar1'), ['skip bar1-na node'], 'no NVIDIA GPU in the capture');

// pcie-aer: every path device (the ConnectX-3 and the bridges above it) unknown, never pass: 64-byte configs hide
// both Device Control (so a zero counter proves nothing) and the AER capability.
const aer = run('pcie-aer');
t.ok(aer.length > 0 && aer.every((l) => l.startsWith('skip aer-unknown ')), `pcie-aer: ${aer.join('; ')}`);
t.ok(aer.some((l) => l.endsWith(' 0000:82:00.0')), 'the adapter is among them');
// pcie-payload: mlx4_0 and every bridge above it read as a normal user: MPS, MRRS and ASPM unknown, never pass.
const payload = CHECKS.find((c) => c.id === 'pcie-payload')!.run({ inv, baseline: null });
const devices = payload.filter((f) => f.subject !== 'node');
t.ok(devices.length >= 1 && devices.some((f) => f.subject === '0000:82:00.0'), `the adapter and its bridges: ${devices.map((f) => f.subject).join(', ')}`);
t.same(devices.map((f) => `${f.status} ${f.code}`), devices.map(() => 'skip payload-unknown'), 'every path device: unknown (64-byte config)');
t.ok(devices.every((f) => /64-byte config space/.test(f.message)), 'the reason names the 64-byte read');
t.same(payload.find((f) => f.subject === 'node'), { check: 'pcie-payload', code: 'payload-unknown', status: 'skip', subject: 'node', message: 'kernel command line unknown (/proc/cmdline absent)' }, 'the capture has no /proc/cmdline: the bus policy is unknown');
