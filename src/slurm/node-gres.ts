// slurm.conf's Gres= for one node: which GPUs slurmd asks gres.conf for (slurmd.c takes node_rec->config_ptr->gres,
// the node's NodeName= line, its keys over those of every NodeName=DEFAULT line before it: read_config.c
// _parse_nodename merges each DEFAULT into the last). The record is read as gres.c _get_gres_cnt reads it: comma
// separated, `gpu` alone or `gpu:` and then types and a count, a count being digits with a K/M/G/T/P suffix (else the
// last part is a type and the count 1), anything from the last `(` on being socket binding. The name is matched
// exactly (xstrcmp): `GPU:2` asks for no gres/gpu. Pure: the Prolog reads the files (conf-load.ts).
import { forNode, hostlistNames } from '../checks/job-placement.js';
import { keyValues } from '../parsers/slurm-syntax.js';
import type { Parsed } from '../parsers/sysfs.js';
import type { ConfEntry } from './conf-parse.js';

export interface GpuAsk {
  /** The GPUs asked for, all records together. */
  readonly count: number;
  /** A record without a type (`gpu:8`, `gpu`). */
  readonly untyped: boolean;
  /** The types named (`gpu:h100:8` → h100), as written, in order, each once. */
  readonly types: readonly string[];
}

const COUNT = /^([0-9]+)([kKmMgGtTpP]?)$/;
const MULT: Record<string, number> = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4, p: 1024 ** 5 };

/** A Gres= value's GPU records (`gpu:h100:4(S:0),nic:1`); `flags` such as no_consume are not modelled (an error). */
export function parseGpuAsk(value: string): Parsed<GpuAsk> {
  let count = 0;
  let untyped = false;
  const types: string[] = [];
  for (const tok of value.split(',')) {
    if (tok === 'gpu') {
      count += 1;
      untyped = true;
      continue;
    }
    if (!tok.startsWith('gpu:')) continue;
    const bare = tok.includes('(') ? tok.slice(0, tok.lastIndexOf('(')) : tok;
    const parts = bare.split(':').slice(1);
    const last = parts.at(-1) ?? '';
    const m = COUNT.exec(last);
    // strtoll's digits, then a suffix suffix_mult knows, or the record is refused ("Bad GRES configuration").
    if (/^[0-9]/.test(last) && !m) return { ok: false, error: `Gres= record ${JSON.stringify(tok)} has a count slurmd refuses` };
    const named = (m ? parts.slice(0, -1) : parts).filter((p) => p !== '');
    if (named.some((p) => /^(no_consume|explicit)$/i.test(p))) return { ok: false, error: `Gres= record ${JSON.stringify(tok)} has a flag (not modelled)` };
    if (named.length > 1) return { ok: false, error: `Gres= record ${JSON.stringify(tok)} names ${named.length} types (not modelled)` };
    count += m ? Number(m[1]) * MULT[m[2]!.toLowerCase()]! : 1;
    if (named.length) {
      if (!types.includes(named[0]!)) types.push(named[0]!);
    } else untyped = true;
  }
  return { ok: true, value: { count, untyped, types } };
}

/**
 * Whether a NodeName= list may name `node` at all, looked at before its hostlist is matched (a slurm.conf holds a line
 * for every group of nodes, each naming the same prefix): some name of it is the node; or, `pre[ranges]post`, the
 * node is pre, digits, post with the digits' number within a range (the widths are forNode's to tell); or it has
 * another shape. A "no" here is sure; a "maybe" goes to forNode.
 */
export function mayName(names: string, node: string): boolean {
  if (!names.includes('[') && !names.includes(',')) return names === node;
  for (const name of hostlistNames(names)) {
    if (name === node) return true;
    if (!name.includes('[')) continue;
    const m = /^([^[\]]*)\[([0-9]+(?:-[0-9]+)?(?:,[0-9]+(?:-[0-9]+)?)*)\]([^[\]]*)$/.exec(name);
    if (!m) return true;
    const [, pre, ranges, post] = m as unknown as [string, string, string, string];
    const digits = node.slice(pre.length, node.length - post.length);
    if (node.length <= pre.length + post.length || !node.startsWith(pre) || !node.endsWith(post) || !/^[0-9]+$/.test(digits)) continue;
    const n = Number(digits);
    if (ranges.split(',').some((r) => Number(r.split('-')[0]) <= n && n <= Number(r.split('-').at(-1)))) return true;
  }
  return false;
}

/**
 * The GPUs slurm.conf asks for on `node` (null: its line has no Gres= or no gpu record); an error where slurmd's view
 * cannot be told: no NodeName= line names the node (a dynamic node's comes from slurmd's --conf), several do, a
 * NodeName= that cannot be read, or a record not modelled.
 */
export function nodeGpuAsk(entries: readonly ConfEntry[], node: string): Parsed<GpuAsk | null> {
  let defaults = new Map<string, string>();
  const found: { entry: ConfEntry; gres: string | undefined }[] = [];
  for (const e of entries) {
    if (e.name !== 'nodename') continue;
    const names = /^[^ \t\n\v\f\r]*/.exec(e.value)![0];
    const isDefault = names.toLowerCase() === 'default';
    // Another node's line is read past unparsed (a slurm.conf may hold thousands).
    if (!isDefault && !mayName(names, node)) continue;
    const kv = keyValues(e.value.slice(names.length));
    if (!kv.ok) return { ok: false, error: `${e.file}:${e.line}: NodeName=${names}: ${kv.error}` };
    const keys = new Map(kv.value.map(([k, v]) => [k.toLowerCase(), v]));
    if (isDefault) {
      defaults = new Map([...defaults, ...keys]);
      continue;
    }
    const mine = forNode({ nodeName: names }, node);
    if (mine === null) return { ok: false, error: `${e.file}:${e.line}: whether NodeName=${names} names ${node} cannot be told` };
    if (mine) found.push({ entry: e, gres: keys.get('gres') ?? defaults.get('gres') });
  }
  if (!found.length) return { ok: false, error: `no NodeName= line names ${node}` };
  if (found.length > 1) return { ok: false, error: `${node} is named on ${found.map((f) => `${f.entry.file}:${f.entry.line}`).join(' and ')}` };
  const gres = found[0]!.gres;
  if (gres === undefined) return { ok: true, value: null };
  const ask = parseGpuAsk(gres);
  if (!ask.ok) return { ok: false, error: `${found[0]!.entry.file}:${found[0]!.entry.line}: ${ask.error}` };
  return { ok: true, value: ask.value.count || ask.value.types.length || ask.value.untyped ? ask.value : null };
}
