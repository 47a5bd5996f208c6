// Probes run for real (ExecaExec) against the stand-ins of test/fixtures/probe-bin, which print real captures, and once
// against the real Debian /usr/bin/ib_write_bw, which fails the real way on a machine without an RDMA device.
import t from 'tap';
import { chmodSync, copyFileSync, existsSync, rmSync } from 'node:fs';

import path from 'node:path';
import { judge } from '../../src/epilog/judge.js';
import { EXEC_GRACE_MS, ExecaExec } from '../../src/host/exec.js';
import { untrustedReason } from '../../src/host/trust.js';
import { probesConfig, type ProbesConfigInput } from '../../src/probes/config.js';
import { planProbes } from '../../src/probes/plan.js';
import { runProbes, type RunOptions } from '../../src/probes/run.js';
import type { ProbeOutcome, ProbeSpec } from '../../src/probes/types.js';
import { bin, railAt, twoRail, vpci } from '../epilog/_env.js';
import { inventoryOf } from './_inv.js';
import { scratchDir } from '../helpers/scratch.js';
import { shared } from '../helpers/paths.js';

const inv1 = await inventoryOf(twoRail(1));
const inv2 = await inventoryOf(twoRail(2));
const opts = (over: Partial<RunOptions> = {}): RunOptions => ({
  exec: new ExecaExec(), budgetMs: 20_000, cursor: 0, ctx: { node: 'gpu001', job: '7', now: () => 1_800_000_000_000 },
  untrusted: (f) => untrustedReason(f, process.getuid?.() ?? 0), ...over,
});
const plan = (over: ProbesConfigInput, inv = inv1): ProbeSpec[][] => planProbes(inv, probesConfig(over)!);
/** Each outcome as `probe where: what`, where being the NIC (ib_write_bw) or the GPUs (nvbandwidth). */
const said = (os: readonly ProbeOutcome[]) => os.map((o) => `${o.spec.probe} ${'nic' in o.spec ? o.spec.nic : o.spec.gpus.join(',')}: ${o.kind === 'ok' ? 'ok' : `${o.kind}: ${o.why}`}`);
const values = (os: readonly ProbeOutcome[]) => os.map((o) => (o.kind === 'ok' ? o.samples.map((s) => `${s.probe} ${s.gpu ?? s.nic} ${s.value} ${s.unit}`).join(',') : `${o.kind}: ${o.why}`));

t.test('healthy: host memory 92.56 Gb/s, GPU memory 23.03 Gb/s (the 64 KiB row of a sweep), recipes attached', async (t) => {
  const r = await runProbes(plan({ tools: { ibWriteBw: bin('ib_write_bw-healthy') } }), opts());
  t.strictSame(values(r.outcomes), ['ib-write-host mlx5_0 92.56 Gb/s', 'ib-write-gpu 0000:41:00.0 23.03 Gb/s']);
  const o = r.outcomes[1]!;
  t.ok(o.kind === 'ok' && o.samples[0]!.recipe.args.includes('--use_cuda=0') && o.samples[0]!.bytes === 65536, 'sample keeps its recipe and message size');
  t.ok(o.kind === 'ok' && o.samples[0]!.job === '7' && o.samples[0]!.node === 'gpu001');
});

