// Tests the ib_write_bw parser on verbatim perftest captures (test/fixtures/ib_write_bw/SOURCES.md) and a real failure.
import t from 'tap';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseIbWriteBw, type IbWriteBwResult } from '../../src/parsers/ib-write-bw.js';
import { shared } from '../helpers/paths.js';

const fixture = (name: string): string =>
  readFileSync(fileURLToPath(new URL(`../fixtures/ib_write_bw/${name}`, import.meta.url)), 'utf8');

/** No number anywhere in a result is NaN or infinite. */
function allFinite(r: IbWriteBwResult): boolean {
  const nums: (number | null)[] = [r.qps, r.mtu, r.msgSize, r.iterations];
  for (const row of r.rows) nums.push(row.bytes, row.iterations, row.bwPeak, row.bwAverage, row.msgRate);
  return nums.every((n) => n === null || Number.isFinite(n));
}

t.test('SR-IOV RoCE host run: Gb/sec, tabs in the row, closing dash line one short', async (t) => {
  const r = parseIbWriteBw(fixture('sriov_roce_host_client_92gbps.txt'), 0);
  t.equal(r.test, 'RDMA_Write');
  t.equal(r.device, 'mlx5_8');
  t.equal(r.transport, 'IB');
  t.equal(r.linkType, 'Ethernet');
  t.equal(r.connection, 'RC');
  t.equal(r.qps, 1);
  t.equal(r.mtu, 1024);
  t.equal(r.unit, 'Gb/s');
  t.same(r.rows, [{ bytes: 65536, iterations: 5000, bwPeak: 92.56, bwAverage: 92.56, msgRate: 0.176544 }]);
  t.equal(r.msgSize, 65536);
  t.equal(r.iterations, 5000);
  t.equal(r.header['rdma_cm QPs'], 'ON');
  t.equal(r.header['Data ex. method'], 'rdma_cm');
  t.equal(r.gpu, null, 'host memory run: no GPU block');
  t.equal(r.error, null);
  t.same(r.problems, []);
});

t.test('T4 CUDA run: GPU picked, PCIe address, relaxed-ordering warnings kept as warnings', async (t) => {
  const r = parseIbWriteBw(fixture('sriov_roce_t4_cuda_client_10gbps_slow.txt'));
  t.equal(r.device, 'mlx5_4');
  t.same(r.gpu, { index: 0, pciAddress: '82:00', listed: ['82:00'], name: 'Tesla T4', dmabuf: null });
  t.equal(r.rows[0]?.bwAverage, 10.5);
  t.equal(r.rows[0]?.bwPeak, 10.68);
  t.equal(r.header['ibv_wr* API'], 'ON');
  t.equal(r.header['PCIe relax order'], 'ON');
  t.equal(r.warnings.length, 2);
  t.same(r.warnings, ['WARNING: CPU is not PCIe relaxed ordering compliant.', 'WARNING: You should disable PCIe RO with `--disable_pcie_relaxed` for both server and client.']);
  t.equal(r.error, null);
  t.same(r.problems, []);
});

t.test('two GPUs listed, the second picked: its own address, both listed in device order', async (t) => {
  // The T4 capture as perftest prints a node with two CUDA devices (cuda_memory.c lists each, then the one picked).
  const text = fixture('sriov_roce_t4_cuda_client_10gbps_slow.txt').replace('CUDA device 0: PCIe address is 82:00\n', 'CUDA device 0: PCIe address is 82:00\nCUDA device 1: PCIe address is 83:00\n').replace('Picking device No. 0', 'Picking device No. 1');
  t.same(parseIbWriteBw(text, 0).gpu, { index: 1, pciAddress: '83:00', listed: ['82:00', '83:00'], name: 'Tesla T4', dmabuf: null });
});

t.test('the exit status: non-zero fails a run whose table printed; 0 beside a failure line is said', async (t) => {
  const host = fixture('sriov_roce_host_client_92gbps.txt');
  const failed = parseIbWriteBw(host, 1);
  t.same([failed.error, failed.rows.length, failed.problems], ['tool failed', 1, []], 'its figures are not a measurement');
  const torn = parseIbWriteBw(`${host}\nCompletion with error at client\n`, 0);
  t.same([torn.error, torn.errorLines, torn.problems], ['run failed', ['Completion with error at client'], ['exit status 0 but perftest printed failure lines']]);
});

