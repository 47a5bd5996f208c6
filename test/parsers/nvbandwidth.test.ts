// Tests the nvbandwidth parser: real text captures, reference captures read in place, and JSON built from json_output.cpp.
import t from 'tap';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseNvbandwidth, type NvbandwidthResult } from '../../src/parsers/nvbandwidth.js';
import { shared } from '../helpers/paths.js';

const fixture = (name: string): string =>
  readFileSync(fileURLToPath(new URL(`../fixtures/nvbandwidth/${name}`, import.meta.url)), 'utf8');

/** A testcase with no description line and no matrix, as the parser leaves one that printed none. */
const bare = (name: string, status: string, message: string | null = null) =>
  ({ name, status, description: null, method: null, rowKind: null, arrow: null, columnKind: null, unit: null, columns: [], rowLabels: [], matrix: [], sum: null, message });

const finite = (r: NvbandwidthResult): boolean =>
  r.testcases.every((tc) => tc.matrix.flat().every((v) => v === null || Number.isFinite(v)) && (tc.sum === null || Number.isFinite(tc.sum)));

t.test('A10 v0.5 text: header, device, 1x1 matrix, SUM', async (t) => {
  const r = parseNvbandwidth(fixture('a10_h2d_memcpy_ce_v0.5.txt'));
  t.equal(r.format, 'text');
  t.equal(r.version, 'v0.5');
  t.equal(r.gitVersion, 'v0.5-1-g4da7d7e');
  t.equal(r.cudaRuntimeVersion, 12040);
  t.equal(r.cudaDriverVersion, 12040);
  t.equal(r.driverVersion, '550.54.15');
  t.same(r.devices, [{ index: 0, name: 'NVIDIA A10', pciBusId: null }]);
  t.equal(r.testcases.length, 1);
  t.same(r.testcases[0], {
    name: 'host_to_device_memcpy_ce', status: 'passed', description: 'memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)', method: 'CE',
    rowKind: 'CPU', arrow: '->', columnKind: 'GPU', unit: 'GB/s', columns: [0], rowLabels: [0], matrix: [[25.17]], sum: 25.17, message: null,
  });
  t.equal(r.error, null);
  t.same(r.problems, []);
});

t.test('text failures: CUDA assert, unknown testcase, empty output, ragged row', async (t) => {
  const crash = parseNvbandwidth('Running host_to_device_memcpy_ce.\n[CUDA_ERROR_OUT_OF_MEMORY] out of memory in expression x in f() : a.cpp:1\n');
  t.match(crash.error, /^\[CUDA_ERROR_OUT_OF_MEMORY\]/);
  t.equal(crash.testcases[0]?.status, 'error');
  const missing = parseNvbandwidth('ERROR: Testcase nope not found!\n');
  t.same(missing.testcases, [bare('nope', 'not found', 'Testcase nope not found!')]);
  t.equal(missing.error, 'no results');
  t.equal(parseNvbandwidth('').error, 'no results', 'empty output is not a pass');
  const waived = parseNvbandwidth('Waived: \n');
  t.same(waived.testcases, [bare('', 'waived')]);
  const failed = parseNvbandwidth('Running x.\nError: buffer verification failed\n');
  t.same(failed.testcases, [bare('x', 'error', 'buffer verification failed')]);
  const ragged = parseNvbandwidth('Running x.\nmemcpy CE GPU(row) <- GPU(column) bandwidth (GB/s)\n 0 1\n0 N/A 5.00\n1 4.00\n');
  t.same(ragged.problems, ['x: unrecognised matrix row: 1 4.00']);
  t.same(ragged.testcases[0]?.matrix, [[null, 5]]);
  t.equal(ragged.testcases[0]?.arrow, '<-');
  const badSum = parseNvbandwidth('Running x.\nmemcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)\n 0\n0 1.00\n\nSUM x 9.00\n');
  t.same(badSum.problems, ['x: SUM 9 does not match the matrix total 1.00']);
});

t.test('JSON (constructed from json_output.cpp @5d364368): passed, N/A diagonal, waived', async (t) => {
  const r = parseNvbandwidth(fixture('constructed_json_2gpu_h2d_d2d_passed.json'));
  t.equal(r.format, 'json');
  t.equal(r.version, 'v0.8');
  t.equal(r.gitVersion, 'v0.8-0-g5d36436');
  t.equal(r.cudaRuntimeVersion, 12080);
  t.equal(r.cudaDriverVersion, null, 'the JSON writer has no driver CUDA version');
  t.equal(r.driverVersion, '570.133.20');
  t.same(r.devices, [
    { index: 0, name: 'NVIDIA H200', pciBusId: '00000000:1b:00' },
    { index: 1, name: 'NVIDIA H200', pciBusId: '00000000:43:00' },
  ]);
  const ce = (rowKind: string, rowLabels: number[], matrix: (number | null)[][], sum: number) => ({
    status: 'passed', description: `memcpy CE ${rowKind}(row) -> GPU(column) bandwidth (GB/s)`, method: 'CE', rowKind, arrow: '->', columnKind: 'GPU',
    unit: 'GB/s', columns: [0, 1], rowLabels, matrix, sum, message: null,
  });
  t.same(r.testcases, [
    { name: 'host_to_device_memcpy_ce', ...ce('CPU', [0], [[55.21, 55.19]], 110.4) },
    { name: 'device_to_device_memcpy_read_ce', ...ce('GPU', [0, 1], [[null, 370.12], [371.05, null]], 741.17) },
    bare('device_to_device_bidirectional_memcpy_read_sm', 'waived'),
  ]);
  t.ok(finite(r));
  t.equal(r.error, null);
  t.same(r.problems, []);
});

