// Pure parser of NVIDIA nvbandwidth output, plain text (matrix + SUM lines) and `-j` JSON, into one typed result.

/** `->` row copies to column, `<-` column to row, `<->` both at once (nvbandwidth README, "Test Details"). */
export type NvbwArrow = '->' | '<-' | '<->';

export interface NvbwTestcase {
  readonly name: string;
  /** `running`: started but no result followed (the tool died mid-test). */
  readonly status: 'passed' | 'waived' | 'error' | 'not found' | 'running';
  /** As printed: `memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)`. */
  readonly description: string | null;
  readonly method: 'CE' | 'SM' | null;
  readonly rowKind: string | null; // CPU or GPU
  readonly arrow: NvbwArrow | null;
  readonly columnKind: string | null;
  /** `GB/s` for bandwidth tests, `ns` for latency tests; whatever the description's last parenthesis says. */
  readonly unit: string | null;
  readonly columns: readonly number[];
  readonly rowLabels: readonly number[];
  /** matrix[i][j]: row rowLabels[i], column columns[j]; null where the tool printed N/A. Old builds print 0.00 on the diagonal. */
  readonly matrix: readonly (readonly (number | null)[])[];
  /** The tool's own SUM (text `SUM name value`, JSON `sum`); null when it printed none (builds before v0.4). */
  readonly sum: number | null;
  readonly message: string | null;
}

export interface NvbwDevice {
  readonly index: number;
  readonly name: string;
  /** `00000000:1b:00` when the build prints it (recent versions), else null. */
  readonly pciBusId: string | null;
}

export interface NvbandwidthResult {
  readonly format: 'text' | 'json';
  readonly version: string | null;
  readonly gitVersion: string | null;
  readonly cudaRuntimeVersion: number | null;
  readonly cudaDriverVersion: number | null;
  readonly driverVersion: string | null;
  readonly devices: readonly NvbwDevice[];
  readonly testcases: readonly NvbwTestcase[];
  /** The tool's own failure text (CUDA/NVML assert, bad arguments), or `no results` when nothing was measured. */
  readonly error: string | null;
  readonly warnings: readonly string[];
  readonly problems: readonly string[];
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] extends readonly (infer U)[] ? U[] : T[K] };
type Tc = Mutable<NvbwTestcase>;

/** nvbandwidth prints cells and sums with `%.2f` of a non-negative figure: a sign or an exponent is not its output. */
const NUMBER = /^\d+(\.\d+)?$/;
function num(s: string | undefined): number | null {
  if (s === undefined || !NUMBER.test(s)) return null;
  const n = Number(s);
  return Number.isFinite(n) ? n : null;
}

function newTestcase(name: string): Tc {
  return {
    name, status: 'running', description: null, method: null, rowKind: null, arrow: null, columnKind: null,
    unit: null, columns: [], rowLabels: [], matrix: [], sum: null, message: null,
  };
}

function describe(tc: Tc, description: string): void {
  tc.description = description;
  tc.method = /\bCE\b/.test(description) ? 'CE' : /\bSM\b/.test(description) ? 'SM' : null;
  const m = description.match(/(\w+)\(row\)\s*(<->|->|<-)\s*(\w+)\(column\)/);
  tc.rowKind = m?.[1] ?? null;
  tc.arrow = (m?.[2] as NvbwArrow | undefined) ?? null;
  tc.columnKind = m?.[3] ?? null;
  tc.unit = description.match(/\(([^()]+)\)\s*$/)?.[1] ?? null;
}

/** A cell: a number, or null for N/A; undefined when it is neither. */
function cell(s: string): number | null | undefined {
  if (s === 'N/A') return null;
  const n = num(s);
  return n === null ? undefined : n;
}

/** The tool's SUM agrees with its own cells to within print rounding (each cell rounded to 0.01). */
function checkSum(tc: Tc, problems: string[]): void {
  if (tc.sum === null || tc.matrix.length === 0) return;
  const cells = tc.matrix.flat().filter((v): v is number => v !== null);
  const total = cells.reduce((a, b) => a + b, 0);
  if (Math.abs(total - tc.sum) > cells.length * 0.005 + 0.01) {
    problems.push(`${tc.name}: SUM ${tc.sum} does not match the matrix total ${total.toFixed(2)}`);
  }
}

