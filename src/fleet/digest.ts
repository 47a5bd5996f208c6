// A node's inventory split in two for the fleet view: what is the node's own (its file, host name, boot, notes,
// process ids, adapter GUIDs: fields compare never reads) and the rest, shared by every node built alike, with a key
// (a SHA-256 of the rest's structured-clone bytes). Nodes of one key hold the same values in everything
// compareInventories and the fleet's fingerprint read, so one comparison answers for all of them, and a read-pool
// worker sends the shared part once per key instead of once per node. join() gives back the very inventory split.
// One key means one value everywhere in the shared part; the converse need not hold (the bytes say how V8 holds a
// number as well as its value): two alike nodes under two keys cost a second comparison, never a wrong one.
import { ABSENT, type Fact } from '../model/fact.js';
import { createHash } from 'node:crypto';
import { deserialize, serialize } from 'node:v8';
import type { Inventory } from '../model/inventory.js';

export interface NodeOwn {
  readonly root: string;
  readonly hostname: Fact<string>;
  readonly bootId: Fact<string>;
  readonly notes: readonly string[];
  /** memlock[k].pid */
  readonly pids: readonly (number | null)[];
  /** nics[k].nodeGuid */
  readonly guids: readonly Fact<string>[];
}

export interface Split {
  readonly key: string;
  readonly own: NodeOwn;
  /** The shared part as structured-clone bytes (v8.serialize): what a worker posts the first time it meets a key. */
  readonly bytes: Uint8Array;
}

/** The inventory with its own fields blanked: what every node of its key holds alike. */
function sharedPart(inv: Inventory): Inventory {
  return {
    ...inv,
    root: '',
    hostname: ABSENT,
    bootId: ABSENT,
    notes: [],
    memlock: inv.memlock.map((m) => ({ ...m, pid: null })),
    nics: inv.nics.map((n) => ({ ...n, nodeGuid: ABSENT })),
  };
}

/**
 * The shared part's canonical text: its values, never how V8 happens to hold them (v8.serialize writes a number as
 * an integer or a double, and a string as one- or two-byte, by representation: equal parts of two nodes could get two
 * keys). Maps, sets, byte arrays, bigints and undefined are spelled out so that different values never read alike.
 */
function canonical(part: Inventory): string {
  return JSON.stringify(part, (_k, v: unknown) => {
    if (v instanceof Map) return { '\u0000map': [...(v as Map<unknown, unknown>).entries()] };
    if (v instanceof Set) return { '\u0000set': [...(v as Set<unknown>).values()] };
    if (v instanceof Uint8Array) return { '\u0000bytes': Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('hex') };
    if (typeof v === 'bigint') return { '\u0000bigint': v.toString() };
    if (v === undefined) return '\u0000undefined';
    return v;
  });
}

export function splitInventory(inv: Inventory): Split {
  const part = sharedPart(inv);
  const bytes = serialize(part);
  const key = createHash('sha256').update(canonical(part)).digest('hex');
  const own: NodeOwn = { root: inv.root, hostname: inv.hostname, bootId: inv.bootId, notes: inv.notes, pids: inv.memlock.map((m) => m.pid), guids: inv.nics.map((n) => n.nodeGuid) };
  return { key, own, bytes };
}

/** The shared part back from its bytes (once per key). */
export function sharedFrom(bytes: Uint8Array): Inventory {
  return deserialize(bytes) as Inventory;
}

/** One node's inventory: the shared part of its key (its objects shared with the key's other nodes) and its own fields. */
export function joinInventory(shared: Inventory, own: NodeOwn): Inventory {
  if (own.pids.length !== shared.memlock.length || own.guids.length !== shared.nics.length) throw new Error('fleet digest: a node\'s own fields do not fit its key\'s inventory');
  return {
    ...shared,
    root: own.root,
    hostname: own.hostname,
    bootId: own.bootId,
    notes: own.notes,
    memlock: shared.memlock.map((m, k) => ({ ...m, pid: own.pids[k] ?? null })),
    nics: shared.nics.map((n, k) => ({ ...n, nodeGuid: own.guids[k] ?? ABSENT })),
  };
}
