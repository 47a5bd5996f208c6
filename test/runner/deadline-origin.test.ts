// Where a Slurm hook's deadline counts from (runner/deadline.ts runOrigin): the wrapper's start when GDRGATE_T0 says it, else this process's start; never later than the process's start.
import t from 'tap';
import { processStart, runOrigin } from '../../src/runner/deadline.js';

const NOW = 1_800_000_000_000; // a fixed wall clock, ms

t.test('without GDRGATE_T0 (or with one that is not the wrapper\'s): the process\'s start', async (t) => {
  for (const v of [undefined, '', 'abc', '1800000000.5.5', '-3', '1800000001.000000' /* in the future */, '1799999000' /* 1000 s old */, '1e9']) {
    const o = runOrigin(v === undefined ? {} : { GDRGATE_T0: v }, 120_000, NOW);
    t.ok(Math.abs(o - processStart()) < 50, `${String(v)}: the process's start (${o.toFixed(1)} vs ${processStart().toFixed(1)})`);
  }
});

t.test('the wrapper\'s $EPOCHREALTIME: its age moves the origin back', async (t) => {
  const own = processStart();
  const o = runOrigin({ GDRGATE_T0: '1799999990.250000' }, 120_000, NOW); // 9.75 s before NOW
  const expected = performance.now() - 9750;
  t.ok(Math.abs(o - Math.min(own, expected)) < 50, `9.75 s before now (${o.toFixed(1)}, want ${Math.min(own, expected).toFixed(1)})`);
  t.ok(o <= own, 'never later than the process\'s start');
  const comma = runOrigin({ GDRGATE_T0: '1799999990,250000' }, 120_000, NOW);
  t.ok(Math.abs(comma - o) < 50, "a locale's decimal comma reads the same");
});

t.test('the process\'s start is before anything this process ran', async (t) => {
  t.ok(processStart() < performance.now(), 'in the past');
  t.ok(performance.now() - processStart() >= process.uptime() * 1000 - 5, 'as old as the process');
});
