// What a fleet directory holds: node snapshots (`<node>.tar.gz`, as `gdrgate snapshot` and `fleet collect` write
// them), the summaries the nodes wrote beside them (`<node>.summary.json`, summary.ts), and sample spools copied by every means (`<node>.samples.jsonl`, `<node>.samples.<n>.jsonl`, or a whole spool
// directory `<node>.spool/`). A name that is not a node name is listed as a problem, never read.
import path from 'node:path';
import { UsageError } from '../errors.js';
import { listEntries, type Dirent } from '../host/dirs.js';
import { byNatural } from '../model/order.js';
import { spoolFiles } from '../samples/spool.js';
import { badNodeName } from '../slurm/node-name.js';
import { hostTwins, twinsText } from './host-name.js';
import type { NodeMissing } from './types.js';

/** More entries than this in one directory is not a fleet of one site's GPU nodes. */
export const MAX_NODES = 100_000;

export interface FleetInputs {
  /** With the node's summary file when there is one (used only if it holds: read-one.ts). */
  readonly snapshots: readonly { readonly node: string; readonly file: string; readonly summary: string | null }[];
  /** Per node, its spool files oldest first. */
  readonly spools: ReadonlyMap<string, readonly string[]>;
  readonly problems: readonly string[];
  /** Inputs named for a node that cannot be read (a link, not a file; a spool directory that cannot be listed): the node is listed with why. */
  readonly broken: readonly NodeMissing[];
  /** Nodes with a spool input not read (said in `broken`): what they measured is not all known. */
  readonly unreadSpools: readonly string[];
}

const SNAPSHOT = /^(.+)\.(?:tar\.gz|tgz|tar)$/;
const SPOOL_FILE = /^(.+)\.samples(?:\.(\d+))?\.jsonl$/;
const SPOOL_DIR = /^(.+)\.spool$/;
const SUMMARY = /^(.+)\.summary\.json$/;
// Names meant for fleet that it does not read: one of its own suffixes in another case (GPU01.TAR.GZ, copied from a
// tool that shouts), or a snapshot packed another way (.tar.zst, .tar.xz, .zip). Said, never skipped silently: the
// node would else be missing from the report with nothing to say that its input was there.
// A file being written: gdrgate's own (host/files.ts: `.<name>.<pid>.<12 hex>`, renamed onto <name> when whole) or
// rsync's (`.<name>.<6 characters>`). The node's input is arriving: said, never skipped as a stranger's file.
const IN_FLIGHT = /^\.(.+)\.(?:\d+\.[0-9a-f]{12}|[A-Za-z0-9]{6})$/;
const OTHER_PACKING = /\.(?:tar\.(?:zst|zstd|xz|bz2|lz4|lzma|lz|z)|tzst|txz|tbz2?|zip|7z|gz|zst|xz)$/i;

/** Why a name no pattern took is still a problem, or null for a file fleet has no business with. */
export function nearMiss(name: string): string | null {
  const lower = name.toLowerCase();
  if (lower !== name && [SNAPSHOT, SPOOL_FILE, SPOOL_DIR, SUMMARY].some((r) => r.test(lower))) {
    return `${name}: not read: fleet reads <node>.tar.gz, .tgz, .tar, .samples.jsonl, .samples.<n>.jsonl, .spool and .summary.json, their suffix in lower case`;
  }
  if (OTHER_PACKING.test(name)) return `${name}: not read: packed in a way fleet does not read (a snapshot is <node>.tar.gz, .tgz or .tar; a spool is read unpacked)`;
  return null;
}

function kindOf(e: Dirent): string {
  if (e.isSymbolicLink()) return 'a symbolic link';
  if (e.isDirectory()) return 'a directory';
  if (e.isFIFO()) return 'a FIFO';
  if (e.isSocket()) return 'a socket';
  if (e.isBlockDevice() || e.isCharacterDevice()) return 'a device node';
  return e.isFile() ? 'a regular file' : 'not a regular file';
}

