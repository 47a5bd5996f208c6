// Pure parser of perftest `ib_write_bw` (and other `* BW Test`) output: header, GPU buffer info, result rows, tool failures.

/**
 * Bandwidth unit of the table: `--report_gbits` prints Gb/sec, otherwise MB/sec (perftest's MB is 2^20 bytes), headed
 * MiB/sec since perftest 24.07 (1d202bb): the same unit.
 */
export type IbBwUnit = 'Gb/s' | 'MB/s';

/** The failure perftest itself reported, by class; the tool's own lines are kept in `errorLines`. */
export type IbWriteBwError =
  | 'no RDMA device' // no device at all (no driver, container without /dev/infiniband)
  | 'RDMA device not found' // `-d NAME` names a device that does not exist
  | 'GPU buffer failed' // CUDA init, DMA-BUF or GPU allocation failed
  | 'resource setup failed' // context, PD, MR, CQ or QP creation failed
  | 'connection failed' // out-of-band socket or rdma_cm connection failed
  | 'run failed' // completion errors during the run
  | 'below limit' // --limit_bw / --limit_msgrate check failed
  | 'usage error' // perftest rejected its arguments
  | 'no results' // nothing recognisable as a result table
  | 'tool failed'; // non-zero exit with no message we recognise

export interface IbWriteBwRow {
  readonly bytes: number;
  readonly iterations: number;
  /** null when perftest said it would not measure the peak (duration mode, `-D`), where it prints 0.00. */
  readonly bwPeak: number | null;
  readonly bwAverage: number;
  /** Mpps. */
  readonly msgRate: number;
}

export interface IbWriteBwGpu {
  /** `--use_cuda=N` device picked ("Picking device No. N"). */
  readonly index: number | null;
  /** Bus:device as perftest prints it (`41:00`), from the "CUDA device N: PCIe address is" list. */
  readonly pciAddress: string | null;
  /**
   * The bus:device of every CUDA device perftest listed, in its order. perftest prints no PCI domain (`%02X:%02X`,
   * src/cuda_memory.c): GPUs in different domains at the same bus:device (Hyper-V vPCI) list alike.
   */
  readonly listed: readonly string[];
  readonly name: string | null;
  /** true: DMA-BUF in use (perftest printed "using DMA-BUF ..." or the echoed command has --use_cuda_dmabuf); null: cannot tell. */
  readonly dmabuf: boolean | null;
}

export interface IbWriteBwResult {
  /** Title without " BW Test" (`RDMA_Write`). */
  readonly test: string | null;
  readonly device: string | null;
  readonly transport: string | null;
  readonly linkType: string | null;
  readonly connection: string | null;
  readonly qps: number | null;
  readonly mtu: number | null;
  /** Message size when the run has a single size (no `-a` sweep); otherwise null. */
  readonly msgSize: number | null;
  /** Iterations when the run has a single size; otherwise null. */
  readonly iterations: number | null;
  readonly unit: IbBwUnit | null;
  readonly rows: readonly IbWriteBwRow[];
  readonly gpu: IbWriteBwGpu | null;
  /** Every header `key : value` pair as printed (`Data ex. method` → `rdma_cm`). */
  readonly header: Readonly<Record<string, string>>;
  /** Tool warnings (WARNING lines, CPU frequency conflicts, MTU changes); not failures. */
  readonly warnings: readonly string[];
  readonly error: IbWriteBwError | null;
  readonly errorLines: readonly string[];
  /** Things this parser could not make sense of; never silently dropped. */
  readonly problems: readonly string[];
}

