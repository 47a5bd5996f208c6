// `gdrgate epilog` draining: one outlier against a sustained fall, the owned drain, a human's drain kept.
import t from 'tap';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { healthy, last, lines, probes } from './_cli.js';

t.test('a sustained GPU↔NIC fall drains once with a gdrgate: bw- reason; one outlier does not', async (t) => {
  const e = await healthy(3);
  const prom = path.join(e.dir, 'gdrgate.prom');
  e.writeConfig(probes('gpu-slow', { promFile: prom }));
  const runs = ['4', '5', '6', '7'].map((j) => e.epilog(j));
  t.strictSame(runs.map((r) => r.code), [0, 0, 1, 1], 'exit 1 only once our reason is on the node');
  t.match(last(runs[0]!.stdout), /probes=ran samples=3 result=healthy exit=0 .* action=none$/, 'first slow sample: an outlier');
  t.match(last(runs[1]!.stdout), /result=healthy/, 'second: two of five, p50 still healthy');
  t.match(last(runs[2]!.stdout), / result=unhealthy exit=1 \d+ms reason="gdrgate: bw-gpu-path mlx5_0\/0000:41:00.0 p50 10.5 Gb\/s over 5 \(want >= 16.12 Gb\/s\) job=6" action=drained$/);
  t.match(runs[2]!.stdout, /^FAIL bw-gpu-path mlx5_0\/0000:41:00.0: GPU memory p50 10.5 Gb\/s over 5 .* while host memory on mlx5_0 is healthy \(p50 92.56 Gb\/s\)\n {5}GPU↔NIC path: /m);
  t.match(runs[2]!.stdout, /-> Check pcie-link and pcie-acs on this GPU↔NIC path/);
  t.match(last(runs[3]!.stdout), /action=kept: already drained by gdrgate/);
  t.equal(e.drainCalls().length, 1, 'one scontrol drain');
  t.match(e.drainCalls()[0], /^update nodename=gpu001 state=drain reason=gdrgate: bw-gpu-path /);
  t.equal(lines(e).length, 7 * 3, 'spool: 3 samples per probing epilog, 7 epilogs');
  t.ok(lines(e).every((l) => (JSON.parse(l) as { recipe?: unknown }).recipe), 'each sample carries its recipe');
  const log = readFileSync(e.log, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
  t.match(log.find((l) => l.msg === 'gdrgate epilog' && l.job === '6'), { result: /^unhealthy$/, exitCode: 1, action: /^drained$/, summary: { fail: 1 }, findings: [{ code: /^bw-gpu-path$/ }] });
  t.match(readFileSync(prom, 'utf8'), /gdrgate_bandwidth_samples\{node="gpu001",probe="ib-write-gpu",.*window="all"\} 7/);
});

t.test("a human's drain is never overwritten: nothing written, exit 0", async (t) => {
  const e = await healthy(2);
  e.adminDrain('rack maintenance');
  e.writeConfig(probes('gpu-slow'));
  const r = ['3', '4', '5'].map((j) => e.epilog(j));
  t.strictSame(r.map((x) => x.code), [0, 0, 0]);
  t.match(last(r[2]!.stdout), /result=unhealthy exit=0 .*action=kept: node is IDLE\+DRAIN for a reason that is not ours \(rack maintenance\)/);
  t.equal(e.drainCalls().length, 0);
});