const TOOL_ERROR = /^(\[(CUDA_ERROR_\w+|cuda\w+)\]|NVML_ERROR:|ASSERT in expression|ERROR: Invalid Arguments|You cannot specify both|Specified list of testcase prefixes)/;

function parseText(output: string): NvbandwidthResult {
  const testcases: Tc[] = [];
  const devices: NvbwDevice[] = [];
  const warnings: string[] = [];
  const problems: string[] = [];
  const head: Record<string, string> = {};
  let error: string | null = null;
  let cur: Tc | null = null;
  let inMatrix = false;

  for (const raw of output.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '') {
      inMatrix = false;
      continue;
    }
    let m: RegExpMatchArray | null;
    if (TOOL_ERROR.test(line)) {
      error ??= line;
      if (cur !== null && cur.status === 'running') cur.status = 'error';
    } else if ((m = line.match(/^(nvbandwidth Version|Built from Git version|CUDA Runtime Version|CUDA Driver Version|Driver Version):\s*(\S+)$/)) !== null) {
      head[m[1] ?? ''] = m[2] ?? '';
    } else if ((m = line.match(/^Device (\d+): (.+?)(?: \(([0-9a-fA-F]{8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2})\))?$/)) !== null) {
      devices.push({ index: Number(m[1]), name: m[2] ?? '', pciBusId: m[3] ?? null });
    } else if ((m = line.match(/^Running (\S+)\.$/)) !== null) {
      cur = newTestcase(m[1] ?? '');
      testcases.push(cur);
      inMatrix = false;
    } else if ((m = line.match(/^ERROR: (Testcase (?:index )?(\S+) (?:not found|out of bound)!?)$/)) !== null) {
      // runTestcase(): an unknown name or index; it never started, so it has no "Running" line.
      testcases.push({ ...newTestcase(m[2] ?? ''), status: 'not found', message: m[1] ?? null });
    } else if ((m = line.match(/^Waived:\s*(.*)$/)) !== null) {
      // A waived testcase has no "Running" line and the text does not name it (name '').
      testcases.push({ ...newTestcase(''), status: 'waived', message: m[1] === '' ? null : (m[1] ?? null) });
    } else if (cur !== null && cur.status === 'running' && (m = line.match(/^Error:\s*(.*)$/)) !== null) {
      cur.status = 'error';
      cur.message = m[1] ?? null;
    } else if ((m = line.match(/^SUM (\S+) (\S+)$/)) !== null) {
      const tc = testcases.findLast((x) => x.name === m?.[1]);
      const v = num(m[2]);
      if (tc === undefined || v === null) problems.push(`unmatched SUM line: ${line}`);
      else tc.sum = v;
    } else if (cur !== null && /\(row\).*\(column\)/.test(line)) {
      describe(cur, line);
      cur.status = 'passed';
      inMatrix = true;
    } else if (cur !== null && inMatrix && cur.columns.length === 0 && /^\d+(\s+\d+)*$/.test(line)) {
      cur.columns = line.split(/\s+/).map(Number);
    } else if (cur !== null && inMatrix && cur.columns.length > 0) {
      const [label, ...rest] = line.split(/\s+/);
      const cells = rest.map(cell);
      const n = num(label);
      if (n === null || cells.length !== cur.columns.length || cells.some((c) => c === undefined)) {
        problems.push(`${cur.name}: unrecognised matrix row: ${line}`);
      } else {
        cur.rowLabels.push(n);
        cur.matrix.push(cells.map((c) => c ?? null));
      }
    } else if (/^(Warning:|NOTE: You have chosen)/.test(line)) {
      warnings.push(line);
    }
    // Anything else (banner NOTE lines, the hostname, the echoed command) carries nothing we use.
  }
  return finish('text', head['nvbandwidth Version'] ?? null, head['Built from Git version'] ?? null,
    num(head['CUDA Runtime Version']), num(head['CUDA Driver Version']), head['Driver Version'] ?? null,
    devices, testcases, error, warnings, problems);
}

