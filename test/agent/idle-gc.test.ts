// The agent's idle collection: V8's minor GC only once nothing is being answered (the last request done, none taken up
// since), once however many requests end together, and nothing at all where Node gives no gc() (no --expose-gc).
import t from 'tap';
import { idleGc, type MinorGc } from '../../src/agent/idle-gc.js';

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));
function counting(): { gc: MinorGc; calls: unknown[] } {
  const calls: unknown[] = [];
  return { gc: (o) => void calls.push(o), calls };
}

t.test('after the last of several requests, once, a minor collection', async (t) => {
  const c = counting();
  const idle = idleGc(c.gc);
  idle.began();
  idle.began();
  idle.ended();
  await tick();
  t.same(c.calls, [], 'one request still being answered: none');
  idle.ended();
  t.same(c.calls, [], 'not within the request that ended: after the I/O already due');
  await tick();
  t.same(c.calls, [{ type: 'minor' }], 'both done: one, minor');
  await tick();
  t.same(c.calls, [{ type: 'minor' }], 'and no more while idle');
});

t.test('a request taken up before the collection runs puts it off to its own end', async (t) => {
  const c = counting();
  const idle = idleGc(c.gc);
  idle.began();
  idle.ended();
  idle.began();
  await tick();
  t.same(c.calls, [], 'busy again when it was due: none');
  idle.ended();
  await tick();
  t.same(c.calls, [{ type: 'minor' }], 'at the end of that one');
});

t.test('without gc() (Node not started with --expose-gc): nothing, and no error', async (t) => {
  const idle = idleGc(undefined);
  idle.began();
  t.doesNotThrow(() => idle.ended());
  await tick();
});
