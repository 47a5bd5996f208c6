// /proc/driver/nvidia/gpus/<BDF>/information and /proc/self/status placement lines, on the real H200 capture.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { parseGpuInformation } from '../../src/parsers/nvidia-gpu.js';
import { parseAllowed } from '../../src/parsers/proc-status.js';
import { H200 } from '../helpers/paths.js';

const INFO = readFileSync(path.join(H200, 'proc/driver/nvidia/gpus/0000:00:06.0/information'), 'utf8');
const STATUS = readFileSync(path.join(H200, 'proc/self/status'), 'utf8');

t.test('the real H200 information file: minor 0 at 0000:00:06.0', async (t) => {
  t.same(parseGpuInformation(INFO), { ok: true, value: { minor: 0, bdf: '0000:00:06.0', model: 'NVIDIA H200' } });
});

t.test('upper-case bus ids (as nvidia-smi prints them) are lowered to the sysfs name', async (t) => {
  t.same(parseGpuInformation(INFO.replace('0000:00:06.0', '0000:9A:00.0')), { ok: true, value: { minor: 0, bdf: '0000:9a:00.0', model: 'NVIDIA H200' } });
});

t.test('malformed: no minor, a minor above 254, no bus location, an 8-digit domain', async (t) => {
  t.same(parseGpuInformation(INFO.replace(/^Device Minor:.*$/m, '')), { ok: false, error: 'no Device Minor line' });
  t.same(parseGpuInformation(INFO.replace(/Device Minor: \t 0/, 'Device Minor: \t 255')), { ok: false, error: 'Device Minor "255" is no GPU\'s (the module\'s GPUs are 0 to 254)' });
  t.same(parseGpuInformation(INFO.replace(/^Bus Location:.*$/m, '')), { ok: false, error: 'no Bus Location line' });
  t.same(parseGpuInformation(INFO.replace('0000:00:06.0', '00000000:00:06.0')), { ok: false, error: 'Bus Location "00000000:00:06.0" is no PCI address' });
  t.same(parseGpuInformation(''), { ok: false, error: 'no Device Minor line' });
});

t.test('the real H200 /proc/self/status: CPUs 0-15, memory node 0', async (t) => {
  t.same(parseAllowed(STATUS), { ok: true, value: { cpus: [[0, 15]], cpuList: '0-15', mems: [[0, 0]], memList: '0' } });
});

t.test('status: missing or malformed lists are errors, never an empty placement', async (t) => {
  t.same(parseAllowed(STATUS.replace(/^Cpus_allowed_list:.*$/m, '')), { ok: false, error: 'no Cpus_allowed_list line' });
  t.same(parseAllowed(STATUS.replace(/^Mems_allowed_list:.*$/m, '')), { ok: false, error: 'no Mems_allowed_list line' });
  t.same(parseAllowed(STATUS.replace(/^Cpus_allowed_list:.*$/m, 'Cpus_allowed_list:\t0-x')), { ok: false, error: 'Cpus_allowed_list: unexpected cpulist part "0-x"' });
  t.same(parseAllowed(STATUS.replace(/^Mems_allowed_list:.*$/m, 'Mems_allowed_list:\t')), { ok: false, error: 'empty Cpus_allowed_list or Mems_allowed_list' });
  t.same(parseAllowed(STATUS.replace(/^Cpus_allowed_list:.*$/m, 'Cpus_allowed_list:\t')), { ok: false, error: 'empty Cpus_allowed_list or Mems_allowed_list' });
  t.same(parseAllowed(STATUS.replace(/^Cpus_allowed_list:.*$/m, 'Cpus_allowed_list:\t0,2,4-5')), { ok: true, value: { cpus: [[0, 0], [2, 2], [4, 5]], cpuList: '0,2,4-5', mems: [[0, 0]], memList: '0' } });
});
