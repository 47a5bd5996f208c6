// The drill file: written 0600 atomically; ignored when expired, not root's, writable by others, for another node, malformed.
import t from 'tap';
import { chmodSync, chownSync, readdirSync, statSync, writeFileSync } from 'node:fs';

import path from 'node:path';
import { loadDrill, newDrill, removeDrill, writeDrill } from '../../src/drill/file.js';
import { drillFile } from '../../src/drill/path.js';
import { scratchDir } from '../helpers/scratch.js';

const fault = { kind: 'memlock', bytes: 65536 } as const;
const NOW = Date.parse('2026-11-29T12:00:00Z');
const uid = process.getuid?.() ?? 0;
const fresh = (): string => scratchDir('gdrgate-drill-');

t.test('written 0600, read back while valid, not after expiry', async (t) => {
  const dir = path.join(fresh(), 'state');
  const spec = newDrill('gpu001', fault, 30, NOW);
  writeDrill(dir, spec);
  t.equal(statSync(drillFile(dir)).mode & 0o777, 0o600, 'mode 0600');
  t.same(readdirSync(dir), ['drill.json'], 'no temporary file left');
  t.equal(spec.expiresAt, '2026-11-29T12:30:00.000Z', 'default expiry +30 min');
  t.match(spec.marker, /^[0-9a-f]{8}$/, 'marker: 8 hex digits');
  const ok = loadDrill(dir, 'gpu001', NOW + 60_000, uid);
  t.same(ok, { ok: true, spec, fault }, 'active one minute later');
  const late = loadDrill(dir, 'gpu001', NOW + 30 * 60_000, uid);
  t.same(late, { ok: false, why: `drill ${spec.marker} expired at 2026-11-29T12:30:00.000Z` }, 'ignored at expiry');
  t.same(loadDrill(dir, 'gpu002', NOW, uid), { ok: false, why: `drill ${spec.marker} is for node gpu001, not gpu002` }, 'ignored on another node');
  t.ok(removeDrill(dir), 'removed');
  t.same(loadDrill(dir, 'gpu001', NOW, uid), { ok: false, why: `${drillFile(dir)}: no such file (ENOENT)` }, 'absent');
  t.notOk(removeDrill(dir), 'removing twice is fine');
});

t.test('fractional minutes (tests: seconds)', async (t) => {
  t.equal(newDrill('n', fault, 0.1, NOW).expiresAt, '2026-11-29T12:00:06.000Z');
});

t.test('ownership and mode', async (t) => {
  const dir = fresh();
  writeDrill(dir, newDrill('gpu001', fault, 30, NOW));
  t.same(loadDrill(dir, 'gpu001', NOW, uid + 1), { ok: false, why: `${drillFile(dir)} is owned by uid ${uid}, not ${uid + 1}` }, 'another owner than the one required: ignored');
  if (uid === 0) {
    chownSync(drillFile(dir), 1000, 1000);
    t.same(loadDrill(dir, 'gpu001', NOW), { ok: false, why: `${drillFile(dir)} is owned by uid 1000, not 0` }, 'a file of uid 1000: ignored by the root gate');
    chownSync(drillFile(dir), 0, 0);
  }
  chmodSync(drillFile(dir), 0o622);
  t.same(loadDrill(dir, 'gpu001', NOW, uid), { ok: false, why: `${drillFile(dir)} is writable by others (mode 0622)` }, 'group/world writable: ignored');
});

t.test("in a state directory another user can write: not in force (root's file may be one kept aside and put back)", async (t) => {
  const dir = path.join(fresh(), 'state');
  const spec = newDrill('gpu001', fault, 30, NOW);
  writeDrill(dir, spec);
  chmodSync(dir, 0o777);
  t.same(loadDrill(dir, 'gpu001', NOW, uid), { ok: false, why: `${dir} is writable by anyone (mode 0777): a drill file there may not be the one root left (not in force)` });
  chmodSync(dir, 0o1777);
  t.same(loadDrill(dir, 'gpu001', NOW, uid), { ok: true, spec, fault }, 'sticky: only its owner can rename or remove it');
  chmodSync(dir, 0o711);
  if (uid === 0) {
    chownSync(dir, 1000, 1000);
    t.same(loadDrill(dir, 'gpu001', NOW), { ok: false, why: `${dir} is owned by uid 1000: another user could plant files there: a drill file there may not be the one root left (not in force)` });
  }
});

t.test('malformed files are ignored, never half-used', async (t) => {
  const dir = fresh();
  const write = (s: string): void => {
    writeFileSync(drillFile(dir), s, { mode: 0o600 });
  };
  const good = newDrill('gpu001', fault, 30, NOW);
  const notDrill = 'not a drill file (version, node, fault, createdAt, expiresAt, marker)';
  const cases: [string, string][] = [
    ['{', 'not JSON: Expected property name or \'}\' in JSON at position 1 (line 1 column 2)'],
    ['[]', notDrill],
    [JSON.stringify({ ...good, marker: 'x y' }), notDrill],
    [JSON.stringify({ ...good, version: 2 }), notDrill],
    [JSON.stringify({ ...good, expiresAt: 'tomorrow' }), 'expiresAt "tomorrow" is not a time'],
    [JSON.stringify({ ...good, fault: 'iommu-mode=off' }), 'fault "iommu-mode=off": unknown check "iommu-mode": pcie-link, pcie-acs, pcie-relaxed-ordering, pcie-throttle, pcie-aer, pcie-payload, gpu-bar1, gpu-rebar, memlock, gpudirect-mechanism'],
  ];
  for (const [text, why] of cases) {
    write(text);
    t.same(loadDrill(dir, 'gpu001', NOW, uid), { ok: false, why: `${drillFile(dir)}: ${why}` }, text.slice(0, 60));
  }
});
