// The drain reason gdrgate last wrote on this node, kept in the spool (a reboot keeps it where /var/lib is on disk;
// /run would not): a drain is ours to lift unasked (the health check's resume, an Epilog's drain replacing ours) only
// while Slurm's reason is that very text. A reason that starts with `gdrgate:` but was edited since (an admin's note
// added) or written by hand over it is a person's: left as it is, for `gdrgate resume` or scontrol. Where no record
// of this node is kept, the prefix decides, as before the record.
// Only root can change what is read here: the spool is checked as it is read (a directory others may write is refused),
// and the record itself must be root's and written by root alone.
import path from 'node:path';
import { ensureSafeDir, readSmall, writeAtomic } from '../host/files.js';
import { unsafeDirWhy } from '../host/safe-dir.js';

export const DRAIN_RECORD = 'drain-reason.json';
/** A record is a reason of at most 255 bytes with its node and time; anything larger is not one of ours. */
const MAX_RECORD_BYTES = 4096;

export type DrainRecord =
  | { readonly ok: true; readonly reason: string }
  | { readonly ok: false; readonly none: boolean; readonly why: string };

/** Keeps `reason` as the one this node's gdrgate wrote last (atomically, mode 0644). Throws on a refused or failed write. */
export function writeDrainRecord(spool: string, node: string, reason: string): void {
  ensureSafeDir(spool, 0o755);
  writeAtomic(path.join(spool, DRAIN_RECORD), `${JSON.stringify({ node, reason, at: new Date().toISOString() })}\n`);
}

/**
 * The reason this node's gdrgate wrote last; else whether none is kept for this node (`none`: no file, or another
 * node's) or why it cannot be told (planted, unreadable, malformed).
 */
export function readDrainRecord(spool: string, node: string): DrainRecord {
  const file = path.join(spool, DRAIN_RECORD);
  // The spool as the record is read, not only as it was written: in one another user can write, the record may have
  // been removed (the prefix rule would then lift an admin's edited reason) or an older one of root's put back.
  const dir = unsafeDirWhy(spool);
  if (dir !== null) return { ok: false, none: dir === 'missing', why: dir === 'missing' ? `gdrgate keeps no record of writing a drain on this node (${file})` : dir };
  const r = readSmall(file, { max: MAX_RECORD_BYTES, owner: process.geteuid?.() ?? 0, mode: 'no-other-write' });
  if (!r.ok) return { ok: false, none: r.kind === 'missing', why: r.kind === 'missing' ? `gdrgate keeps no record of writing a drain on this node (${file})` : r.why };
  let v: unknown;
  try {
    v = JSON.parse(r.value.toString('utf8'));
  } catch {
    return { ok: false, none: false, why: `${file} is not JSON` };
  }
  const rec = v !== null && typeof v === 'object' ? (v as { node?: unknown; reason?: unknown }) : {};
  if (typeof rec.reason !== 'string' || typeof rec.node !== 'string') return { ok: false, none: false, why: `${file} holds no node and reason` };
  if (rec.node !== node) return { ok: false, none: true, why: `${file} is node ${JSON.stringify(rec.node)}'s record, not ${node}'s` };
  return { ok: true, reason: rec.reason };
}

/**
 * Null when `reason` (Slurm's, without its `[user@time]`) is ours to lift: the very text this node's gdrgate wrote
 * last, or, where no record of this node is kept (a drain from before the record, a stateless node whose /var/lib did
 * not outlive its reboot, a spool cloned from another node), a reason that starts with `gdrgate:` as before; else why
 * it is left to a person. Read only when a reason of ours is on the node.
 */
export function notOurWriting(reason: string | null, spool: string, node: string): string | null {
  const rec = readDrainRecord(spool, node);
  if (!rec.ok) return rec.none ? null : `left drained: what gdrgate wrote cannot be told (${rec.why}); resume it by hand once mended (gdrgate resume)`;
  if (rec.reason !== reason) return `left drained: the reason is not the one gdrgate wrote (${rec.reason}): edited or written by a person; resume it by hand once mended (gdrgate resume)`;
  return null;
}
