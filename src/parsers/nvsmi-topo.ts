// Pure parser for `nvidia-smi topo -m` (and `-mp`) text: matrix cells, affinity columns, legends. Never throws.

export interface NvsmiTopoRow {
  readonly label: string;
  /** Column label → raw token as printed (`X`, `PIX`, `SOC`, `NV18`, …). */
  readonly cells: Readonly<Record<string, string>>;
  readonly cpuAffinity: string | null;
  readonly numaAffinity: string | null;
  readonly gpuNumaId: string | null;
}

export interface NvsmiTopo {
  /** Matrix columns in printed order (GPU0…, NIC0… or mlx5_N); the affinity columns are not included. */
  readonly columns: string[];
  readonly rows: NvsmiTopoRow[];
  /** `NIC0` → `mlx5_0` from the "NIC Legend:" block (new format only). */
  readonly nicLegend: Record<string, string>;
  /** Token → meaning from the "Legend:" block (`SOC` on very old drivers, `SYS` since). */
  readonly legend: Record<string, string>;
  /** `old`: NIC columns named by device (mlx5_N) or no NUMA Affinity column; `new` otherwise. */
  readonly format: 'new' | 'old';
  readonly problems: string[];
}

/** Columns after the matrix, in the order nvidia-smi prints them. */
const TRAILING = ['CPU Affinity', 'NUMA Affinity', 'GPU NUMA ID'] as const;
type Trailing = (typeof TRAILING)[number];

/** Every token the legend of every driver defines, plus N/A. */
const CELL_RE = /^(X|SYS|SOC|NODE|PHB|PXB|PIX|NV\d+|N\/A)$/;
const GPU_RE = /^GPU\d+$/;
const NIC_RE = /^NIC\d+$/;
// CSI sequences such as ESC[4m / ESC[0m that newer nvidia-smi puts around the header on a terminal.
const ANSI_RE = /\x1b\[[0-9;?]*[ -/]*[@-~]/g;

/** The legend's `SOC` (drivers before SYS existed) means the same as `SYS`; every other token is kept as is. */
export function normalizeClass(tok: string): string {
  const t = tok.trim();
  return t === 'SOC' ? 'SYS' : t;
}

/** Words of one line: tab-separated as printed, or space-aligned when tabs were expanded by a pager or a paste. */
function tokens(line: string): string[] {
  if (line.includes('\t')) return line.split('\t').map((s) => s.trim());
  return line.trim().split(/\s+/).filter(Boolean);
}

/** Header words with the multi-word column names put back together (they only split when tabs became spaces). */
function headerColumns(line: string): string[] {
  const raw = tokens(line).filter(Boolean);
  const out: string[] = [];
  for (let i = 0; i < raw.length; i++) {
    const joined = TRAILING.find((name) => raw.slice(i, i + name.split(' ').length).join(' ') === name);
    if (joined && !line.includes('\t')) {
      out.push(joined);
      i += joined.split(' ').length - 1;
    } else out.push(raw[i]!);
  }
  return out;
}

function isHeader(words: string[]): boolean {
  return GPU_RE.test(words[0] ?? '') && words[1] !== undefined && !CELL_RE.test(words[1]);
}

export function parseNvsmiTopo(text: string): NvsmiTopo {
  const problems: string[] = [];
  const lines = text.replace(ANSI_RE, '').split(/\r?\n/);
  const at = lines.findIndex((l) => isHeader(headerColumns(l)));
  const empty: NvsmiTopo = { columns: [], rows: [], nicLegend: {}, legend: {}, format: 'new', problems };
  if (at < 0) {
    problems.push('no matrix header (a line of GPU0 … column names) found');
    return empty;
  }
  const header = headerColumns(lines[at]!);
  const trailing = header.filter((h): h is Trailing => (TRAILING as readonly string[]).includes(h));
  const columns = header.filter((h) => !(TRAILING as readonly string[]).includes(h));
  if (header.slice(columns.length).some((h) => !(TRAILING as readonly string[]).includes(h))) {
    problems.push(`matrix column after the affinity columns: ${header.join(' | ')}`);
  }
  if (new Set(columns).size !== columns.length) problems.push(`duplicate column names: ${columns.join(' ')}`);

  const rows: NvsmiTopoRow[] = [];
  let i = at + 1;
  for (; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.trim() === '' || /^\s*Legend:/.test(line)) break;
    const words = tokens(line);
    const label = words[0] ?? '';
    if (!columns.includes(label)) {
      problems.push(`row ${JSON.stringify(label)} is not one of the columns`);
      continue;
    }
    const vals = words.slice(1);
    if (vals.length < columns.length) {
      problems.push(`row ${label} has ${vals.length} values, expected at least ${columns.length}`);
    }
    const cells: Record<string, string> = {};
    columns.forEach((c, k) => {
      const v = vals[k];
      if (v === undefined || v === '') return;
      cells[c] = v;
      if (!CELL_RE.test(v)) problems.push(`row ${label} column ${c}: unknown token ${JSON.stringify(v)}`);
    });
    // After the matrix: affinity values in header order. A tab run (the double tab before GPU NUMA ID, a NIC
    // row's trailing tabs) yields empty fields, which are not values.
    const rest = vals.slice(columns.length).filter((v) => v !== '');
    if (rest.length > trailing.length) problems.push(`row ${label} has ${rest.length} values after the matrix, expected at most ${trailing.length}`);
    const tail = (name: Trailing): string | null => {
      const k = trailing.indexOf(name);
      return k >= 0 ? (rest[k] ?? null) : null;
    };
    rows.push({ label, cells, cpuAffinity: tail('CPU Affinity'), numaAffinity: tail('NUMA Affinity'), gpuNumaId: tail('GPU NUMA ID') });
  }
  checkMatrix(columns, rows, problems);

  const legend: Record<string, string> = {};
  const nicLegend: Record<string, string> = {};
  let block: 'none' | 'legend' | 'nic' = 'none';
  for (; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (/^NIC Legend:$/.test(line)) block = 'nic';
    else if (/^Legend:$/.test(line)) block = 'legend';
    // Legend lines; some pastes keep them without the "Legend:" line above.
    else if (block !== 'nic' && /^\S+\s*=/.test(line)) {
      const m = /^(\S+)\s*=\s*(.*)$/.exec(line)!;
      legend[m[1]!] = m[2]!;
    } else if (block === 'nic' && /^NIC\d+:/.test(line)) {
      const m = /^(NIC\d+):\s*(\S*)/.exec(line)!;
      nicLegend[m[1]!] = m[2]!;
    }
  }
  for (const c of columns) if (NIC_RE.test(c) && !(c in nicLegend)) problems.push(`column ${c} has no NIC Legend entry`);
  for (const n of Object.keys(nicLegend)) if (!columns.includes(n)) problems.push(`NIC Legend names ${n}, which is not a column`);
  const old = columns.some((c) => !GPU_RE.test(c) && !NIC_RE.test(c)) || !trailing.includes('NUMA Affinity');
  return { columns, rows, nicLegend, legend, format: old ? 'old' : 'new', problems };
}

