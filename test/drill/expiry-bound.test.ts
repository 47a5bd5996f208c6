// A drill is in force only between its createdAt and its expiresAt, at most MAX_MINUTES apart: a file that says it
// lasts longer (edited, or written by another tool) or was made "later" than now (the clock set back since `drill
// start`, as chrony does to a node booted with its RTC ahead) injects no fault, so no drill outlives the bound it was armed with.
import t from 'tap';
import { writeFileSync } from 'node:fs';
import { loadDrill, MAX_MINUTES, newDrill } from '../../src/drill/file.js';
import { drillFile } from '../../src/drill/path.js';
import { scratchDir } from '../helpers/scratch.js';

const fault = { kind: 'memlock', bytes: 65536 } as const;
const NOW = Date.parse('2026-11-29T12:00:00Z');
const uid = process.getuid?.() ?? 0;
const MIN = 60_000;

function load(spec: object, now: number): { ok: boolean; why: string | null } {
  const dir = scratchDir('gdrgate-drill-bound-');
  writeFileSync(drillFile(dir), JSON.stringify(spec), { mode: 0o600 });
  const r = loadDrill(dir, 'gpu001', now, uid);
  return { ok: r.ok, why: r.ok ? null : r.why };
}

t.test('a drill longer than MAX_MINUTES is not in force, even before its expiresAt', async (t) => {
  const good = newDrill('gpu001', fault, 30, NOW);
  const year = { ...good, expiresAt: new Date(NOW + 365 * 24 * 60 * MIN).toISOString() };
  t.same(load(year, NOW + MIN), { ok: false, why: `drill ${good.marker} lasts from 2026-11-29T12:00:00.000Z to 2027-11-29T12:00:00.000Z, more than ${MAX_MINUTES} minutes: not in force` });
  const justOver = { ...good, expiresAt: new Date(NOW + MAX_MINUTES * MIN + 1000).toISOString() };
  t.same(load(justOver, NOW + MIN).ok, false);
  t.same(load(newDrill('gpu001', fault, MAX_MINUTES, NOW), NOW + MIN), { ok: true, why: null }, 'MAX_MINUTES itself is in force');
});

t.test('a drill made later than now (the clock set back since) is not in force', async (t) => {
  const d = newDrill('gpu001', fault, 30, NOW);
  t.same(load(d, NOW - 2 * 60 * MIN), { ok: false, why: `drill ${d.marker} was created at 2026-11-29T12:00:00.000Z, after now (2026-11-29T10:00:00.000Z: the clock was set back?): not in force` });
  t.same(load(d, NOW - 30_000), { ok: true, why: null }, 'within a minute of its creation: in force (clocks of one node differ by less)');
  const bad = load({ ...d, createdAt: 'yesterday' }, NOW).why!;
  t.same(bad.slice(bad.indexOf(': ') + 2), 'createdAt "yesterday" is not a time');
});
