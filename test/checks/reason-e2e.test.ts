// From a faulty tree to the drain reason, the way `gdrgate prolog` gets there: inventory → all checks → sort → outcome
// → buildReason (DESIGN §5: `gdrgate: <check> <subject> <actual> (want <expected>)`, ≤ 255 bytes, owned prefix).
import t from 'tap';
import { CHECK_IDS } from '../../src/checks/index.js';
import { outcomeOf } from '../../src/runner/policy.js';
import { runChecks, sortFindings } from '../../src/runner/run.js';
import { buildReason, MAX_REASON_BYTES } from '../../src/slurm/reason.js';
import type { GenNode } from '../gen/sysfs-tree.js';
import { baselineOf, dev, GPUS, HGX, hgx, inventoryOf, P0, train } from './_trees.js';

async function reasonOf(n: GenNode, withBaseline: boolean): Promise<{ reason: string; failing: string[] }> {
  const inv = await inventoryOf(n);
  const findings = sortFindings(runChecks({ inv, baseline: withBaseline ? await baselineOf(HGX) : null }, CHECK_IDS));
  const o = outcomeOf(findings);
  if (o.kind !== 'unhealthy') throw new Error(`expected an unhealthy node, got ${o.kind}`);
  return { reason: buildReason(o.failing, '42'), failing: o.failing.map((f) => `${f.check} ${f.code} ${f.subject}`) };
}

const x8 = hgx();
train(x8, P0.gpu, { width: 8 });

for (const withBaseline of [true, false]) {
  t.test(`GPU0 trained x8 of x16, ${withBaseline ? 'with' : 'without'} baseline: reason names pcie-link and the GPU`, async (t) => {
    const { reason, failing } = await reasonOf(x8, withBaseline);
    t.strictSame(failing, [`pcie-link link-width-low ${P0.gpu}`], 'the only failing finding');
    t.ok(reason.startsWith(`gdrgate: pcie-link ${P0.gpu}`), reason);
    t.equal(reason, `gdrgate: pcie-link ${P0.gpu} Gen5 x8 (want Gen5 x16) job=42`);
    t.equal(reason.slice(0, 20), 'gdrgate: pcie-link 0', 'sinfo -R shows 20 characters: the check is in them');
    t.ok(Buffer.byteLength(reason) <= MAX_REASON_BYTES, `${Buffer.byteLength(reason)} bytes`);
    t.match(reason, /^[\x20-\x7e]+$/, 'one line of printable ASCII');
    t.notMatch(reason, /["'`\\$]/, 'no quotes for scontrol');
  });
}

t.test('a node failing everywhere still gives one reason of at most 255 bytes, worst first', async (t) => {
  const n = hgx();
  for (const g of GPUS) train(n, g, { width: 8 });
  for (const d of [P0.downGpu, P0.downNic]) dev(n, d).acsCtl = 0x001d;
  n.memlockKiB = 64;
  n.driver = { ...n.driver!, open: false };
  const { reason, failing } = await reasonOf(n, true);
  t.equal(failing.length, 13, '8 links, 2 ACS ports, memlock, mechanism, driver');
  t.equal(reason, 'gdrgate: inventory nvidia proprietary 570.133.20 (want open 570.133.20); +12 more job=42', 'report order: device-inventory first');
  t.ok(Buffer.byteLength(reason) <= MAX_REASON_BYTES, `${Buffer.byteLength(reason)} bytes`);
});