/** Every column has a row, X on the diagonal, and the matrix is symmetric, as nvidia-smi prints it. */
function checkMatrix(columns: string[], rows: NvsmiTopoRow[], problems: string[]): void {
  const byLabel = new Map(rows.map((r) => [r.label, r]));
  for (const c of columns) if (!byLabel.has(c)) problems.push(`column ${c} has no row`);
  for (const r of rows) {
    const self = r.cells[r.label];
    if (self !== undefined && self !== 'X') problems.push(`row ${r.label}: diagonal is ${self}, not X`);
    for (const c of columns) {
      const there = byLabel.get(c)?.cells[r.label];
      const here = r.cells[c];
      if (here !== undefined && there !== undefined && here !== there && r.label < c) {
        problems.push(`${r.label}/${c} is ${here} but ${c}/${r.label} is ${there}`);
      }
    }
  }
}

/** Column label → device name: the NIC Legend (`NIC0` → `mlx5_0`) or, in the old format, the label itself. */
export function nicNames(topo: NvsmiTopo): Record<string, string> {
  const out: Record<string, string> = {};
  for (const c of topo.columns) {
    if (GPU_RE.test(c)) continue;
    out[c] = NIC_RE.test(c) ? (topo.nicLegend[c] ?? c) : c;
  }
  return out;
}

/** The raw token at (row, column), or null when absent. */
export function topoCell(topo: NvsmiTopo, row: string, column: string): string | null {
  return topo.rows.find((r) => r.label === row)?.cells[column] ?? null;
}