t.test('OpenShift T4 sweep (-a): 23 rows from 2 B to 8 MiB, 2 QPs, 6-decimal small sizes', async (t) => {
  const r = parseIbWriteBw(fixture('openshift_t4_cuda_client_sweep_23gbps.txt'), 0);
  t.equal(r.rows.length, 23);
  t.equal(r.qps, 2);
  t.equal(r.msgSize, null, 'a sweep has no single message size');
  t.equal(r.iterations, null);
  t.same(r.rows[0], { bytes: 2, iterations: 10000, bwPeak: 0.044399, bwAverage: 0.044359, msgRate: 2.772442 });
  t.same(r.rows.at(-1), { bytes: 8388608, iterations: 10000, bwPeak: 23.01, bwAverage: 22.99, msgRate: 0.000343 });
  t.ok(r.rows.every((row, i) => row.bytes === 2 ** (i + 1)), 'sizes double');
  t.equal(r.header['PCIe relax order'], 'Unsupported');
  t.same(r.gpu, { index: 0, pciAddress: '41:00', listed: ['41:00'], name: 'Tesla T4', dmabuf: null });
  t.ok(allFinite(r));
  t.same(r.problems, []);
});

t.test('Soft-RoCE excerpt: MB/sec, CPU frequency line inside the table, no leading dashes', async (t) => {
  const r = parseIbWriteBw(fixture('softroce_rxe0_host_ib_write_bw_110MBps_excerpt.txt'));
  t.equal(r.device, 'rxe0');
  t.equal(r.unit, 'MB/s');
  t.same(r.rows, [{ bytes: 65536, iterations: 5000, bwPeak: 110.31, bwAverage: 110.28, msgRate: 0.001764 }]);
  t.same(r.warnings, ['Conflicting CPU frequency values detected: 1200.000000 != 3591.635000. CPU Frequency is not max.']);
  t.equal(r.error, null);
  t.same(r.problems, []);
});

t.test('perftest 24.07 on (1d202bb "Display proper unit for MiB/sec results"): the same 2^20-byte unit headed MiB/sec', async (t) => {
  // The Soft-RoCE excerpt with its table header as RESULT_FMT prints it since then (perftest_parameters.h), the one change.
  const text = fixture('softroce_rxe0_host_ib_write_bw_110MBps_excerpt.txt').replace('BW peak[MB/sec]    BW average[MB/sec]', 'BW peak[MiB/sec]    BW average[MiB/sec]');
  const r = parseIbWriteBw(text, 0);
  t.equal(r.unit, 'MB/s');
  t.same(r.rows, [{ bytes: 65536, iterations: 5000, bwPeak: 110.31, bwAverage: 110.28, msgRate: 0.001764 }]);
  t.equal(r.error, null);
  t.same(r.problems, []);
});

t.test('real Debian ib_write_bw with no RDMA device: failure classified, tool lines kept', async (t) => {
  const meta = JSON.parse(fixture('real_no_rdma_device_debian.json')) as { exitCode: number; stdout: string; stderr: string };
  const text = fixture('real_no_rdma_device_debian.txt');
  t.equal(meta.stdout + meta.stderr, text, 'the .txt is the captured stdout+stderr, byte for byte');
  const r = parseIbWriteBw(text, meta.exitCode);
  t.equal(meta.exitCode, 1);
  t.equal(r.error, 'no RDMA device');
  t.same(r.errorLines, [
    'Did not detect devices',
    'If device exists, check if driver is up',
    'Unable to find the Infiniband/RoCE device',
  ]);
  t.same(r.rows, []);
  t.equal(r.unit, null);
  t.equal(r.device, null);
});

