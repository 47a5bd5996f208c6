// Shared setup of the check tables (not a test): the healthy HGX H100 tree, one-change variants of it, a baseline
// captured from the reference node, and a runner that compares one check's findings with the expected ones, with and
// without the baseline (ESLint RuleTester style: each case names one fault and the exact findings it must give), and
// the findings' messages against test/checks/messages/<table>.json (_messages.ts says how to update that record:
// `GDRGATE_WRITE_MESSAGES=1 npx tap test/checks/<table>.test.ts`, then read every changed sentence before committing).
import fs, { existsSync, promises as fsp, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { captureClass } from '../../src/baseline/capture.js';
import { aerReferenceOf } from '../../src/checks/aer-judge.js';
import type { CheckContext } from '../../src/checks/types.js';
import { CATALOG } from '../../src/checks/catalog.js';
import { CHECKS } from '../../src/checks/index.js';
import { FsHost } from '../../src/host/fs-host.js';
import { buildInventory } from '../../src/inventory/build.js';
import type { BaselineClass } from '../../src/model/baseline.js';
import type { CheckId, Finding, Status } from '../../src/model/finding.js';
import type { Inventory } from '../../src/model/inventory.js';
import { allDevices, type GenDevice, type GenNode } from '../gen/sysfs-tree.js';
import { node as HGX_NODE } from '../gen/topologies/sglang30401-hgx-h100.js';
import { REPO } from '../helpers/paths.js';
import type { Patch } from './_patches.js';
import { scratchDirAsync } from '../helpers/scratch.js';
import { checkStale, type Messages, normalise, readRecord, tableFile, WRITE, writeRecord } from './_messages.js';

/** The reference: 8x H100 + 8 ConnectX-7, bare metal, each GPU+NIC pair under one PCIe Gen5 switch. */
export const HGX: GenNode = HGX_NODE;
export const hgx = (): GenNode => structuredClone(HGX);

const ofKind = (k: GenDevice['kind']): string[] => allDevices(HGX).filter((d) => d.kind === k).map((d) => d.bdf);
export const GPUS = ofKind('gpu');
export const NICS = ofKind('nic');
/** Pair 0 (socket 0): root port → switch upstream → two downstream ports → GPU, NIC. */
export const P0 = { rp: '0000:15:01.0', up: '0000:16:00.0', downGpu: '0000:17:00.0', downNic: '0000:17:01.0', gpu: '0000:18:00.0', nic: '0000:19:00.0' } as const;

/** The device with this address in a description (mutable: cases change it). */
export function dev(n: GenNode, bdf: string): GenDevice {
  const d = allDevices(n).find((x) => x.bdf === bdf);
  if (!d) throw new Error(`no ${bdf} in the description`);
  return d;
}

/** The bridge a device hangs from; undefined on a root bus. */
export function parentOf(n: GenNode, bdf: string): GenDevice | undefined {
  return allDevices(n).find((x) => x.children?.some((c) => c.bdf === bdf));
}

/** Takes a device (and what is below it) off the bus, as a card that fell off or was pulled. */
export function detach(n: GenNode, bdf: string): void {
  const p = parentOf(n, bdf);
  if (p) p.children = p.children!.filter((c) => c.bdf !== bdf);
  else for (const hb of n.hostBridges) hb.devices = hb.devices.filter((c) => c.bdf !== bdf);
}

/** One link retrained: both ends (the device and its parent port) report the new current state; maxima stay. */
export function train(n: GenNode, bdf: string, cur: { speed?: number; width?: number }): void {
  for (const d of [dev(n, bdf), parentOf(n, bdf)]) {
    if (!d) continue;
    d.maxSpeed ??= d.speed ?? 16;
    d.maxWidth ??= d.width ?? 16;
    if (cur.speed !== undefined) d.speed = cur.speed;
    if (cur.width !== undefined) d.width = cur.width;
  }
}

export * from './_patches.js';

/**
 * The generator, with its awaited fs.promises calls made synchronously: ~1,500 tiny writes per HGX tree cost a fifth
 * of the CPU that way (a tree on tmpfs never blocks). Same generator code, same bytes on disk.
 */
const { buildTree } = await t.mockImport<typeof import('../gen/sysfs-tree.js')>('../gen/sysfs-tree.js', {
  'node:fs': {
    ...fs,
    promises: {
      ...fsp,
      mkdir: async (p: string, o: fs.MakeDirectoryOptions) => fs.mkdirSync(p, o),
      writeFile: async (p: string, d: string | Buffer) => fs.writeFileSync(p, d),
      symlink: async (target: string, p: string) => fs.symlinkSync(target, p),
    },
  },
});

/** tmpfs when there is one: writing ~1,500 sysfs files is several times slower on a disk with discard. */
const TMP = existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir();

/** At most three trees on disk at once; cases start together so that reading one overlaps writing the next. */
let running = 0;
const waiting: (() => void)[] = [];
async function slot<T>(fn: () => Promise<T>): Promise<T> {
  while (running >= 3) await new Promise<void>((r) => waiting.push(r));
  running++;
  try {
    return await fn();
  } finally {
    running--;
    waiting.shift()?.();
  }
}

/** Writes the tree under a fresh temporary root, reads it as the gate does, removes it. */
export function inventoryOf(n: GenNode, patch?: Patch): Promise<Inventory> {
  return slot(async () => {
    const dir = await scratchDirAsync('gdrgate-checks-', TMP);
    try {
      await buildTree(dir, n);
      if (patch) await patch(dir);
      return await buildInventory(new FsHost(dir));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
}

/** Same description, same inventory: unpatched trees are read once per process (checks never mutate it). */
const read = new Map<string, Promise<Inventory>>();
export function inventoryCached(n: GenNode, patch?: Patch): Promise<Inventory> {
  if (patch) return inventoryOf(n, patch);
  const key = JSON.stringify(n);
  if (!read.has(key)) read.set(key, inventoryOf(n));
  return read.get(key)!;
}

/** `gdrgate baseline capture` on a known-good node; the class must pass the schema like a file would. */
export async function baselineOf(n: GenNode, platform: BaselineClass['platform'] = 'bare-metal'): Promise<BaselineClass> {
  return captureFrom(await inventoryCached(n), platform);
}

export function captureFrom(inv: Inventory, platform: BaselineClass['platform'] = 'bare-metal'): BaselineClass {
  return valid(captureClass(inv, { name: 'reference', match: ['gpu[001-128]'], platform, at: '2025-06-02T08:00:00Z' }).cls);
}

/** schemas/baseline.schema.json with the options loadBaseline's validator uses, compiled once per process. */
const schemaCheck = new Ajv2020({ allErrors: true, strict: true }).compile(JSON.parse(readFileSync(path.join(REPO, 'schemas/baseline.schema.json'), 'utf8')) as object);
const validateBaseline = (data: unknown): string[] => (schemaCheck(data) ? [] : (schemaCheck.errors ?? []).map((e) => `${e.instancePath}: ${e.message}`));

/** A class as a baseline file holds it: it must pass the schema (and survive JSON) like `baseline validate` wants. */
export function valid(cls: BaselineClass): BaselineClass {
  const errs = validateBaseline({ version: 1, classes: [JSON.parse(JSON.stringify(cls)) as unknown] });
  if (errs.length) throw new Error(`baseline class fails the schema: ${errs.join('; ')}`);
  return cls;
}

export function runCheck(id: CheckId, inv: Inventory, baseline: BaselineClass | null, extra: Partial<CheckContext> = {}): Finding[] {
  const c = CHECKS.find((x) => x.id === id);
  if (!c) throw new Error(`${id} not registered`);
  return c.run({ ...extra, inv, baseline });
}

/** The previous run's time and this run's, an hour later (pcie-aer's growth). */
export const PREVIOUS_RUN = new Date('2025-06-02T09:00:00Z');
export const THIS_RUN = new Date('2025-06-02T10:00:00Z');

/** What a case pins down of a finding as data; its message is kept in the message record (_messages.ts). */
export interface Want {
  readonly status: Status;
  readonly code: string;
  readonly subject: string;
  readonly expected?: string;
  readonly actual?: string;
}

export interface Case {
  readonly name: string;
  /** Starting topology; default the healthy HGX H100. */
  readonly from?: GenNode;
  /** The one change, made on a deep clone of the start. */
  readonly change?: (n: GenNode) => void;
  readonly patch?: Patch;
  /** Change to the reference node the baseline is captured from (default: the unchanged start). */
  readonly ref?: (n: GenNode) => void;
  readonly platform?: BaselineClass['platform'];
  /** Hand edits of the captured class, as an operator makes them. */
  readonly edit?: Partial<BaselineClass>;
  /** The node at the previous run (pcie-aer): its counters are the reference this run's growth is judged against. */
  readonly previous?: (n: GenNode) => void;
  /** When that previous run was (default PREVIOUS_RUN, an hour before THIS_RUN). */
  readonly previousAt?: Date;
  /** Compare the findings about these subjects whatever their status; default: every finding that is not a pass. */
  readonly subjects?: readonly string[];
  readonly bare: readonly Want[];
  readonly based: readonly Want[];
}

const pick = ({ status, code, subject, expected, actual }: Want): Want =>
  ({ status, code, subject, ...(expected !== undefined ? { expected } : {}), ...(actual !== undefined ? { actual } : {}) });
const order = (ws: readonly Want[]): Want[] =>
  ws.map(pick).sort((a, b) => a.subject.localeCompare(b.subject) || a.code.localeCompare(b.code) || a.status.localeCompare(b.status));

export function selected(c: Case, fs: readonly Finding[]): Want[] {
  return order(fs.filter((f) => (c.subjects ? c.subjects.includes(f.subject) : f.status !== 'pass')));
}

/** The messages of the findings a case compares, in the order the check gives them, the temporary root normalised. */
export function messagesOf(c: Case, fs: readonly Finding[]): string[] {
  return fs.filter((f) => (c.subjects ? c.subjects.includes(f.subject) : f.status !== 'pass')).map((f) => normalise(f.message));
}

/** The reference node (the start, or the start with `ref` applied) captured, then edited by hand. */
async function baselineFor(c: Case): Promise<BaselineClass> {
  const n = structuredClone(c.from ?? HGX);
  c.ref?.(n);
  return valid({ ...(await baselineOf(n, c.platform)), ...c.edit });
}

export async function runCase(id: CheckId, c: Case): Promise<{ bare: Finding[]; based: Finding[] }> {
  const n = structuredClone(c.from ?? HGX);
  c.change?.(n);
  const [inv, baseline] = await Promise.all([inventoryCached(n, c.patch), baselineFor(c)]);
  let extra: Partial<CheckContext> = {};
  if (c.previous) {
    const p = structuredClone(c.from ?? HGX);
    c.previous(p);
    const ref = aerReferenceOf(await inventoryCached(p), c.previousAt ?? PREVIOUS_RUN, null);
    extra = { aerHistory: { against: 'the previous Prolog', ref, why: '' }, now: THIS_RUN };
  }
  return { bare: runCheck(id, inv, null, extra), based: runCheck(id, inv, baseline, extra) };
}

/** Codes a finding list uses that the catalog lacks or leaves without wording. */
export function catalogGaps(fs: readonly { readonly code: string }[]): string[] {
  const table = CATALOG as Record<string, { tells: string; do: string } | undefined>;
  return [...new Set(fs.map((f) => f.code))].filter((code) => !table[code]?.tells || !table[code]?.do);
}

const COLLECT = Symbol.for('gdrgate.test.checks.collect-only');
/** registry.test.ts imports the tables to read them; their tap tests must not run a second time there. */
export function collectOnly(): void {
  (globalThis as Record<symbol, unknown>)[COLLECT] = true;
}

/** A test outside the table (a property the table cannot state as exact findings); not run while collecting. */
export function probe(name: string, fn: (t: Test) => Promise<void>): void {
  if (!(globalThis as Record<symbol, unknown>)[COLLECT]) t.test(name, fn);
}

/** Registers one tap test per case (unless collecting) and returns the table. */
export function table(id: CheckId, cases: readonly Case[]): readonly Case[] {
  if ((globalThis as Record<symbol, unknown>)[COLLECT]) return cases;
  // Start every case now (a few trees at a time); each tap test then waits for its own.
  const runs = cases.map((c) => runCase(id, c));
  for (const r of runs) r.catch(() => undefined); // reported by its test, not as an unhandled rejection
  const file = tableFile();
  const record = readRecord(file);
  const written: Messages = {};
  t.test(id, async (t) => {
    const names = cases.map((c) => c.name);
    t.strictSame(names.filter((n, i) => names.indexOf(n) !== i), [], 'case names are unique (they key the message record)');
    for (const [i, c] of cases.entries()) {
      await t.test(c.name, async (t) => {
        const r = await runs[i]!;
        t.strictSame(selected(c, r.bare), order(c.bare), 'without baseline');
        t.strictSame(selected(c, r.based), order(c.based), 'with baseline');
        t.strictSame(catalogGaps([...r.bare, ...r.based]), [], 'every code is in the catalog');
        t.ok([...r.bare, ...r.based].every((f) => f.check === id), `every finding is ${id}'s`);
        const said = { 'without baseline': messagesOf(c, r.bare), 'with baseline': messagesOf(c, r.based) };
        if (WRITE) written[c.name] = said;
        else t.same(said, record[c.name] ?? 'no entry', `messages as test/checks/messages/${file}.json records them`);
      });
    }
    if (WRITE) writeRecord(file, written);
    else checkStale(t, file, record, names);
  });
  return cases;
}