t.test('the slow GPU capture measured the GPU at 82:00: on a node whose GPU 0 is 0000:41:00.0 a failed probe, no sample; numactl binding recorded', async (t) => {
  const r = await runProbes(plan({ tools: { ibWriteBw: bin('ib_write_bw-gpu-slow'), numactl: bin('numactl') } }), opts());
  t.strictSame(values(r.outcomes), ['ib-write-host mlx5_0 92.56 Gb/s', 'failed: measured GPU 82:00, not 0000:41:00.0 (CUDA device 0): is CUDA_DEVICE_ORDER honoured?']);
  t.ok(r.outcomes[0]!.kind === 'ok' && r.outcomes[0]!.samples[0]!.recipe.numaNode === 0, 'bound to NUMA node 0');
  t.strictSame(judge({ outcomes: r.outcomes, stats: [], envelopes: null, minSamples: 3 }).map((f) => `${f.status} ${f.code} ${f.subject}: ${f.message}`),
    ['error bw-probe-failed mlx5_0/0000:41:00.0: measured GPU 82:00, not 0000:41:00.0 (CUDA device 0): is CUDA_DEVICE_ORDER honoured?', 'skip bw-no-envelope mlx5_0: 92.56 Gb/s: no band for recipe ' + (r.outcomes[0]!.kind === 'ok' ? r.outcomes[0]!.samples[0]!.recipeHash : '')],
    'could not tell: nothing judged under 0000:41:00.0');
  // The same capture where it belongs: mlx5_1's GPU is 0000:82:00.0 on the two-rail node.
  const two = await runProbes(plan({ tools: { ibWriteBw: bin('ib_write_bw-gpu-slow') } }, inv2), opts());
  t.strictSame(values(two.outcomes), ['ib-write-host mlx5_0 92.56 Gb/s', 'failed: measured GPU 82:00, not 0000:41:00.0 (CUDA device 0): is CUDA_DEVICE_ORDER honoured?', 'ib-write-host mlx5_1 92.56 Gb/s', 'ib-write-gpu 0000:82:00.0 10.5 Gb/s']);
});

t.test('Hyper-V vPCI (a PCI domain per GPU, all at 00:00): perftest names no domain, so no GPU run is filed under a GPU', async (t) => {
  const two = await inventoryOf(vpci(2));
  const r = await runProbes(plan({ tools: { ibWriteBw: bin('ib_write_bw-vpci') } }, two), opts());
  t.strictSame(values(r.outcomes), [
    'ib-write-host mlx5_0 92.56 Gb/s',
    'failed: could not tell which GPU ib_write_bw used: it names bus:device only (00:00, no PCI domain), and CUDA lists 2 devices at 00:00: not filed under 0001:00:00.0 (CUDA device 0)',
    'ib-write-host mlx5_1 92.56 Gb/s',
    'failed: could not tell which GPU ib_write_bw used: it names bus:device only (00:00, no PCI domain), and CUDA lists 2 devices at 00:00: not filed under 0002:00:00.0 (CUDA device 1)',
  ]);
  // CUDA shows one device (the others hidden from it), the inventory two GPUs at 00:00: which one ran is still unsaid.
  const hidden = await runProbes(plan({ tools: { ibWriteBw: bin('ib_write_bw-vpci1') }, ibWriteBw: { host: false } }, two), opts());
  t.strictSame(values(hidden.outcomes), [0, 1].map((i) => `failed: could not tell which GPU ib_write_bw used: it names bus:device only (00:00, no PCI domain), and the inventory has 2 GPUs at 00:00 (0001:00:00.0, 0002:00:00.0): not filed under 000${i + 1}:00:00.0 (CUDA device ${i})`));
  t.strictSame(judge({ outcomes: hidden.outcomes, stats: [], envelopes: null, minSamples: 3 }).map((f) => `${f.status} ${f.code} ${f.subject}`), ['error bw-probe-failed mlx5_0/0001:00:00.0', 'error bw-probe-failed mlx5_1/0002:00:00.0'], 'never judged against a band');
  // One GPU in its own domain: 00:00 names it alone, a sample.
  const one = await runProbes(plan({ tools: { ibWriteBw: bin('ib_write_bw-vpci1') }, ibWriteBw: { host: false } }, await inventoryOf(vpci(1))), opts());
  t.strictSame(values(one.outcomes), ['ib-write-gpu 0001:00:00.0 23.03 Gb/s']);
});

