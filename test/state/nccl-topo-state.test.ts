// The ncclTopo pieces of the per-job state and the baseline: the signed record's field, the file beside prolog.json,
// the class flag in the schema, and the sample tag the Epilog writes.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { validatorFor } from '../../src/schema.js';
import { asPrologState } from '../../src/state/read.js';
import { writePrologState } from '../../src/state/prolog.js';
import type { PrologState } from '../../src/state/types.js';
import { toSample } from '../../src/samples/sample.js';

const STATE: PrologState = {
  job: '12', uid: process.getuid?.() ?? 0, node: 'gpu001', time: '2026-12-03T09:00:00.000Z', memlock: null, memlockMin: null,
  hcas: [], uverbs: [], nvidia: [], gpus: ['0000:1a:00.0'], jobGpus: null,
};

t.test('the signed record: ncclTopo optional, checked when present', async (t) => {
  t.same(asPrologState(STATE), STATE, 'absent: an older Prolog or a class without it');
  const withTopo = { ...STATE, ncclTopo: { file: 'nccl-topo.xml', paths: { '0000:1a:00.0': '/sys/devices/pci0000:17/0000:17:00.0/0000:1a:00.0' } } };
  t.same(asPrologState(withTopo), withTopo);
  t.equal(asPrologState({ ...STATE, ncclTopo: { file: 'x' } }), 'payload field ncclTopo is malformed');
  t.equal(asPrologState({ ...STATE, ncclTopo: { file: 'x', paths: { a: 1 } } }), 'payload field ncclTopo is malformed');
});

t.test('the file is written beside prolog.json, read-only, before the directory is handed over', async (t) => {
  const dir = t.testdir();
  const stateDir = path.join(dir, 'state');
  writePrologState(stateDir, STATE, null, [{ name: 'nccl-topo.xml', data: '<system version="1"/>\n' }]);
  const f = path.join(stateDir, 'job-12', 'nccl-topo.xml');
  t.equal(fs.readFileSync(f, 'utf8'), '<system version="1"/>\n');
  t.equal(fs.statSync(f).mode & 0o777, 0o444);
  t.same(fs.readdirSync(path.join(stateDir, 'job-12')).sort(), ['nccl-topo.xml', 'prolog.json']);
});

t.test('the baseline class flag', async (t) => {
  const validate = await validatorFor('baseline');
  const cls = { name: 'c', match: ['*'], platform: 'bare-metal', mechanism: 'any', memlockMin: 'unlimited', iommu: 'any', acsRedirectAllowed: false, gpuSpeedStrict: false, devices: [], paths: [] };
  t.same(validate({ version: 1, classes: [{ ...cls, ncclTopo: true }] }), []);
  t.same(validate({ version: 1, classes: [cls] }), [], 'optional');
  t.not(validate({ version: 1, classes: [{ ...cls, ncclTopo: 'yes' }] }).length, 0, 'a boolean only');
});

t.test('a sample may say whether the job ran with the file', async (t) => {
  const s = {
    ts: 1, node: 'n', job: '1', probe: 'p', recipeHash: 'h', gpu: null, nic: 'mlx5_0', direction: 'bidir', bytes: 1, value: 1, unit: 'Gb/s',
    recipe: { tool: 'ib_write_bw', args: [], msgSize: null, iterations: null, durationS: null, qps: null, numaNode: null, direction: 'bidir' },
  };
  t.not(toSample(s), null);
  t.not(toSample({ ...s, ncclTopo: true }), null);
  t.equal(toSample({ ...s, ncclTopo: 'yes' }), null);
});
