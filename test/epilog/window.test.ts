// The judged window, end to end through `gdrgate epilog` and `gdrgate resume`: half a window of busy runs never drains;
// after our bandwidth drain, a repair and a resume, the broken period's samples are not judged with the repaired path's;
// another node's samples in the spool (a golden image's) are never this node's. The rail is turned slow and back by the
// stand-in's mode file (test/fixtures/probe-bin/ib_write_bw: real captures, `slow41` the slow one on this GPU).
import t from 'tap';
import { readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { cli } from '../helpers/cli.js';
import { bin, makeEpilogEnv, type EpilogEnv } from './_env.js';
import { last, lines } from './_cli.js';

interface Rail { readonly e: EpilogEnv; set(mode: 'healthy' | 'slow41'): void }

/** A one-rail node whose bands were captured healthy (3 runs), its ib_write_bw a link that reads `mode` beside it. */
async function rail(): Promise<Rail> {
  const e = await makeEpilogEnv(1);
  const tool = path.join(e.dir, 'ib_write_bw-mode');
  symlinkSync(bin('ib_write_bw'), tool);
  const set = (mode: string): void => writeFileSync(path.join(e.dir, 'mode'), `${mode}\n`);
  e.writeConfig({ tools: { ibWriteBw: tool, nvbandwidth: null }, sampling: {}, capture: { runs: 3 } });
  set('healthy');
  const cap = cli(['baseline', 'capture', '--root', e.tree, '--class', 'rail', '--match', '*', '--with-probes', '--config', e.config]);
  if (cap.code !== 0) throw new Error(cap.stderr);
  writeFileSync(e.baseline, cap.stdout);
  return { e, set };
}

/** One Epilog with the rail as `mode`: its exit code and its summary line's verdict and action. */
function epilog(r: Rail, job: string, mode: 'healthy' | 'slow41', node = 'gpu001'): string {
  r.set(mode);
  const run = node === 'gpu001' ? r.e.epilog(job) : cli(['epilog', '--config', r.e.config], { SLURMD_NODENAME: node, SLURM_JOB_ID: job, SLURM_SCRIPT_CONTEXT: 'epilog_slurmd' });
  const summary = last(run.stdout);
  return `${run.code} ${/ result=(\S+) /.exec(summary)?.[1] ?? summary} ${/ action=(\S+)/.exec(summary)?.[1] ?? ''}`;
}
const gpuValues = (e: EpilogEnv): number[] => lines(e).map((l) => JSON.parse(l) as { probe: string; value: number }).filter((s) => s.probe === 'ib-write-gpu').map((s) => s.value);

t.test('two busy Epilogs of four: the window is half low, not sustained: no drain', async (t) => {
  const r = await rail();
  const got = ['1', '2', '3', '4'].map((j, i) => epilog(r, j, i % 2 ? 'slow41' : 'healthy'));
  t.strictSame(got, ['0 healthy none', '0 healthy none', '0 healthy none', '0 healthy none']);
  t.strictSame(gpuValues(r.e), [23.03, 10.5, 23.03, 10.5]);
  t.strictSame(r.e.drainCalls(), []);
  // Three of four low, the newest low: sustained.
  t.equal(epilog(r, '5', 'slow41'), '1 unhealthy drained');
});

t.test('after our bandwidth drain, a repair and a resume, the repaired path is judged on its own samples', async (t) => {
  const r = await rail();
  t.strictSame(['1', '2', '3'].map((j) => epilog(r, j, 'slow41')), ['0 healthy none', '0 healthy none', '1 unhealthy drained']);
  const from = JSON.parse(readFileSync(path.join(r.e.spool, 'probe-window.json'), 'utf8')) as { from: number; why: string };
  t.equal(from.why, 'drained: gdrgate: bw-gpu-path mlx5_0/0000:41:00.0 p50 10.5 Gb/s over 3 (want >= 16.12 Gb/s) job=3', 'the window restarts at our drain, which it names');
  r.set('healthy');
  const resumed = cli(['resume', '--config', r.e.config, '--node', 'gpu001']);
  t.equal(resumed.code, 0, resumed.stderr);
  t.equal((JSON.parse(readFileSync(path.join(r.e.spool, 'probe-window.json'), 'utf8')) as { why: string }).why, `resumed: ${from.why.slice('drained: '.length)}`, 'and again at the resume: what was sampled while drained was before the repair');
  // One good run, then one busy one: 2 samples since the drain, fewer than minSamples: pending, not a drain on the
  // broken period's 10.5s (which drained it again before the window had a start).
  t.strictSame([epilog(r, '4', 'healthy'), epilog(r, '5', 'slow41')], ['0 healthy none', '0 healthy none']);
  t.strictSame(gpuValues(r.e), [10.5, 10.5, 10.5, 23.03, 10.5], 'the history is kept; only the judgement starts anew');
  t.equal(r.e.drainCalls().length, 1);
  // Still broken after the resume: judged again from three fresh samples, and drained.
  t.equal(epilog(r, '6', 'slow41'), '1 unhealthy drained');
});

t.test("another node's samples in the spool (a cloned golden image's) are not this node's window", async (t) => {
  const r = await rail();
  // golden01 recorded two slow runs into this spool (the image was made from its disk): pending there, never drained.
  t.strictSame(['1', '2'].map((j) => epilog(r, j, 'slow41', 'golden01')), ['0 healthy none', '0 healthy none']);
  // gpu001's first slow run: its own window is one sample (pending), not three slow ones.
  t.strictSame([epilog(r, '3', 'slow41'), epilog(r, '4', 'healthy')], ['0 healthy none', '0 healthy none']);
  t.strictSame(r.e.drainCalls(), []);
  t.strictSame(gpuValues(r.e), [10.5, 10.5, 10.5, 23.03]);
});

t.test('a drain of ours for another check (pcie-link) lifted by gdrgate resume: the window starts anew there too', async (t) => {
  const r = await rail();
  t.strictSame([epilog(r, '1', 'slow41'), epilog(r, '2', 'slow41')], ['0 healthy none', '0 healthy none']);
  // Our Prolog drained the node for its link (what slowed the rail); it is reseated and resumed.
  r.e.adminDrain('gdrgate: pcie-link 0000:41:00.0 Gen4 x8 (want Gen4 x16) job=3');
  const resumed = cli(['resume', '--config', r.e.config, '--node', 'gpu001']);
  t.equal(resumed.code, 0, resumed.stderr);
  t.equal((JSON.parse(readFileSync(path.join(r.e.spool, 'probe-window.json'), 'utf8')) as { why: string }).why, 'resumed: gdrgate: pcie-link 0000:41:00.0 Gen4 x8 (want Gen4 x16) job=3');
  t.strictSame([epilog(r, '4', 'healthy'), epilog(r, '5', 'slow41')], ['0 healthy none', '0 healthy none'], 'one good run and one busy one since: pending, no drain on the two broken ones before');
});

t.test('a window start written ahead of the clock (a drain while it ran fast) is set to now, never dropped', async (t) => {
  const r = await rail();
  t.strictSame(['1', '2', '3'].map((j) => epilog(r, j, 'slow41')), ['0 healthy none', '0 healthy none', '1 unhealthy drained']);
  const file = path.join(r.e.spool, 'probe-window.json');
  const ahead = Date.now() + 2 * 3600_000;
  writeFileSync(file, `${JSON.stringify({ from: ahead, why: 'drained' })}\n`);
  const t0 = Date.now();
  t.equal(epilog(r, '4', 'healthy'), '0 healthy none');
  const w = JSON.parse(readFileSync(file, 'utf8')) as { from: number; why: string };
  t.ok(w.from >= t0 && w.from <= Date.now(), 'rewritten as now');
  t.equal(w.why, `was ${new Date(ahead).toISOString()}, ahead of the clock: set to now`);
  t.strictSame([epilog(r, '5', 'healthy'), epilog(r, '6', 'slow41')], ['0 healthy none', '0 healthy none'], 'the broken period before stays out');
});

t.test('a window start no clock can hold (±1e17 ms: a torn or hand-made file) is no start: the Epilog judges, never breaks', async (t) => {
  const r = await rail();
  const file = path.join(r.e.spool, 'probe-window.json');
  t.equal(epilog(r, '9', 'healthy'), '0 healthy none', 'the spool made');
  for (const [i, from] of [1e17, -1e17].entries()) {
    writeFileSync(file, `${JSON.stringify({ from, why: 'drained' })}\n`);
    t.equal(epilog(r, String(10 + i), 'healthy'), '0 healthy none', `from ${from}`);
    t.equal(readFileSync(file, 'utf8'), `${JSON.stringify({ from, why: 'drained' })}\n`, `from ${from}: left as it is`);
  }
});
