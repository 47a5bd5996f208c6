// The registry kept honest, as ESLint keeps its rules: every check registered once and tested by its own table, every
// code it makes worded in the catalog, and no check that throws or says nothing on a bare, foreign or own-baseline tree.
import t, { type Test } from 'tap';
import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { CATALOG, WORDING } from '../../src/checks/catalog.js';
import { CHECK_IDS, CHECKS } from '../../src/checks/index.js';
import { FsHost } from '../../src/host/fs-host.js';
import { buildInventory } from '../../src/inventory/build.js';
import type { BaselineClass } from '../../src/model/baseline.js';
import type { CheckId, Finding } from '../../src/model/finding.js';
import type { Inventory } from '../../src/model/inventory.js';
import { runChecks } from '../../src/runner/run.js';
import { limitsText } from '../gen/sysfs-tree.js';
import { node as DGX1 } from '../gen/topologies/dgx1v-8xv100-4nic.js';
import { node as P40 } from '../gen/topologies/paddle-8xp40-plx-cascade.js';
import { node as V100 } from '../gen/topologies/v100sxm2-4gpu-4nic-pairs.js';
import { H200, REPO } from '../helpers/paths.js';
import { baselineOf, captureFrom, catalogGaps, collectOnly, HGX, inventoryOf, put, softRoce, type Case } from './_trees.js';

collectOnly();
const testFile = (id: CheckId): string => path.join(REPO, 'test/checks', `${id}.test.ts`);
const tables = new Map<CheckId, readonly Case[]>();
for (const id of CHECK_IDS) if (existsSync(testFile(id))) tables.set(id, ((await import(`./${id}.test.js`)) as { cases: readonly Case[] }).cases);

t.test('every check has its docs page (reads, fails when, what to do, a real output, each code) and a README row', async (t) => {
  const readme = readFileSync(path.join(REPO, 'README.md'), 'utf8');
  const table = readme.slice(readme.indexOf('## What it checks'));
  for (const c of CHECKS) {
    t.equal(c.docs, `docs/checks/${c.id}.md`, `${c.id}: docs path`);
    const file = path.join(REPO, c.docs);
    if (!t.ok(existsSync(file), `${c.id}: ${c.docs} exists`)) continue;
    const page = readFileSync(file, 'utf8');
    t.match(page, new RegExp(`^# \`${c.id}\``), `${c.id}: page titled by its id`);
    for (const h of ['## What it reads', '## When it fails', '## What to do', '## Example']) t.ok(page.includes(h), `${c.id}: ${h}`);
    t.match(page, /```[^]*?\n(PASS|WARN|FAIL|SKIP) /, `${c.id}: a real example output`);
    for (const code of Object.keys(c.codes)) t.ok(page.includes(`\`${code}\``), `${c.id}: page names ${code}`);
    t.ok(table.includes(`| \`${c.id}\` |`), `${c.id}: README "What it checks" row`);
  }
});

// A page's table says each code as the wording table does: a row whose first cell is a worded code (a check's, or a
// job-view code gdrgate task makes) carries that code's tells and do, after a status cell where the table has one.
t.test("every code row of a check's page holds the code's wording as the table words it", async (t) => {
  const STATUSES = new Set(['pass', 'warn', 'fail', 'skip', 'error']);
  const worded = new Map<string, { tells: string; do: string }>(Object.entries(WORDING));
  for (const c of CHECKS) {
    const page = readFileSync(path.join(REPO, c.docs), 'utf8');
    for (const line of page.split('\n').filter((l) => /^\| `[a-z0-9-]+` \|/.test(l))) {
      const cells = line.slice(1, -1).split(' | ').map((x) => x.trim());
      const code = cells[0]!.slice(1, -1);
      const w = worded.get(code);
      if (w === undefined) continue; // a table of something else (pcie-acs's policies)
      const rest = STATUSES.has(cells[1] ?? '') ? cells.slice(2) : cells.slice(1);
      t.same(rest.slice(0, 2), [w.tells, w.do], `${c.docs}: ${code}`);
    }
  }
});

t.test('a check is one record: a title, a reason label of at most 20 characters with the prefix, worded codes', async (t) => {
  for (const c of CHECKS) {
    t.ok(c.title.length > 0, `${c.id}: title`);
    t.ok(`gdrgate: ${c.reasonLabel}`.length <= 20, `${c.id}: "gdrgate: ${c.reasonLabel}" fits sinfo -R's 20 characters`);
    for (const [code, w] of Object.entries(c.codes)) t.ok(w.tells && w.do, `${c.id} ${code}: tells and do`);
  }
});

t.test('every id of CHECK_IDS is registered in CHECKS exactly once, and CHECKS holds nothing else', async (t) => {
  const ids = CHECKS.map((c) => c.id);
  for (const id of CHECK_IDS) t.equal(ids.filter((x) => x === id).length, 1, id);
  t.strictSame([...ids].sort(), [...CHECK_IDS].sort());
});