export function scanFleetDir(dir: string): FleetInputs {
  let entries: Dirent[];
  try {
    entries = listEntries(dir);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new UsageError(`fleet directory ${dir}: ${code === 'ENOENT' ? 'no such directory' : code === 'ENOTDIR' ? 'not a directory' : (e as Error).message}`);
  }
  if (entries.length > MAX_NODES * 4) throw new UsageError(`fleet directory ${dir}: ${entries.length} entries, more than ${MAX_NODES * 4}`);
  const snapshots: { node: string; file: string }[] = [];
  const gens = new Map<string, { gen: number; file: string }[]>();
  const problems: string[] = [];
  const broken: NodeMissing[] = [];
  const unreadSpools: string[] = [];
  const summaries = new Map<string, string>();
  // Appended in place: a node with many spool files costs one push each, never a copy of its list so far.
  const addGens = (node: string, xs: readonly { gen: number; file: string }[]): void => {
    let l = gens.get(node);
    if (!l) gens.set(node, (l = []));
    for (const x of xs) l.push(x);
  };
  const named = (m: RegExpExecArray | null, name: string): string | null => {
    if (!m) return null;
    const bad = badNodeName(m[1]!);
    if (bad) problems.push(`${name}: ${bad}, skipped`);
    return bad ? null : m[1]!;
  };
  for (const e of entries) {
    const file = path.join(dir, e.name);
    const sum = SUMMARY.exec(e.name);
    if (sum) {
      // Whatever it is (a link, a FIFO), the read refuses it and the node falls back to its snapshot, saying why.
      const node = named(sum, e.name);
      if (node !== null) summaries.set(node, file);
      continue;
    }
    const snap = SNAPSHOT.exec(e.name);
    const spoolFile = snap ? null : SPOOL_FILE.exec(e.name);
    const spoolDir = snap || spoolFile ? null : SPOOL_DIR.exec(e.name);
    if (!snap && !spoolFile && !spoolDir) {
      const inner = IN_FLIGHT.exec(e.name)?.[1] ?? '';
      const arriving = SNAPSHOT.exec(inner) ?? SPOOL_FILE.exec(inner);
      const node = named(arriving, e.name);
      if (node !== null) {
        broken.push({ node, why: `${e.name}: a ${SNAPSHOT.test(inner) ? 'snapshot' : 'spool file'} of ${node} being written (or left by a writer that stopped), not read: what the node is now is not all here` });
        if (!SNAPSHOT.test(inner)) unreadSpools.push(node);
        continue;
      }
      if (arriving) continue;
      const miss = nearMiss(e.name);
      if (miss) problems.push(miss);
      continue;
    }
    const node = named(snap ?? spoolFile ?? spoolDir, e.name);
    if (node === null) continue;
    const what = snap ? 'snapshot' : spoolFile ? 'spool file' : 'spool directory';
    const want = spoolDir ? e.isDirectory() : e.isFile();
    if (!want) {
      // A link is never followed (it could name any file of this machine, or another node's snapshot); nor is a FIFO read.
      broken.push({ node, why: `${e.name}: the ${what} is ${kindOf(e)}, not ${spoolDir ? 'a directory' : 'a regular file'}: not read` });
      if (!snap) unreadSpools.push(node);
      continue;
    }
    if (snap) snapshots.push({ node, file });
    // The live file is the newest (generation 0); samples.<n> are older the higher n is.
    else if (spoolFile) addGens(node, [{ gen: spoolFile[2] === undefined ? 0 : Number(spoolFile[2]), file }]);
    else {
      let fs: string[];
      try {
        fs = spoolFiles(file);
      } catch (err) {
        broken.push({ node, why: `${e.name}: the spool directory cannot be listed: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}` });
        unreadSpools.push(node);
        continue;
      }
      addGens(node, fs.map((f, i, all) => ({ gen: all.length - i - 1 + 0.5, file: f })));
    }
  }
  // Names of one host (GPU0002.tar beside gpu0002.tar.gz: host names are one whatever their case; gpu0002.cluster.tar
  // beside them: a short name and its full one) are one node's inputs under several names, and which is the node now
  // cannot be told; counted apart they would each vote in their class's majority. None of them is judged; each name is listed, saying why.
  const clash = new Set<string>();
  for (const all of hostTwins([...snapshots.map((x) => x.node), ...gens.keys(), ...summaries.keys()])) {
    const named = twinsText(all);
    for (const n of all) {
      clash.add(n);
      broken.push({ node: n, why: `inputs named ${named}: names that are one host's (the same but for case, or a short name and its full one), so which is the node now cannot be told; judged from none (keep one name)` });
    }
  }
  const byNode = new Map<string, { node: string; file: string }[]>();
  for (const s of snapshots.filter((x) => !clash.has(x.node)).sort((a, b) => byNatural(a.file, b.file))) {
    const l = byNode.get(s.node);
    if (l) l.push(s);
    else byNode.set(s.node, [s]);
  }
  // Two snapshots of one node (a hand-copied .tar beside collect's .tar.gz, a re-collect into a used directory):
  // which one is the node now is unknown, so neither is judged; the node is listed naming every file.
  const unique: { node: string; file: string; summary: string | null }[] = [];
  for (const [node, l] of byNode) {
    if (l.length === 1) unique.push({ ...l[0]!, summary: summaries.get(node) ?? null });
    else broken.push({ node, why: `${l.length} snapshots: ${l.map((s) => path.basename(s.file)).join(', ')}; judged from none (remove all but the current one)` });
  }
  unique.sort((a, b) => byNatural(a.node, b.node));
  for (const [node, file] of summaries) if (!byNode.has(node) && !clash.has(node)) broken.push({ node, why: `${path.basename(file)}: not used: no snapshot of ${node} was read to check it against` });
  if (unique.length > MAX_NODES) throw new UsageError(`fleet directory ${dir}: ${unique.length} snapshots, more than ${MAX_NODES}`);
  const spools = new Map<string, string[]>();
  for (const [node, fs] of gens) if (!clash.has(node)) spools.set(node, fs.sort((a, b) => b.gen - a.gen).map((f) => f.file));
  return { snapshots: unique, spools, problems, broken, unreadSpools };
}