const REF = shared('corpus-reference/ib_write_bw');
t.test('DMA-BUF capture: 181.46 Gb/s, 16 QPs, duration mode', { skip: !existsSync(REF) && `corpus-reference absent (${REF})` }, async (t) => {
  // The capture's GPU is at e1:00: measured there it is a sample, planned on 0000:41:00.0 it is not.
  const r = await runProbes(plan({ tools: { ibWriteBw: bin('ib_write_bw-dmabuf') }, ibWriteBw: { host: false, dmabuf: true } }, await inventoryOf(railAt(0xe1))), opts());
  t.strictSame(values(r.outcomes), ['ib-write-gpu 0000:e1:00.0 181.46 Gb/s']);
  const there = await runProbes(plan({ tools: { ibWriteBw: bin('ib_write_bw-dmabuf') }, ibWriteBw: { host: false, dmabuf: true } }), opts());
  t.strictSame(values(there.outcomes), ['failed: measured GPU e1:00, not 0000:41:00.0 (CUDA device 0): is CUDA_DEVICE_ORDER honoured?']);
});

t.test('a hung probe is cut at its timeout, the budget holds, the next run starts where this one was cut', async (t) => {
  const units = plan({ tools: { ibWriteBw: bin('ib_write_bw-hang') }, ibWriteBw: { timeoutMs: 1000 } }, inv2);
  const r = await runProbes(units, opts({ budgetMs: 3000 }));
  // The stand-in hangs 60 s (`exec sleep 60`). Compared with a bound: the run's own figures, not this test's wall
  // clock. No probe starts after the budget, none outlives it by more than EXEC_GRACE_MS (a killed probe usually
  // needs none of it: that is the room a starved CPU's late timers get). A timeout not enforced would read ≥ 60 000.
  t.ok(r.durationMs <= 3000 + EXEC_GRACE_MS, `whole run ${r.durationMs} ms by its own clock: budget 3000 ms plus at most the kill grace`);
  for (const o of r.outcomes) if (o.kind === 'failed') t.ok(o.durationMs < 30_000, `${o.spec.probe} ${"nic" in o.spec ? o.spec.nic : ""}: cut after ${o.durationMs} ms, the 60 s hang not waited out`);
  const kinds = r.outcomes.map((o) => o.kind);
  t.comment(values(r.outcomes).join('\n'));
  t.equal(r.outcomes.length, 4, 'an outcome for each planned probe');
  t.same(said(r.outcomes.slice(0, 2)).map((s) => s.replace(/\d+ ms$/, 'N ms')), ['ib-write-host mlx5_0: failed: timed out after N ms', 'ib-write-gpu mlx5_0: failed: timed out after N ms'], 'mlx5_0: both runs cut');
  t.equal(kinds[3], 'budget', 'the last one never started');
  t.ok(kinds.every((k) => k === 'failed' || k === 'budget'), 'nothing else');
  t.equal(r.cursor, 1, 'cut in unit 1 (mlx5_1)');
  const next = await runProbes(plan({ tools: { ibWriteBw: bin('ib_write_bw-healthy') } }, inv2), opts({ cursor: r.cursor }));
  t.same(said(next.outcomes).map((s) => s.replace(/:.*/, '')), ['ib-write-host mlx5_1', 'ib-write-gpu mlx5_1', 'ib-write-host mlx5_0', 'ib-write-gpu mlx5_0'], 'mlx5_1 first this time');
});