function finish(
  format: 'text' | 'json', version: string | null, gitVersion: string | null, runtime: number | null,
  driverCuda: number | null, driver: string | null, devices: NvbwDevice[], testcases: Tc[],
  error: string | null, warnings: string[], problems: string[],
): NvbandwidthResult {
  for (const tc of testcases) {
    if (tc.status === 'passed' && tc.matrix.length === 0) problems.push(`${tc.name}: description but no matrix rows`);
    if (tc.status === 'running' && error === null) problems.push(`${tc.name}: started but printed no result`);
    checkSum(tc, problems);
  }
  const measured = testcases.some((tc) => tc.status === 'passed' && tc.matrix.length > 0);
  return {
    format, version, gitVersion, cudaRuntimeVersion: runtime, cudaDriverVersion: driverCuda, driverVersion: driver,
    devices, testcases, error: error ?? (measured ? null : 'no results'), warnings, problems,
  };
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
/** JSON numbers as the text's: finite and not negative (json_output.cpp writes the same doubles `%.2f` prints). */
const jnum = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : typeof v === 'string' ? num(v) : null);

/** JSON layout of nvbandwidth json_output.cpp (NVIDIA/nvbandwidth @5d364368): everything under a root "nvbandwidth" key. */
function parseJson(output: string): NvbandwidthResult {
  const problems: string[] = [];
  const start = output.indexOf('{');
  const end = output.lastIndexOf('}');
  let doc: unknown = null;
  try {
    doc = JSON.parse(output.slice(start, end + 1));
  } catch (e) {
    problems.push(`JSON does not parse: ${e instanceof Error ? e.message : String(e)}`);
  }
  const root = isRecord(doc) && isRecord(doc['nvbandwidth']) ? doc['nvbandwidth'] : null;
  if (root === null) {
    if (problems.length === 0) problems.push('JSON has no "nvbandwidth" object');
    return finish('json', null, null, null, null, null, [], [], null, [], problems);
  }
  const devices: NvbwDevice[] = [];
  const list = root['GPU Device list'];
  for (const d of Array.isArray(list) ? list : []) {
    // "0: NVIDIA H100 80GB HBM3 (00000000:1b:00): (hostname)" (json_output.cpp recordDevices)
    const m = str(d)?.match(/^(\d+): (.+?)(?: \(([0-9a-fA-F]{8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2})\))?(?:: \(.*\))?$/);
    if (m) devices.push({ index: Number(m[1]), name: m[2] ?? '', pciBusId: m[3] ?? null });
    else problems.push(`unrecognised GPU Device list entry: ${JSON.stringify(d)}`);
  }
  const testcases: Tc[] = [];
  const raw = root['testcases'];
  for (const j of Array.isArray(raw) ? raw : []) {
    if (!isRecord(j)) continue;
    const tc = newTestcase(str(j['name']) ?? '');
    const status = (str(j['status']) ?? '').toLowerCase();
    tc.status = status === 'passed' ? 'passed' : status === 'waived' ? 'waived' : status === 'not found' ? 'not found'
      : status === 'running' ? 'running' : 'error';
    const desc = str(j['bandwidth_description']);
    if (desc !== null) describe(tc, desc);
    const matrix = j['bandwidth_matrix'];
    (Array.isArray(matrix) ? matrix : []).forEach((row: unknown, i) => {
      const cells = Array.isArray(row) ? row.map((c: unknown) => (typeof c === 'string' ? cell(c) : jnum(c) ?? undefined)) : [];
      if (cells.length === 0 || cells.some((c) => c === undefined)) problems.push(`${tc.name}: unrecognised matrix row ${i}`);
      else {
        tc.rowLabels.push(i);
        tc.matrix.push(cells.map((c) => c ?? null));
      }
    });
    tc.columns = tc.matrix[0]?.map((_, i) => i) ?? [];
    tc.sum = jnum(j['sum']);
    tc.message = str(j['error']);
    testcases.push(tc);
  }
  const warning = str(root['warning']);
  return finish('json', str(root['version']), str(root['git_version']), jnum(root['CUDA Runtime Version']),
    null, str(root['Driver Version']), devices, testcases, str(root['error']), warning === null ? [] : [warning], problems);
}

/** Parses either form; JSON is recognised by its first non-blank character. Never throws. */
export function parseNvbandwidth(output: string): NvbandwidthResult {
  return output.trimStart().startsWith('{') ? parseJson(output) : parseText(output);
}
