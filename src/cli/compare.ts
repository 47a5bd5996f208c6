// `gdrgate compare A B`: suspect (snapshot or directory) against known-good (snapshot, directory or baseline JSON).
import { nul } from '../model/fact.js';
import { loadBaseline, selectClass } from '../baseline/load.js';
import { diffAgainstBaseline } from '../compare/baseline.js';
import { compareInventories } from '../compare/compare.js';
import { buildResult, renderCompare, type Side } from '../compare/render.js';
import { sortDifferences } from '../compare/order.js';
import { FsHost } from '../host/fs-host.js';
import { readHead, statAsync } from '../host/whole-file.js';
import type { Inventory } from '../model/inventory.js';
import { readNode } from '../engine/evaluate.js';
import { ConfigError } from '../errors.js';
import { pciListUnknown } from '../inventory/pci-known.js';
import { out } from './common.js';

export interface CompareArgs {
  readonly a: string;
  readonly b: string;
  readonly json: boolean;
  readonly node?: string | undefined;
}

async function side(root: string): Promise<{ inv: Inventory; side: Side }> {
  const { host, inv } = await readNode({ root, baseline: null, node: null, trust: [] });
  // Without its device list every device would compare as missing: a side that cannot tell is refused, never judged.
  const pci = pciListUnknown(inv);
  if (pci !== null) throw new ConfigError(`${root}: its PCI device list is unknown (${pci}): nothing to compare`);
  return { inv, side: { source: root, kind: host instanceof FsHost ? 'directory' : 'snapshot', host: nul(inv.hostname) } };
}

/** Looked at for the first byte that is not JSON's blank (RFC 8259: space, tab, CR, LF). */
const HEAD = 64 * 1024;

/**
 * A baseline is a JSON file: the first byte that is not blank is `{` (a gzip stream starts 1f 8b, a tar with a file
 * name), or a head all blank (the baseline reader then says what is wrong with it).
 */
async function isJson(file: string): Promise<boolean> {
  const st = await statAsync(file).catch(() => null);
  if (!st?.isFile() || st.size === 0) return false;
  const first = /[^ \t\r\n]/.exec((await readHead(file, HEAD)).toString('latin1'));
  return first === null || first[0] === '{';
}

export async function compareCommand(a: CompareArgs): Promise<number> {
  const A = await side(a.a);
  let result;
  if (await isJson(a.b)) {
    const baseline = await loadBaseline(a.b);
    const node = a.node ?? nul(A.inv.hostname) ?? '';
    const cls = selectClass(baseline, node, a.b);
    const host = cls.captured?.host ?? null;
    result = buildResult(A.side, { source: a.b, kind: 'baseline', host, class: cls.name }, sortDifferences(diffAgainstBaseline(A.inv, cls)));
  } else {
    const B = await side(a.b);
    result = buildResult(A.side, B.side, compareInventories(A.inv, B.inv));
  }
  out(a.json ? JSON.stringify(result, null, 2) : renderCompare(result));
  return result.exitCode;
}
