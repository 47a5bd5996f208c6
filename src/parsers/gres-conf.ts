// Slurm's gres.conf (man gres.conf, src/common/gres.c _parse_gres_config): one `Key=Value …` record a line, keys
// case-insensitive, read as slurmd reads its files (comments, continued lines, quotes: slurm-syntax.ts). For the GPU lines: which device files (File=/dev/nvidia[0-3]) may use
// which cores (Cores=, Slurm's abstract core index, not the OS's CPU numbers) and their NVLink counts (Links=).
import { blank, INCLUDE_LINE, keyValues, logicalLines } from './slurm-syntax.js';
import { type CpuRanges, type Parsed, parseCpuList } from './sysfs.js';

export interface GresLine {
  /** 1-based line number in its file, for the finding. */
  readonly line: number;
  /** The file an `Include` took it from; absent: gres.conf itself. */
  readonly file?: string;
  /** NodeName= as written (a Slurm hostlist); null: every node that reads the file. */
  readonly nodeName: string | null;
  /** The line begins with NodeName= (slurmd reads the lines that begin with Name= first, then these: gres.c
   * _parse_gres_conf_locked appends the "Name" array before the "NodeName" one). */
  readonly nodeFirst: boolean;
  /** Name= as written (slurmd matches it to its plugins in any case: gres.c xstrcasecmp). */
  readonly name: string;
  readonly type: string | null;
  /** Every key of the line, lower-cased (File and its alias Files as written). */
  readonly keys: readonly string[];
  /** File= expanded (`/dev/nvidia[0-1]` → /dev/nvidia0, /dev/nvidia1). */
  readonly files: readonly string[];
  readonly cores: CpuRanges | null;
  readonly coresText: string | null;
  readonly links: string | null;
  /** Count= as written; null: none. */
  readonly count: string | null;
}

export interface GresConf {
  readonly lines: readonly GresLine[];
  /**
   * Every AutoDetect= slurmd takes, lower-cased, in file order: a line's first key AutoDetect= (global: the last one
   * holds, parse_config.c "latest value used") or NodeName= (that node's own, which trumps the global). One on a line
   * that begins with Name= slurmd ignores ("In-line AutoDetect requires NodeName"): not here.
   */
  readonly autoDetects: readonly { readonly nodeName: string | null; readonly value: string }[];
}

/** Bounds: a real gres.conf is a few dozen lines; a bracket is expanded to at most this many files. */
const MAX_FILES = 1024;

/**
 * `/dev/nvidia[0-3,5]` → its files; one bracket group, as Slurm's hostlist expansion of File= allows, in the order
 * written (hostlist_create and hostlist_shift, as slurmd numbers the devices: `[7,3]` is nvidia7, then nvidia3),
 * each number as wide as its range's first as written (`[08-10]`: 08, 09, 10).
 */
export function expandFiles(s: string): Parsed<string[]> {
  const m = /^([^[\]]*)\[([0-9,-]+)\]([^[\]]*)$/.exec(s);
  if (!m) return /[[\]]/.test(s) ? { ok: false, error: `unexpected File=${s}` } : { ok: true, value: [s] };
  const files: string[] = [];
  for (const part of m[2]!.split(',')) {
    const r = /^(\d{1,7})(?:-(\d{1,7}))?$/.exec(part);
    const a = r ? Number(r[1]) : NaN;
    const b = r?.[2] === undefined ? a : Number(r[2]);
    if (!r || b < a) return { ok: false, error: `File=${s}: unexpected range ${JSON.stringify(part.slice(0, 40))}` };
    if (files.length + b - a + 1 > MAX_FILES) return { ok: false, error: `File=${s} names more than ${MAX_FILES} files` };
    for (let x = a; x <= b; x++) files.push(`${m[1]}${String(x).padStart(r[1]!.length, '0')}${m[3]}`);
  }
  return { ok: true, value: files };
}

