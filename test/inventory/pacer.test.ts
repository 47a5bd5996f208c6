// The inventory's reads are synchronous; Pacer gives the event loop a turn once enough time has passed, so the
// run's deadline timer can fire in a long inventory. Observed through an immediate queued before each turn.
import t from 'tap';
import { Pacer } from '../../src/inventory/read.js';

/** Whether an immediate queued before `pacer.turn()` ran before the turn returned. */
async function gaveTurn(pacer: Pacer): Promise<boolean> {
  let ran = false;
  const im = setImmediate(() => (ran = true));
  await pacer.turn();
  clearImmediate(im);
  return ran;
}

t.test('a turn once the interval has passed, none before', async (t) => {
  t.equal(await gaveTurn(new Pacer(0)), true, 'interval 0: every call yields');
  t.equal(await gaveTurn(new Pacer(60_000)), false, 'a fresh pacer with a long interval does not yield');
  const p = new Pacer(0);
  t.equal(await gaveTurn(p), true, 'first');
  t.equal(await gaveTurn(p), true, 'and again: the interval restarts after each turn');
});

t.test('the clock starts with the pacer, not with the process', async (t) => {
  // A pacer made long after start (as in a blob, whose module state was made in another process) waits its interval.
  const p = new Pacer(300);
  t.equal(await gaveTurn(p), false, 'no turn right after creation');
  // By this clock, the pacer's own: a timer counts from the event loop's cached time, which may be older.
  const made = performance.now();
  while (performance.now() - made < 320) await new Promise((r) => setTimeout(r, 20));
  t.equal(await gaveTurn(p), true, 'a turn once 300 ms have passed');
});
