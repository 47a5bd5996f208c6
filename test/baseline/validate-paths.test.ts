// `baseline validate` (and every load) refuses a GPU↔NIC pair naming a device its class does not have, warns for a
// class with GPUs and adapters but no pair, and names the values an enum or a const allows; capture writes no such pair.
import t from 'tap';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { captureClass } from '../../src/baseline/capture.js';
import { FsHost } from '../../src/host/fs-host.js';
import { buildInventory } from '../../src/inventory/build.js';
import { baselineOf, HGX } from '../checks/_trees.js';
import { base, tree } from '../compare/trees.js';
import { cli } from '../helpers/cli.js';

const write = (dir: string, cls: object): string => {
  const file = path.join(dir, 'b.json');
  writeFileSync(file, JSON.stringify({ version: 1, classes: [cls] }));
  return file;
};

t.test('a pair naming no GPU or adapter of the class is refused, where it is said', async (t) => {
  const cls = await baselineOf(HGX);
  const dir = t.testdir({});
  const gpus = cls.devices.filter((d) => d.role === 'gpu').map((d) => d.bdf);
  const nics = cls.devices.filter((d) => d.role === 'nic').map((d) => d.name);
  t.equal(cls.paths.length, 64, 'the HGX class: 8 GPUs x 8 adapters');
  const typo = write(dir, { ...cls, paths: cls.paths.map((p, i) => (i === 3 ? { ...p, gpu: '0000:81:00.0' } : p)) });
  const r = cli(['baseline', 'validate', typo]);
  t.equal(r.code, 2);
  t.equal(r.stderr, `gdrgate: ${typo}: /classes/0/paths/3/gpu: 0000:81:00.0 is not a GPU of class "reference" (its devices of role gpu: ${gpus.join(', ')})\n`);
  const nic = write(dir, { ...cls, paths: cls.paths.map((p, i) => (i === 5 ? { ...p, nic: 'mlx5_9' } : p)) });
  t.equal(cli(['baseline', 'validate', nic]).stderr, `gdrgate: ${nic}: /classes/0/paths/5/nic: mlx5_9 is not an RDMA adapter of class "reference" (its devices of role nic: ${nics.join(', ')})\n`);
});

t.test('GPUs and adapters without a single pair: valid, and said', async (t) => {
  const cls = await baselineOf(HGX);
  const file = write(t.testdir({}), { ...cls, paths: [] });
  const r = cli(['baseline', 'validate', file]);
  t.equal(r.code, 0);
  t.equal(r.stderr, `gdrgate: warning: ${file}: class "reference" has GPUs and RDMA adapters but no GPU↔NIC path: topology-distance judges none of them\n`);
  t.equal(cli(['baseline', 'validate', write(t.testdir({}), cls)]).stderr, '', 'the class as captured: nothing to say');
});

t.test('an enum or const error names what is allowed', async (t) => {
  const cls = await baselineOf(HGX);
  const dir = t.testdir({});
  const file = write(dir, { ...cls, platform: 'bare' });
  t.equal(cli(['baseline', 'validate', file]).stderr, `gdrgate: ${file}: /classes/0/platform: must be equal to one of the allowed values: "bare-metal", "virtualized"\n`);
  writeFileSync(file, JSON.stringify({ version: 2, classes: [cls] }));
  t.equal(cli(['baseline', 'validate', file]).stderr, `gdrgate: ${file}: /version: must be equal to constant: 1\n`);
});

t.test('capture leaves out a pair whose class could not be computed (a `?` cell), says so, and writes what validate takes', async (t) => {
  const dir = t.testdir({});
  const { root } = await tree(dir, 'n', base());
  for (const f of ['numa_node', 'local_cpulist']) writeFileSync(path.join(root, 'sys/bus/pci/devices/0000:16:00.0', f), 'xyz\n');
  const { cls, warnings } = captureClass(await buildInventory(new FsHost(root)), { name: 'two', match: ['*'], platform: 'bare-metal', at: '2026-12-04T00:00:00Z' });
  t.same(cls.paths.map((p) => `${p.gpu}-${p.nic} ${p.class}`), ['0000:13:00.0-mlx5_0 PIX', '0000:13:00.0-mlx5_1 NODE', '0000:33:00.0-mlx5_1 PIX']);
  t.same(warnings.filter((w) => w.startsWith('GPU↔NIC')), ['GPU↔NIC path 0000:33:00.0-mlx5_0 left out: its class could not be computed (?)']);
  const file = write(dir, cls);
  t.equal(cli(['baseline', 'validate', file]).code, 0);
});