t.test('failures perftest prints, by class (perftest source strings)', async (t) => {
  const cases: [string, string][] = [
    ['IB device mlx5_9 not found\n Unable to find the Infiniband/RoCE device\n', 'RDMA device not found'],
    ['initializing CUDA\nDMA-BUF is not supported on this GPU\nCouldn\'t init GPU context: 1\n', 'GPU buffer failed'],
    ['Couldn\'t connect to 10.0.0.2:18515\n Unable to open file descriptor for socket connection\n', 'connection failed'],
    [' Completion with error at client\n Failed status 12: wr_id 0 syndrom 0x81\n', 'run failed'],
    [' Failed to create QP.\n Couldn\'t create IB resources\n', 'resource setup failed'],
    ['Error: BW result is below bw limit\n', 'below limit'],
    [' Parser function exited with Error\n', 'usage error'],
  ];
  for (const [text, want] of cases) t.equal(parseIbWriteBw(text, 1).error, want, want);
  t.equal(parseIbWriteBw('', 0).error, 'no results', 'empty output is not a pass');
  t.equal(parseIbWriteBw('segfault\n', 139).error, 'tool failed');
});

t.test('malformed rows are reported, never returned as NaN; duration mode peak is null', async (t) => {
  const text = [
    ' WARNING: BW peak won\'t be measured in this run.',
    '                    RDMA_Write BW Test',
    ' Device         : mlx5_1',
    '-'.repeat(87),
    ' #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]',
    ' 65536      10384867         0.00               181.46 \t\t     0.346100',
    ' 65536      5000             -nan               inf                0.0',
    '-'.repeat(86),
  ].join('\n');
  const r = parseIbWriteBw(text, 0);
  t.same(r.rows, [{ bytes: 65536, iterations: 10384867, bwPeak: null, bwAverage: 181.46, msgRate: 0.3461 }]);
  t.equal(r.problems.length, 1);
  t.match(r.problems[0], /unrecognised line in results table/);
  t.ok(allFinite(r));
  const mixed = parseIbWriteBw(' #bytes #iterations BW peak[Gb/sec] BW average[MB/sec] MsgRate[Mpps]\n', 0);
  t.same(mixed.problems, ['unexpected bandwidth unit in table header: #bytes #iterations BW peak[Gb/sec] BW average[MB/sec] MsgRate[Mpps]', 'results table has no rows']);
});

const REF = shared('corpus-reference/ib_write_bw');
t.test('reference captures (read in place, not copied)', { skip: !existsSync(REF) && `corpus-reference absent (${REF})` }, async (t) => {
  for (const side of ['client', 'server']) {
    const r = parseIbWriteBw(readFileSync(`${REF}/openshift_a40_cuda_dmabuf_${side}_16qp_181gbps.txt`, 'utf8'));
    t.equal(r.qps, 16, side);
    t.equal(r.device, 'mlx5_1');
    t.equal(r.header['TOS'], '41');
    t.equal(r.header['Using DDP'], 'OFF');
    t.same(r.rows, [{ bytes: 65536, iterations: 10384867, bwPeak: null, bwAverage: 181.46, msgRate: 0.3461 }]);
    t.equal(r.gpu?.name, 'NVIDIA A40');
    t.equal(r.gpu?.dmabuf, true, 'echoed command has --use_cuda_dmabuf');
    t.equal(r.gpu?.pciAddress, side === 'client' ? 'E1:00' : '61:00');
    t.ok(r.warnings.some((w) => /Requested mtu is higher/.test(w)));
    t.equal(r.error, null);
    t.same(r.problems, []);
  }
});

t.test('a header line of 1 MiB with no colon (not perftest): said and not read, not parsed for hours; long lines said cut', async (t) => {
  const words = 'ab '.repeat(350_000).trim();
  const r = parseIbWriteBw(` RDMA_Write BW Test\n ${words}\n`, 0);
  t.same(r.problems, ['a header line of 1049999 characters (perftest writes under 1024): not read'], 'before: the lazy key tried every start, quadratic (10 s for 64 KiB here, so about 40 minutes for this one)');
  const table = ` RDMA_Write BW Test\n${'-'.repeat(40)}\n#bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n${words}\n`;
  t.same(parseIbWriteBw(table, 0).problems.map((p) => p.length), ['unrecognised line in results table: '.length + 200, 'results table has no rows'.length], 'a table line is said by its first 200 characters');
});