/** N of `/dev/nvidiaN`, the device node the NVIDIA driver makes for minor N; null for anything else (`/dev/nvidia08`). */
export function deviceMinor(file: string): number | null {
  const m = /^\/dev\/nvidia(0|[1-9]\d{0,6})$/.exec(file);
  return m ? Number(m[1]) : null;
}

/** One logical line of a gres.conf or of a file it includes, not yet read as keys and values. */
export interface GresRaw {
  readonly file: string;
  readonly line: number;
  readonly body: string;
}

/** Where a line stands, for a finding: `gres.conf line 3`, or the included file's path and line. */
export const gresAt = (l: GresLine, top = 'gres.conf'): string => `${l.file ?? top} line ${l.line}`;

/** One file's text → its lines and its Include lines, in file order (the Includes are followed by the caller). */
export function gresItems(text: string, file: string): { order: ({ kind: 'entry'; entry: GresRaw } | { kind: 'include'; include: { file: string; line: number; target: string } })[]; problems: string[] } {
  const order: ReturnType<typeof gresItems>['order'] = [];
  for (const { line, body } of logicalLines(text)) {
    if (blank(body)) continue;
    const inc = INCLUDE_LINE.exec(body);
    order.push(inc ? { kind: 'include', include: { file, line, target: inc[1]! } } : { kind: 'entry', entry: { file, line, body } });
  }
  return { order, problems: [] };
}

/**
 * gres.conf's lines (of it and of the files it includes, in the order slurmd reads them) → its GPU lines and
 * AutoDetect=s. `top`: gres.conf's own path; its lines carry no `file`, and a line Slurm would refuse is said as
 * `TOP: line N: ...` (an included file's by its own path).
 */
export function parseGresLines(raws: readonly GresRaw[], top: string): Parsed<GresConf> {
  const lines: GresLine[] = [];
  const autoDetects: { nodeName: string | null; value: string }[] = [];
  for (const { file, line: at, body } of raws) {
    const where = `${file}: line ${at}`;
    const pairs = keyValues(body);
    if (!pairs.ok) return { ok: false, error: `${where}: ${pairs.error}` };
    const kv = new Map(pairs.value.map(([k, v]) => [k.toLowerCase(), v]));
    const first = pairs.value[0]![0].toLowerCase();
    const name = kv.get('name');
    const ad = kv.get('autodetect')?.toLowerCase();
    if (ad !== undefined && first !== 'name') autoDetects.push({ nodeName: first === 'nodename' ? (kv.get('nodename') ?? null) : null, value: ad });
    if (name === undefined) continue;
    // Files= is File='s other spelling (gres.c _gres_options).
    const fileText = kv.get('file') ?? kv.get('files');
    const files = fileText !== undefined ? expandFiles(fileText) : { ok: true as const, value: [] };
    if (!files.ok) return { ok: false, error: `${where}: ${files.error}` };
    // CPUs= is the older spelling of Cores= (gres.conf: "CPUs ... deprecated, use Cores").
    const coresText = kv.get('cores') ?? kv.get('cpus') ?? null;
    const cores = coresText === null ? null : parseCpuList(coresText);
    if (cores && !cores.ok) return { ok: false, error: `${where}: Cores=${coresText}: ${cores.error}` };
    lines.push({ line: at, ...(file !== top ? { file } : {}), nodeName: kv.get('nodename') ?? null, nodeFirst: first === 'nodename', name, type: kv.get('type') ?? null, keys: [...kv.keys()], files: files.value, cores: cores ? cores.value : null, coresText, links: kv.get('links') ?? kv.get('link') ?? null, count: kv.get('count') ?? null });
  }
  return { ok: true, value: { lines, autoDetects } };
}

/** One gres.conf's text with no Include followed (an Include line is refused); `file` names it in a refusal. */
export function parseGresConf(text: string, file = 'gres.conf'): Parsed<GresConf> {
  const raws: GresRaw[] = [];
  for (const item of gresItems(text, file).order) {
    if (item.kind === 'include') return { ok: false, error: `${file}: line ${item.include.line}: Include ${item.include.target} not followed here` };
    raws.push(item.entry);
  }
  return parseGresLines(raws, file);
}
