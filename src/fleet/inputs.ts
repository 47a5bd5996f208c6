// What a fleet directory holds: node snapshots (`<node>.tar.gz`, as `gdrgate snapshot` and `fleet collect` write
// them) and sample spools copied by every means (`<node>.samples.jsonl`, `<node>.samples.<n>.jsonl`, or a whole spool
// directory `<node>.spool/`). A name that is not a node name is listed as a problem, never read.
import { readdirSync, type Dirent } from 'node:fs';
import path from 'node:path';
import { UsageError } from '../errors.js';
import { byNatural } from '../model/order.js';
import { spoolFiles } from '../samples/spool.js';
import { badNodeName } from '../slurm/node-name.js';

/** More entries than this in one directory is not a fleet of one site's GPU nodes. */
export const MAX_NODES = 100_000;

export interface FleetInputs {
  readonly snapshots: readonly { readonly node: string; readonly file: string }[];
  /** Per node, its spool files oldest first. */
  readonly spools: ReadonlyMap<string, readonly string[]>;
  readonly problems: readonly string[];
}

const SNAPSHOT = /^(.+)\.(?:tar\.gz|tgz|tar)$/;
const SPOOL_FILE = /^(.+)\.samples(?:\.(\d+))?\.jsonl$/;
const SPOOL_DIR = /^(.+)\.spool$/;

export function scanFleetDir(dir: string): FleetInputs {
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new UsageError(`fleet directory ${dir}: ${code === 'ENOENT' ? 'no such directory' : code === 'ENOTDIR' ? 'not a directory' : (e as Error).message}`);
  }
  if (entries.length > MAX_NODES * 4) throw new UsageError(`fleet directory ${dir}: ${entries.length} entries, more than ${MAX_NODES * 4}`);
  const snapshots: { node: string; file: string }[] = [];
  const gens = new Map<string, { gen: number; file: string }[]>();
  const problems: string[] = [];
  const named = (m: RegExpExecArray | null, name: string): string | null => {
    if (!m) return null;
    const bad = badNodeName(m[1]!);
    if (bad) problems.push(`${name}: ${bad}, skipped`);
    return bad ? null : m[1]!;
  };
  for (const e of entries) {
    const file = path.join(dir, e.name);
    if (e.isFile()) {
      const s = named(SNAPSHOT.exec(e.name), e.name);
      if (s !== null) {
        snapshots.push({ node: s, file });
        continue;
      }
      const m = SPOOL_FILE.exec(e.name);
      const n = named(m, e.name);
      // The live file is the newest (generation 0); samples.<n> are older the higher n is.
      if (n !== null) gens.set(n, [...(gens.get(n) ?? []), { gen: m![2] === undefined ? 0 : Number(m![2]), file }]);
    } else if (e.isDirectory()) {
      const n = named(SPOOL_DIR.exec(e.name), e.name);
      if (n !== null) gens.set(n, [...(gens.get(n) ?? []), ...spoolFiles(file).map((f, i, all) => ({ gen: all.length - i - 1 + 0.5, file: f }))]);
    }
  }
  const byNode = new Map<string, { node: string; file: string }>();
  for (const s of snapshots.sort((a, b) => byNatural(a.file, b.file))) {
    if (byNode.has(s.node)) problems.push(`${path.basename(s.file)}: a second snapshot of ${s.node}, skipped`);
    else byNode.set(s.node, s);
  }
  const unique = [...byNode.values()].sort((a, b) => byNatural(a.node, b.node));
  if (unique.length > MAX_NODES) throw new UsageError(`fleet directory ${dir}: ${unique.length} snapshots, more than ${MAX_NODES}`);
  const spools = new Map<string, string[]>();
  for (const [node, fs] of gens) spools.set(node, fs.sort((a, b) => b.gen - a.gen).map((f) => f.file));
  return { snapshots: unique, spools, problems };
}