/** perftest's failure messages (perftest src/*.c, Debian perftest 4.5+0.17), first match wins. */
const FAILURES: readonly (readonly [RegExp, IbWriteBwError])[] = [
  [/^IB device \S+ not found/, 'RDMA device not found'],
  [/^(Did not detect devices|If device exists, check if driver is up|No IB devices found|Unable to find the Infiniband\/RoCE device)/, 'no RDMA device'],
  [/^(DMA-BUF is not supported|Couldn't init GPU context|cuInit\(0\) returned|There are no available device\(s\) that support CUDA|No such device ID|cuMemAlloc error|cuMemGetHandleForAddressRange error|cuDeviceGetByPCIBusId failed)/, 'GPU buffer failed'],
  [/^(Couldn't get context for the device|Couldn't allocate context|Couldn't create IB resources|Failed to create QP|Unable to create the resources|Cannot Allocate|Couldn't allocate MR|Couldn't create completion channel)/, 'resource setup failed'],
  [/^(Couldn't connect to|Unable to open file descriptor for socket|Unable to init the socket connection|Unable to set up socket connection|Unable to Connect the HCA|Failed to connect RDMA CM|Failed to create RDMA CM|Unable to perform rdma_(client|server)|Failed to exchange data between server and clients|Couldn't listen to port|Failed to bind socket|Unable to connect \(retries)/, 'connection failed'],
  [/^(Completion with error|Failed status|Bad wc status|Poll send CQ error|Failed to complete run_iter_bw|Error occurred while running infinitely)/, 'run failed'],
  [/^Error: (BW result|Msg rate)\s+is below/, 'below limit'],
  [/^(Parser function exited with Error|Invalid Command or flag)/, 'usage error'],
];

const TABLE_HEAD = /^#bytes\s+#iterations\s+BW peak\[(\w+)\/sec\]\s+BW average\[(\w+)\/sec\]\s+MsgRate\[Mpps\]$/;
const DASHES = /^-{20,}$/;
const MAX_HEADER_LINE = 1024;
const NUMBER = /^\d+(\.\d+)?$/;

function num(token: string | undefined): number | null {
  if (token === undefined || !NUMBER.test(token)) return null;
  const n = Number(token);
  return Number.isFinite(n) ? n : null;
}

function unitOf(u: string): IbBwUnit | null {
  if (u === 'Gb') return 'Gb/s';
  if (u === 'MB' || u === 'MiB') return 'MB/s';
  return null;
}

/** `key : value` pairs on one header line; perftest puts two per line, separated by tabs or runs of spaces. */
function headerPairs(line: string): [string, string][] {
  const out: [string, string][] = [];
  for (const m of line.matchAll(/([A-Za-z][A-Za-z0-9 .*_()/-]*?)\s*:\s*(\S+)/g)) {
    if (m[1] !== undefined && m[2] !== undefined) out.push([m[1].trim(), m[2]]);
  }
  return out;
}

interface GpuAcc {
  index: number | null;
  addresses: Map<number, string>;
  name: string | null;
  dmabuf: boolean | null;
  seen: boolean;
}

/** Lines about the CUDA buffer (perftest src/cuda_memory.c); true when the line was one of them. */
function gpuLine(line: string, g: GpuAcc): boolean {
  let m: RegExpMatchArray | null;
  if ((m = line.match(/^CUDA device (\d+): PCIe address is ([0-9A-Fa-f]{2}:[0-9A-Fa-f]{2})$/)) !== null) {
    g.addresses.set(Number(m[1]), m[2] ?? '');
  } else if ((m = line.match(/^Picking device No\. (\d+)$/)) !== null) {
    g.index = Number(m[1]);
  } else if ((m = line.match(/^\[pid = \d+, dev = (\d+)\] device name = \[(.*)\]$/)) !== null) {
    g.name = m[2] ?? null;
  } else if (/^using DMA-BUF for GPU buffer/.test(line)) {
    g.dmabuf = true;
  } else if (!/^(initializing CUDA|Listing all CUDA devices|creating CUDA Ctx|making it the current CUDA Ctx|CUDA device integrated:|cuMemAlloc\(\) of a|allocated GPU buffer|deallocating (RX )?GPU buffer|destroying current CUDA Ctx)/.test(line)) {
    return false;
  }
  g.seen = true;
  return true;
}

export function parseIbWriteBw(output: string, exitCode: number | null = null): IbWriteBwResult {
  const header: Record<string, string> = {};
  const rows: IbWriteBwRow[] = [];
  const warnings: string[] = [];
  const errorLines: string[] = [];
  const problems: string[] = [];
  const g: GpuAcc = { index: null, addresses: new Map(), name: null, dmabuf: null, seen: false };
  let error: IbWriteBwError | null = null;
  let test: string | null = null;
  let unit: IbBwUnit | null = null;
  let peakMeasured = true;
  let section: 'pre' | 'header' | 'addresses' | 'table' | 'post' = 'pre';

  for (const raw of output.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '') continue;
    // A shell-echoed command line (fixtures and transcripts): only the DMA-BUF flag matters here.
    if (/(^|[\s/#$])ib_\w+_bw\s/.test(line) && /--use_cuda/.test(line)) {
      if (/--use_cuda_dmabuf/.test(line)) g.dmabuf = true;
      continue;
    }
    const failure = FAILURES.find(([re]) => re.test(line));
    if (failure !== undefined) {
      error ??= failure[1];
      errorLines.push(line.slice(0, 500));
      continue;
    }
    if (/^WARNING: BW peak won't be measured/.test(line)) peakMeasured = false;
    if (/^WARNING\b|^Conflicting CPU frequency|^Requested mtu is higher|^Changing to active mtu|^Perftest doesn't support/.test(line)) {
      warnings.push(line.slice(0, 500));
      continue;
    }
    if (gpuLine(line, g)) continue;
    const title = line.match(/^(\S+) BW Test$/);
    if (title !== null) {
      test = title[1] ?? null;
      section = 'header';
      continue;
    }
    if (DASHES.test(line)) {
      // The closing dash line is sometimes one character short: every long run of dashes ends a section.
      if (section === 'header') section = 'addresses';
      else if (section === 'table') section = 'post';
      continue;
    }
    const head = line.match(TABLE_HEAD);
    if (head !== null) {
      const peak = unitOf(head[1] ?? '');
      const avg = unitOf(head[2] ?? '');
      if (peak === null || avg === null || peak !== avg) problems.push(`unexpected bandwidth unit in table header: ${line}`);
      unit = avg;
      section = 'table';
      continue;
    }
    if (section === 'header') {
      // perftest's header lines are under 100 characters; headerPairs' lazy key is quadratic in a line with no colon
      // (4 MiB of output is taken: hours, with the Epilog's deadline unable to fire), so a longer one is not read.
      if (line.length > MAX_HEADER_LINE) problems.push(`a header line of ${line.length} characters (perftest writes under ${MAX_HEADER_LINE}): not read`);
      else for (const [k, v] of headerPairs(line)) header[k] = v;
      continue;
    }
    if (section === 'table') {
      const t = line.split(/\s+/);
      const [bytes, iters, peak, avg, rate] = [num(t[0]), num(t[1]), num(t[2]), num(t[3]), num(t[4])];
      if (t.length !== 5 || bytes === null || iters === null || peak === null || avg === null || rate === null) {
        problems.push(`unrecognised line in results table: ${line.slice(0, 200)}`);
        continue;
      }
      rows.push({ bytes, iterations: iters, bwPeak: peakMeasured ? peak : null, bwAverage: avg, msgRate: rate });
      continue;
    }
    // Everything else (server banners, addresses, GIDs, the prompt) carries nothing we use.
  }

  if (unit !== null && rows.length === 0 && error === null) problems.push('results table has no rows');
  if (error === null && rows.length === 0) error = exitCode !== null && exitCode !== 0 ? 'tool failed' : 'no results';
  if (error === null && exitCode !== null && exitCode !== 0) error = 'tool failed';
  if (exitCode === 0 && errorLines.length > 0) problems.push('exit status 0 but perftest printed failure lines');

  const single = rows.length === 1 ? rows[0] : undefined;
  const int = (k: string): number | null => num(header[k]?.replace(/\[B\]$/, ''));
  const gpu: IbWriteBwGpu | null = g.seen
    ? {
        index: g.index,
        pciAddress: g.index !== null ? (g.addresses.get(g.index) ?? null) : null,
        listed: [...g.addresses.entries()].sort(([a], [b]) => a - b).map(([, a]) => a),
        name: g.name,
        dmabuf: g.dmabuf,
      }
    : null;
  return {
    test,
    device: header['Device'] ?? null,
    transport: header['Transport type'] ?? null,
    linkType: header['Link type'] ?? null,
    connection: header['Connection type'] ?? null,
    qps: int('Number of qps'),
    mtu: int('Mtu'),
    msgSize: single?.bytes ?? null,
    iterations: single?.iterations ?? null,
    unit,
    rows,
    gpu,
    header,
    warnings,
    error,
    errorLines,
    problems,
  };
}
