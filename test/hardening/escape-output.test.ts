// Names from the node (host name, kernel release, file names, Prometheus labels) carrying terminal escape sequences
// reach every text renderer (check, topo, compare, fleet report, the prolog's lines) escaped, never raw.
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { escapeControls, escapeText } from '../../src/report/escape.js';
import { parsePromText } from '../../src/fleet/prom-text.js';
import { buildTree } from '../gen/sysfs-tree.js';
import { twoSocket } from '../gen/topologies/two-socket-2gpu-2nic.js';
import { nodeTextfile } from '../fleet/_prom-fleet.js';
import { cli } from '../helpers/cli.js';
import { literal } from '../helpers/exactly.js';
import { CLI } from '../helpers/paths.js';
import { scratchDir } from '../helpers/scratch.js';

const HOST = 'gpu\x1b]0;owned\x07\x1b[2J001';
const KERNEL = '6.8.0\x1b[31m-evil\u009b2J';
const NIC = (i: number): string => `mlx5_\x1b[1K${i}\u202e`;
/** Anything a terminal acts on, but a report's own newlines. */
const RAW = /[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

const dir = scratchDir('gdrgate-escape-');
const evil = path.join(dir, 'evil');
const clean = path.join(dir, 'clean');
const base = twoSocket(['0-47,96-143', '48-95,144-191']);
await buildTree(clean, base);
await buildTree(evil, {
  ...base,
  hostname: HOST,
  kernel: KERNEL,
  hostBridges: base.hostBridges.map((hb, i) => JSON.parse(JSON.stringify(hb).replace(`"mlx5_${i}"`, JSON.stringify(NIC(i))))),
});

t.test('the escape itself: every control a terminal acts on, as \\uXXXX; layout kept only by escapeText', async (t) => {
  t.equal(escapeControls('a\x1b[2Jb\u009bc\x7fd\u202ee\r\n\tf'), 'a\\u001b[2Jb\\u009bc\\u007fd\\u202ee\\u000d\\u000a\\u0009f');
  t.equal(escapeText('a\x1b[2Jb\r\n\tf'), 'a\\u001b[2Jb\\u000d\n\tf');
  t.equal(escapeControls('gpu001 — ok ü'), 'gpu001 — ok ü', 'printable text, Unicode included, unchanged');
  t.same(JSON.parse(`"${escapeControls('\x1b\u009b\u2028')}"`), '\x1b\u009b\u2028', 'the escape is JSON');
});

t.test('check: host name, kernel release and adapter names escaped', async (t) => {
  const r = cli(['check', '--root', evil, '--verbose']);
  t.equal(r.code, 0);
  t.notMatch(r.stdout, RAW);
  const lines = r.stdout.split('\n');
  t.equal(lines[0], `gdrgate check — root ${evil}, host gpu\\u001b]0;owned\\u0007\\u001b[2J001, no baseline (universal rules only)`);
  t.ok(lines.includes('PASS    device-inventory       mlx5_\\u001b[1K0\\u202e   RDMA ConnectX-7 at 0000:19:00.0, fw 28.39.1002, port 1 4: ACTIVE 400 Gb/sec (4X NDR)'), 'the adapter');
  t.ok(lines.includes('PASS    gpudirect-mechanism    node          open kernel module 580.159.04, kernel 6.8.0\\u001b[31m-evil\\u009b2J: DMA-BUF possible, nvidia_peermem absent'), 'the kernel release');
  const json = cli(['check', '--root', evil, '--json']);
  t.notMatch(json.stdout, RAW, '--json: no raw control either');
  t.equal((JSON.parse(json.stdout) as { host: string }).host, HOST, '... and the JSON still says the real name');
});

t.test('topo: the NIC legend escaped', async (t) => {
  const r = cli(['topo', '--root', evil]);
  t.equal(r.code, 0);
  t.notMatch(r.stdout, /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202e]/, 'raw controls: none but the layout (tabs, newlines)');
  t.equal(r.stdout, '\tGPU0\tGPU1\tNIC0\tNIC1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\nGPU0\tX\tSYS\tPIX\tSYS\t0-47,96-143\t0\tN/A\nGPU1\tSYS\tX\tSYS\tPIX\t48-95,144-191\t1\tN/A\nNIC0\tPIX\tSYS\tX\tSYS\nNIC1\tSYS\tPIX\tSYS\tX\n\nLegend:\n\n  X    = Self\n  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)\n  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node\n  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)\n  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)\n  PIX  = Connection traversing at most a single PCIe bridge\n\nComputed from sysfs: GPU↔GPU cells show the PCIe path; NVLink (NV#) is not visible in sysfs and is not shown.\n\nNIC Legend:\n\n  NIC0: mlx5_\\u001b[1K0\\u202e\n  NIC1: mlx5_\\u001b[1K1\\u202e\n');
});