t.test('JSON: root error with a testcase left Running', async (t) => {
  const r = parseNvbandwidth(fixture('constructed_json_cuda_error_mid_test.json'));
  t.match(r.error, /^\[CUDA_ERROR_OUT_OF_MEMORY\]/);
  t.same(r.testcases, [bare('host_to_device_memcpy_ce', 'running')], 'left running: no matrix, no message');
});

t.test('JSON that is cut short or foreign is reported, not thrown', async (t) => {
  const cut = parseNvbandwidth('{\n   "nvbandwidth" : {\n      "version" : "v0.8",\n');
  t.equal(cut.error, 'no results');
  t.same(cut.problems, ['JSON does not parse: Unexpected end of JSON input'], 'JSON.parse\'s own message');
  t.same(parseNvbandwidth('{"other": 1}').problems, ['JSON has no "nvbandwidth" object']);
  const odd = parseNvbandwidth('{"nvbandwidth":{"testcases":[{"name":"x","status":"Passed","bandwidth_matrix":[["1.5","nan"]],"sum":"bad"}]}}');
  t.equal(odd.problems.length, 2, 'the row, and a pass with no rows left');
  t.equal(odd.problems[0], 'x: unrecognised matrix row 0');
  t.match(odd.problems[1], /^x: .*no matrix rows$/);
  t.equal(odd.testcases[0]?.sum, null);
  t.ok(finite(odd));
});

const REF = shared('corpus-reference/nvbandwidth');
t.test('reference captures (read in place, not copied)', { skip: !existsSync(REF) && `corpus-reference absent (${REF})` }, async (t) => {
  const read = (f: string): NvbandwidthResult => parseNvbandwidth(readFileSync(`${REF}/${f}`, 'utf8'));
  const azure = read('azure_ndh100v5_8xH100_d2d_read_ce_v0.4.txt');
  t.equal(azure.devices.length, 8);
  t.equal(azure.cudaRuntimeVersion, 12020);
  t.equal(azure.cudaDriverVersion, 12080);
  const d2d = azure.testcases[0];
  t.equal(d2d?.columns.length, 8);
  t.equal(d2d?.matrix.length, 8);
  t.ok(d2d?.matrix.every((row, i) => row[i] === null), 'N/A diagonal');
  t.equal(d2d?.matrix[0]?.[7], 371.67);
  t.equal(d2d?.sum, 20785.58);
  t.same(azure.problems, [], 'SUM agrees with the cells');

  const write = read('nvidia_readme_8gpu_d2d_write_ce_matrix.txt');
  t.match(write.testcases[0], { arrow: /^<-$/, status: /^passed$/ });
  t.equal(write.testcases[0]?.sum, null, 'no SUM line');
  t.equal(write.testcases[0]?.matrix[6]?.[0], 274.89);
  t.equal(write.testcases[0]?.matrix[3]?.[3], 0, 'old builds print 0.00 on the diagonal; kept as printed');

  t.same(read('nvidia_readme_8gpu_h2d_bidir_ce_row.txt').testcases, [{
    name: 'host_to_device_bidirectional_memcpy_ce', status: 'passed', description: 'memcpy CE CPU(row) <-> GPU(column) bandwidth (GB/s)', method: 'CE',
    rowKind: 'CPU', arrow: '<->', columnKind: 'GPU', unit: 'GB/s', columns: [0, 1, 2, 3, 4, 5, 6, 7], rowLabels: [0],
    matrix: [[18.56, 18.37, 19.37, 19.59, 18.71, 18.79, 18.46, 18.61]], sum: null, message: null,
  }]);
  t.equal(read('nvidia_readme_8gpu_h2d_ce_row.txt').testcases[0]?.matrix[0]?.[4], 26.19);

  const nhc = read('azure_ndh100v5_nhc_check_gpu_bw_failure_dmabuf_enomem.txt');
  t.equal(nhc.error, 'no results', 'a wrapper failure message is not an nvbandwidth result');
  t.same(nhc.testcases, []);
});

t.test('a cell or SUM that %.2f never prints (sign, exponent) is not a number: no result, never a measurement', async (t) => {
  const a10 = fixture('a10_h2d_memcpy_ce_v0.5.txt');
  for (const v of ['-5.00', '1e308', '-0', '1E-300', '+25.17', 'Infinity']) {
    const r = parseNvbandwidth(a10.replaceAll('25.17', v));
    t.equal(r.error, 'no results', `cell ${v}`);
    t.same(r.testcases[0]?.matrix, [], `cell ${v}: no matrix row`);
    t.same(r.problems, [`host_to_device_memcpy_ce: unrecognised matrix row: 0     ${v}`, `unmatched SUM line: SUM host_to_device_memcpy_ce ${v}`, 'host_to_device_memcpy_ce: description but no matrix rows'], `cell ${v}: said`);
  }
  t.same(parseNvbandwidth(a10.replaceAll('25.17', '0.00')).testcases[0]?.matrix, [[0]], '0.00 is printed output: the parser keeps it (the probe refuses it)');
  const json = fixture('constructed_json_2gpu_h2d_d2d_passed.json');
  for (const v of ['-3.5', '1e999', '"-3.50"', '"1e308"']) {
    const r = parseNvbandwidth(json.replace('[ [ "55.21", "55.19" ] ]', `[ [ ${v}, "55.19" ] ]`));
    t.same(r.testcases[0]?.matrix, [], `JSON cell ${v}: no row`);
    t.same(r.problems.slice(0, 1), ['host_to_device_memcpy_ce: unrecognised matrix row 0'], `JSON cell ${v}: said`);
  }
  t.same(parseNvbandwidth(json.replace('[ [ "55.21", "55.19" ] ]', '[ [ 55.21, "55.19" ] ]')).testcases[0]?.matrix, [[55.21, 55.19]], 'a JSON number is a cell');
});