t.test('every check has test/checks/<id>.test.ts with valid and invalid cases', async (t) => {
  for (const id of CHECK_IDS) {
    t.ok(existsSync(testFile(id)), `${id}: test file`);
    const cases = tables.get(id) ?? [];
    const wants = (c: Case) => [...c.bare, ...c.based];
    t.ok(cases.some((c) => wants(c).every((w) => w.status === 'pass')), `${id}: a valid case (nothing but pass)`);
    t.ok(cases.some((c) => wants(c).some((w) => w.status === 'fail')), `${id}: an invalid case (a fail)`);
  }
});

// Each table test runs its cases and holds every finding they make (pass included) against the catalog, and a case's
// wants are exactly the findings it selects: so the codes the wants name were all made by running the cases. They are
// gathered here from the tables rather than by writing the ~60 trees a second time (that doubles the suite's time).
t.test('every code the cases make is worded in the catalog and owned by one check; every check code is made', async (t) => {
  const owners = new Map<string, Set<CheckId>>();
  for (const [id, cases] of tables)
    for (const c of cases) for (const w of [...c.bare, ...c.based]) owners.set(w.code, (owners.get(w.code) ?? new Set()).add(id));
  t.strictSame(catalogGaps([...owners.keys()].map((code) => ({ code }))), [], 'codes missing from CATALOG or without tells/response');
  t.strictSame([...owners].filter(([, ids]) => ids.size > 1).map(([code]) => code), [], 'codes made by more than one check');
  const stray = [...owners].filter(([code, ids]) => [...ids].some((id) => !(code in CHECKS.find((c) => c.id === id)!.codes))).map(([code]) => code);
  t.strictSame(stray, [], "codes a check makes that its own record does not word");
  const unmade = Object.keys(CATALOG).filter((code) => !owners.has(code) && code !== 'config-error' && code !== 'internal-error');
  t.strictSame(unmade, [], 'catalog codes no case makes (untested wording or dead code)');
});

/** Runs each check directly (not through runChecks, which would turn a throw into a finding). */
function everyCheck(t: Test, inv: Inventory, baseline: BaselineClass | null, label: string): void {
  for (const c of CHECKS) {
    let out: Finding[] = [];
    t.doesNotThrow(() => (out = c.run({ inv, baseline })), `${c.id} (${label}): does not throw`);
    t.ok(out.length > 0, `${c.id} (${label}): returns at least one finding (not an empty list)`);
    t.strictSame(catalogGaps(out), [], `${c.id} (${label}): codes in the catalog`);
  }
}

t.test('nearly empty tree (only /proc/self/limits): every check returns findings, never throws', async (t) => {
  const inv = await buildInventory(new FsHost(t.testdir({ proc: { self: { limits: limitsText('unlimited') } } })));
  everyCheck(t, inv, null, 'no baseline');
  everyCheck(t, inv, await baselineOf(HGX), 'HGX baseline');
});

t.test('examples/h200-vm (real capture): every check returns findings, never throws', async (t) => {
  const inv = await buildInventory(new FsHost(H200));
  everyCheck(t, inv, null, 'no baseline');
  everyCheck(t, inv, await baselineOf(HGX), 'HGX baseline');
});

/** The older generated nodes run proprietary drivers from before nvidia-peermem: Mellanox's nv_peer_mem gave GPUDirect. */
const NV_PEER_MEM = put('sys/kernel/mm/memory_peers/nv_mem/version', '1.1-0\n');

t.test('a node is healthy against a baseline captured from itself (no fail, warn or error)', async (t) => {
  const nodes: [string, () => Promise<Inventory>, BaselineClass['platform']][] = [
    ['HGX H100', () => inventoryOf(HGX), 'bare-metal'],
    ['DGX-1V with nv_peer_mem', () => inventoryOf(DGX1, NV_PEER_MEM), 'bare-metal'],
    ['8x P40 cascade with nv_peer_mem', () => inventoryOf(P40, NV_PEER_MEM), 'bare-metal'],
    ['4x V100 pairs with nv_peer_mem', () => inventoryOf(V100, NV_PEER_MEM), 'bare-metal'],
    ['examples/h200-vm', () => buildInventory(new FsHost(H200)), 'virtualized'],
    ['HGX H100 + soft-RoCE rxe0 (no PCI function)', () => inventoryOf(HGX, softRoce()), 'bare-metal'],
  ];
  for (const [name, read, platform] of nodes) {
    const inv = await read();
    const bad = runChecks({ inv, baseline: captureFrom(inv, platform) }, CHECK_IDS).filter((f) => f.status === 'fail' || f.status === 'warn' || f.status === 'error');
    t.strictSame(bad.map((f) => `${f.status} ${f.check} ${f.code} ${f.subject}: ${f.message}`), [], name);
  }
});

t.test('baseline file round trip from sources: loadBaseline validates the captured HGX class, selectClass picks it', async (t) => {
  const cls = await baselineOf(HGX);
  const file = path.join(t.testdir(), 'baseline.json');
  await writeFile(file, JSON.stringify({ version: 1, classes: [cls] }, null, 2));
  const { loadBaseline, selectClass } = await import('../../src/baseline/load.js');
  const loaded = await loadBaseline(file);
  t.strictSame(selectClass(loaded, 'gpu042', file), JSON.parse(JSON.stringify(cls)));
});