t.test('compare: both sides and every difference escaped', async (t) => {
  const r = cli(['compare', evil, clean]);
  t.equal(r.code, 1);
  t.notMatch(r.stdout, RAW);
  const lines = r.stdout.split('\n');
  t.equal(lines[0], `gdrgate compare — A (suspect) gpu\\u001b]0;owned\\u0007\\u001b[2J001 (directory ${evil}) against B (reference) gpu001 (directory ${clean})`);
  t.ok(lines.includes('MINOR   device   0000:19:00.0  mlx5_\\u001b[1K0\\u202e         mlx5_0'), 'the adapter name');
  t.ok(lines.includes('MINOR   kernel   node          6.8.0\\u001b[31m-evil\\u009b2J  6.8.0-49-generic'), 'the kernel release');
});

t.test("prolog --dry-run: the summary line escaped (slurmd's node name here)", async (t) => {
  const r = cli(['prolog', '--dry-run', '--root', evil, '--config', path.join(dir, 'none.json')], { SLURM_JOB_ID: '7', SLURMD_NODENAME: HOST });
  t.notMatch(r.stdout, RAW);
  t.match(r.stdout, new RegExp(`^gdrgate prolog — root ${literal(evil)}, no baseline \\(universal rules only\\)\nSTATUS  CHECK  SUBJECT  FINDING\nresult: config-error \\(exit 0\\) — 0 fail, 0 error, 0 warn, 0 pass, 0 skip\nconfig-error: refusing ${literal(path.join(dir, 'none.json'))}: ${literal(path.join(dir, 'none.json'))}: ENOENT: no such file or directory, lstat '${literal(path.join(dir, 'none.json'))}'\ngdrgate prolog node=gpu\\\\u001b\\]0;owned\\\\u0007\\\\u001b\\[2J001 job=7 result=config-error exit=0 \\d+ms action=none\n$`));
});

t.test('fleet report: a Prometheus label and a snapshot file name escaped', async (t) => {
  const fleet = path.join(dir, 'fleet');
  mkdirSync(fleet);
  for (const n of ['gpu001', 'gpu002', 'gpu\x1b[2J9']) t.equal(cli(['snapshot', '--root', clean, '--out', path.join(fleet, `${n}.tar.gz`)]).code, 0);
  const series = ['gpu001', 'gpu002'].flatMap((n, i) => parsePromText(nodeTextfile(n, i === 1, 11 + i).text, `textfile:${n}`));
  const bad = series.map((s) => ({ ...s, labels: new Map([...s.labels].map(([k, v]) => [k, k === 'nic' && v === 'mlx5_1' ? 'mlx5_\x1b[2J1' : v])) }));
  const srv: Server = createServer((req, res) => {
    const q = new URL(req.url ?? '/', 'http://x').searchParams.get('query') ?? '';
    const result = bad.filter((s) => q.startsWith(`${s.name}{`)).map((s) => ({ metric: { __name__: s.name, ...Object.fromEntries(s.labels) }, value: [1_800_000_600, String(s.value)] }));
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ status: 'success', data: { resultType: 'vector', result } }));
  });
  await new Promise<void>((res) => srv.listen(0, '127.0.0.1', res));
  t.teardown(() => new Promise<void>((res) => srv.close(() => res())));
  const url = `http://127.0.0.1:${(srv.address() as AddressInfo).port}`;
  const r = await promisify(execFile)(process.execPath, [CLI, 'fleet', 'report', fleet, '--prometheus', url], { encoding: 'utf8' }).catch((e: { stdout: string; stderr: string; code: number }) => e);
  t.notMatch(r.stdout, RAW);
  const lines = r.stdout.split('\n');
  t.ok(lines.includes('    ib-write-gpu   0000:82:00.0↔mlx5_\\u001b[2J1  gpu->nic->gpu    2      -       -    -          (too few nodes for a band)'), 'the label');
  t.ok(lines.includes('note: gpu\\u001b[2J9.tar.gz: node name "gpu\\u001b[2J9" has characters other than letters, digits, . _ -, skipped'), 'the file name');
});
