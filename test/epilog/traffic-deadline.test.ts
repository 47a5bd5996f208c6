// The Epilog's own deadline holds the look at the port counters (probes.quiet.windowMs) on top of the probe budget
// and deadlineMs: probes that use their whole budget after a long look are judged, never cut as the gate's own failure.
import t from 'tap';
import { healthy, last, probes } from './_cli.js';
import { bin } from './_env.js';

t.test('a 4 s look, then probes that fill their 2 s budget: judged inside a 3 s deadlineMs', async (t) => {
  // The hang stand-in is cut at each probe's 1 s timeout: mlx5_0's two probes use the whole 2 s budget. Before the
  // look was counted, the deadline (3 + 2 s) fell 4 s look + 2 s probes into the run, while the probes still ran.
  const e = await healthy(0);
  const config = (windowMs: number) => e.writeConfig(probes('hang', { budgetMs: 2000, ibWriteBw: { timeoutMs: 1000 }, tools: { ibWriteBw: bin('ib_write_bw-hang') }, quiet: { windowMs } }), { deadlineMs: 3000 });
  const line = (job: string): string => last(e.epilog(job).stdout).replace(/ \d+ms/, '');
  config(0);
  t.equal(line('1'), 'gdrgate epilog node=gpu001 job=1 view=none removed=false probes=ran samples=0 result=healthy exit=0 action=none', 'no look: inside the deadline');
  config(4000);
  t.equal(line('2'), 'gdrgate epilog node=gpu001 job=2 view=none removed=false probes=ran samples=0 result=healthy exit=0 action=none', 'the look counted');
  t.same(e.drainCalls(), []);
});

t.test('the Epilog\'s deadline also holds the look for processes holding a probed device (at most 2 s, before the probes)', async (t) => {
  const { MODES } = await import('../../src/engine/hook.js');
  const { SCAN_LIMITS } = await import('../../src/epilog/holders-limits.js');
  const { loadConfig } = await import('../../src/config.js');
  const e = await healthy(0);
  e.writeConfig(probes('ok', { budgetMs: 2000, quiet: { windowMs: 4000 } }), { deadlineMs: 3000 });
  const cfg = await loadConfig(e.config);
  t.equal(SCAN_LIMITS.ms, 2000);
  t.equal(MODES.epilog.budgetMs(cfg), 2000 + 4000 + 2000, 'budget + window + the look\'s bound');
  t.equal(MODES.prolog.budgetMs(cfg), 0, 'the Prolog probes nothing');
});