t.test('missing, untrusted: skipped with the reason, nothing run', async (t) => {
  const dir = scratchDir('gdrgate-untrusted-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const loose = path.join(dir, 'ib_write_bw');
  copyFileSync(bin('ib_write_bw'), loose);
  chmodSync(loose, 0o777);
  const missing = await runProbes(plan({ tools: { ibWriteBw: '/nonexistent/ib_write_bw' } }), opts());
  const enoent = "unusable: /nonexistent/ib_write_bw: ENOENT: no such file or directory, lstat '/nonexistent'";
  t.same(said(missing.outcomes), [`ib-write-host mlx5_0: ${enoent}`, `ib-write-gpu mlx5_0: ${enoent}`]);
  const untrusted = await runProbes(plan({ tools: { ibWriteBw: loose } }), opts());
  t.same(said(untrusted.outcomes), ['ib-write-host', 'ib-write-gpu'].map((p) => `${p} mlx5_0: unusable: ${loose} is writable by anyone (mode 777)`));
  t.same(judge({ outcomes: missing.outcomes, stats: [], envelopes: null, minSamples: 3 }).map((f) => `${f.status} ${f.code} ${f.subject}`), ['skip bw-tool-unusable mlx5_0', 'skip bw-tool-unusable mlx5_0/0000:41:00.0']);
});

const REAL = '/usr/bin/ib_write_bw';
t.test('the real ib_write_bw (Debian perftest) without an RDMA device: a probe failure, not a crash', { skip: !existsSync(REAL) && !process.env.CI && 'perftest not installed' }, async (t) => {
  const r = await runProbes(plan({ tools: { ibWriteBw: REAL }, ibWriteBw: { port: 18600 + (process.pid % 1000) } }), opts());
  t.comment(values(r.outcomes).join('\n'));
  // "At once": each side exits by itself, none is cut by its timeout (a server left waiting for its client would be).
  t.ok(r.outcomes.every((o) => o.kind === 'failed' && !/timed out|no exit/.test(o.why)), 'both sides give up by themselves, no timeout');
  t.match(r.outcomes[0], { kind: /^failed$/, why: /^no RDMA device \(exit 1\)$/ });
  t.same(r.outcomes[0]!.kind === 'failed' && r.outcomes[0]!.lines, ['Did not detect devices', 'If device exists, check if driver is up', 'Unable to find the Infiniband/RoCE device']);
  t.match(r.outcomes[1], { kind: /^failed$/ }, 'GPU memory too (this build has no CUDA)');
  const f = judge({ outcomes: r.outcomes, stats: [], envelopes: null, minSamples: 3 });
  t.same(f.map((x) => `${x.status} ${x.code} ${x.subject}`), ['error bw-probe-failed mlx5_0', 'error bw-probe-failed mlx5_0/0000:41:00.0']);
});

t.test('nvbandwidth: the real A10 capture; JSON mapped by bus id; a testcase without capture fails', async (t) => {
  const nv = (over: ProbesConfigInput['nvbandwidth']) => plan({ tools: { ibWriteBw: null, nvbandwidth: bin('nvbandwidth') }, nvbandwidth: over });
  const text = await runProbes(nv({}), opts());
  t.strictSame(values(text.outcomes), ['nvbw-h2d 0000:41:00.0 25.17 GB/s', 'failed: tool failed (exit 1)']);
  t.same(text.outcomes[1]!.kind === 'failed' && text.outcomes[1]!.lines, ['nvbandwidth stand-in: no captured output for testcase device_to_host_memcpy_ce']);
  // The constructed JSON names GPUs 1b:00 and 43:00: on a node with those GPUs they map by bus id.
  const [h2d] = nv({ json: true, testcases: ['host_to_device_memcpy_ce'] })[0]!;
  const spec = { ...h2d!, gpus: ['0000:1b:00.0', '0000:43:00.0'] } as ProbeSpec;
  const json = await runProbes([[spec]], opts());
  t.strictSame(values(json.outcomes), ['nvbw-h2d 0000:1b:00.0 55.21 GB/s,nvbw-h2d 0000:43:00.0 55.19 GB/s']);
  const foreign = await runProbes([[h2d!]], opts());
  t.same(foreign.outcomes.map((o) => o.kind === 'failed' && [o.why, o.lines]), [['no GPU cell in the result', ['device 0 (00000000:1b:00) is not a GPU of the inventory: not recorded', 'device 1 (00000000:43:00) is not a GPU of the inventory: not recorded']]], 'bus ids of other GPUs are not recorded as ours');
});

t.test("nvbandwidth's 8-digit domain read as a number: 00010000:1b:00 is the GPU at 10000:1b:00.0, never 0000:1b:00.0", async (t) => {
  const [h2d] = plan({ tools: { ibWriteBw: null, nvbandwidth: bin('nvbandwidth-vmd') }, nvbandwidth: { json: true, testcases: ['host_to_device_memcpy_ce'] } })[0]!;
  const on = async (gpus: string[]) => values((await runProbes([[{ ...h2d!, gpus } as ProbeSpec]], opts())).outcomes);
  // Before, the domain's last four digits were taken: device 0 was filed under the GPU of domain 0000 at 1b:00.
  t.strictSame(await on(['0000:1b:00.0', '0000:43:00.0']), ['nvbw-h2d 0000:43:00.0 55.19 GB/s']);
  t.strictSame(await on(['10000:1b:00.0', '0000:43:00.0']), ['nvbw-h2d 10000:1b:00.0 55.21 GB/s,nvbw-h2d 0000:43:00.0 55.19 GB/s']);
});

t.test('could not tell which GPU, or the tool said it failed: no sample (a GPU run without its address line, nvbandwidth without bus ids on fewer devices than GPUs, nvbandwidth exit 1)', async (t) => {
  const ib = await runProbes(plan({ tools: { ibWriteBw: bin('ib_write_bw-noaddr') } }), opts());
  t.strictSame(values(ib.outcomes), ['ib-write-host mlx5_0 92.56 Gb/s', 'failed: ib_write_bw did not say which GPU it used (no "PCIe address is" line): not filed under 0000:41:00.0 (CUDA device 0)']);
  const nv = (tool: string) => plan({ tools: { ibWriteBw: null, nvbandwidth: bin(tool) }, nvbandwidth: { testcases: ['host_to_device_memcpy_ce'] } });
  // The A10 capture lists one device and no bus id; this node's inventory has two GPUs (CUDA left one out).
  const [h2d] = nv('nvbandwidth')[0]!;
  const two = await runProbes([[{ ...h2d!, gpus: ['0000:41:00.0', '0000:82:00.0'] } as ProbeSpec]], opts());
  t.strictSame(two.outcomes.map((o) => (o.kind === 'failed' ? [o.why, o.lines] : o.kind)), [['no GPU cell in the result', ['device 0: no bus id, and CUDA lists 1 device(s) for 2 GPU(s) of the inventory: could not tell which GPU, not recorded']]]);
  t.strictSame(values((await runProbes(nv('nvbandwidth-exit1'), opts())).outcomes), ['failed: tool failed (exit 1)'], 'a whole matrix with exit 1');
});

t.test('printed garbage is a failed probe, never a sample: impossible nvbandwidth cells, a changed layout, 12.5 TB/s over a NIC', async (t) => {
  const nv = (variant: string, json = false) => plan({ tools: { ibWriteBw: null, nvbandwidth: bin(`nvbandwidth-${variant}`) }, nvbandwidth: { json, testcases: ['host_to_device_memcpy_ce'] } });
  const one = async (units: ProbeSpec[][]) => (await runProbes(units, opts())).outcomes.map((o) => (o.kind === 'failed' ? `failed: ${o.why}` : values([o])[0]));
  t.strictSame(await one(nv('neg')), ['failed: no results (exit 0)'], '-5.00: not a number to the parser');
  t.strictSame(await one(nv('exp')), ['failed: no results (exit 0)'], '1e308: not a number to the parser');
  t.strictSame(await one(nv('zero')), ['failed: not a bandwidth: device 0: 0 GB/s is not above zero'], '0.00');
  t.strictSame(await one(nv('huge')), ['failed: not a bandwidth: device 0: 20000 GB/s is above 10 TB/s, more than a PCIe or NVLink path carries'], '20000.00 GB/s');
  t.strictSame(await one(nv('rows')), ['failed: unexpected layout: memcpy CE GPU(row) -> CPU(column) bandwidth (GB/s)'], 'GPU rows, CPU columns');
  t.strictSame(await one(nv('ns')), ['failed: unexpected layout: memcpy CE CPU(row) -> GPU(column) latency (ns)'], 'a latency in ns');
  const [h2d] = nv('rows', true)[0]!;
  t.strictSame(await one([[{ ...h2d!, gpus: ['0000:1b:00.0', '0000:43:00.0'] } as ProbeSpec]]), ['failed: unexpected layout: memcpy CE GPU(row) -> CPU(column) bandwidth (GB/s)'], 'JSON: GPU rows');
  const ib = await runProbes(plan({ tools: { ibWriteBw: bin('ib_write_bw-huge') }, ibWriteBw: { gpu: false } }), opts());
  t.strictSame(ib.outcomes.map((o) => (o.kind === 'failed' ? `failed: ${o.why}` : o.kind)), ['failed: not a bandwidth: 99999.99 Gb/s is above 10 TB/s, more than a PCIe or NVLink path carries']);
  t.strictSame(judge({ outcomes: ib.outcomes, stats: [], envelopes: null, minSamples: 3 }).map((f) => `${f.status} ${f.code} ${f.subject}`), ['error bw-probe-failed mlx5_0'], 'could not tell: no verdict of the path');
});

t.test("the loopback's own server failed (port taken) while the client has a result: a failed probe, not a sample", async (t) => {
  const r = await runProbes(plan({ tools: { ibWriteBw: bin('ib_write_bw-port-taken') } }), opts());
  const why = "loopback server failed (exit 1): the client's result is not ours";
  t.strictSame(r.outcomes.map((o) => (o.kind === 'failed' ? `failed: ${o.why} | ${o.lines.join(' | ')}` : o.kind)),
    [`failed: ${why} | server: Couldn't listen to port 18515 | server: Unable to open file descriptor for socket connection`, `failed: ${why} | server: Couldn't listen to port 18515 | server: Unable to open file descriptor for socket connection`]);
  t.strictSame(judge({ outcomes: r.outcomes, stats: [], envelopes: null, minSamples: 3 }).map((f) => `${f.status} ${f.code} ${f.subject}`),
    ['error bw-probe-failed mlx5_0', 'error bw-probe-failed mlx5_0/0000:41:00.0']);
});

t.test('a run perftest says it made on another HCA (rdma_cm, -R, resolves the device by route: -d is not what ran) or on none it names: not filed under the planned one', async (t) => {
  // The captures as captured: the host run's header names mlx5_8, the GPU sweep's mlx5_0; the plan's HCA is mlx5_0.
  const asis = await runProbes(plan({ tools: { ibWriteBw: bin('ib_write_bw-asis') } }), opts());
  t.strictSame(values(asis.outcomes), ['failed: ib_write_bw ran on mlx5_8, not mlx5_0 (-d): not filed under mlx5_0', 'ib-write-gpu 0000:41:00.0 23.03 Gb/s']);
  const nodev = await runProbes(plan({ tools: { ibWriteBw: bin('ib_write_bw-nodev') } }), opts());
  t.strictSame(values(nodev.outcomes), ['ib_write_bw did not say which device it used (no "Device :" in its header): not filed under mlx5_0', 'ib_write_bw did not say which device it used (no "Device :" in its header): not filed under mlx5_0'].map((w) => `failed: ${w}`));
  t.strictSame(judge({ outcomes: [asis.outcomes[0]!, ...nodev.outcomes], stats: [], envelopes: null, minSamples: 3 }).map((f) => `${f.status} ${f.code} ${f.subject}`),
    ['error bw-probe-failed mlx5_0', 'error bw-probe-failed mlx5_0', 'error bw-probe-failed mlx5_0/0000:41:00.0'], 'could not tell: never judged against a band');
});
