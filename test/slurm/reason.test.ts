// The drain reason (format, 20-character head, 255 bytes, sanitised) and drain/resume ownership of reasons.
import t from 'tap';
import { buildReason, MAX_REASON_BYTES, sanitize } from '../../src/slurm/reason.js';
import { drainAction, resumeAction } from '../../src/slurm/ownership.js';
import { CHECK_IDS } from '../../src/checks/index.js';
import type { Finding } from '../../src/model/finding.js';

const f = (over: Partial<Finding> = {}): Finding => ({
  check: 'pcie-link', code: 'link-width-low', status: 'fail', subject: '0000:17:00.0', message: 'GPU H100 trained x8 of x16',
  expected: 'Gen5 x16', actual: 'Gen5 x8', ...over,
});

t.test('reason format', async (t) => {
  t.equal(buildReason([f()], '4242'), 'gdrgate: pcie-link 0000:17:00.0 Gen5 x8 (want Gen5 x16) job=4242');
  t.equal(buildReason([f(), f({ subject: '0000:18:00.0' }), f({ check: 'pcie-acs' })], '7'), 'gdrgate: pcie-link 0000:17:00.0 Gen5 x8 (want Gen5 x16); +2 more job=7');
  t.equal(buildReason([f()], undefined), 'gdrgate: pcie-link 0000:17:00.0 Gen5 x8 (want Gen5 x16)');
  // A job id is kept whole up to 24 characters (an array task's `<id>_<task>` is at most 10 + 1 + 10), cut with "..." beyond.
  t.equal(buildReason([f()], '4294967294_4000001'), 'gdrgate: pcie-link 0000:17:00.0 Gen5 x8 (want Gen5 x16) job=4294967294_4000001');
  t.equal(buildReason([f()], '123456789012345678901234'), 'gdrgate: pcie-link 0000:17:00.0 Gen5 x8 (want Gen5 x16) job=123456789012345678901234');
  t.equal(buildReason([f()], '1234567890123456789012345'), 'gdrgate: pcie-link 0000:17:00.0 Gen5 x8 (want Gen5 x16) job=123456789012345678901...');
});

t.test('the first 20 characters name the failing check, for every check', async (t) => {
  const HEAD: Record<string, string> = {
    'device-inventory': 'gdrgate: inventory 0',
    'pcie-link': 'gdrgate: pcie-link 0',
    'pcie-acs': 'gdrgate: pcie-acs 00',
    'pcie-ats': 'gdrgate: pcie-ats 00',
    'pcie-relaxed-ordering': 'gdrgate: pcie-ro 000',
    'pcie-throttle': 'gdrgate: pcie-thrott',
    'pcie-aer': 'gdrgate: pcie-aer 00',
    'pcie-payload': 'gdrgate: pcie-mps 00',
    'gpu-bar1': 'gdrgate: gpu-bar1 00',
    'iommu-mode': 'gdrgate: iommu-mode ',
    'gpudirect-mechanism': 'gdrgate: gpudirect 0',
    'memlock-limit': 'gdrgate: memlock 000',
    'topology-distance': 'gdrgate: topology 00',
    'job-placement': 'gdrgate: placement 0',
  };
  for (const id of CHECK_IDS) {
    const r = buildReason([f({ check: id })], '1');
    const head = r.slice(0, 20);
    t.equal(head, HEAD[id], `${id}: ${head}`);
    const label = head.slice(9).split(' ')[0]!;
    t.ok(id.startsWith(label) || id.includes(label.split('-')[0]!), `${id} recognisable from "${label}"`);
  }
});

t.test('at most 255 bytes, suffix kept', async (t) => {
  const long = f({ actual: 'x'.repeat(1000), expected: 'y'.repeat(500) });
  const r = buildReason([long, f(), f()], '123456');
  t.ok(Buffer.byteLength(r) <= MAX_REASON_BYTES, `${Buffer.byteLength(r)} bytes`);
  t.equal(r, `gdrgate: pcie-link 0000:17:00.0 ${'x'.repeat(200)}...; +2 more job=123456`);
});

t.test('sanitised: no quotes, newlines, control or non-ASCII characters from device strings or the job env', async (t) => {
  const evil = f({ subject: 'mlx5_0"; scontrol delete\n', actual: "fw '28.41'\x07`rm -rf /`$(id)\u00e9" });
  const r = buildReason([evil], '12\n34"');
  t.notMatch(r, /["'`\\$\n\r\x00-\x1f\x7f-\uffff]/);
  t.equal(r, 'gdrgate: pcie-link mlx5_0; scontrol delete fw 28.41 rm -rf /(id) (want Gen5 x16) job=1234');
  t.equal(sanitize('a\tb\u0000c'), 'a b c');
});

t.test('ownership: never overwrite a human reason; unknown state writes nothing', async (t) => {
  t.same(drainAction({ name: 'n', state: 'IDLE', reason: null, reasonUser: null, reasonTime: null }), { act: 'drain' });
  t.same(drainAction({ name: 'n', state: 'MIXED', reason: null, reasonUser: null, reasonTime: null }), { act: 'drain' });
  t.equal(drainAction({ name: 'n', state: 'IDLE+DRAIN', reason: 'rack maintenance', reasonUser: 'root', reasonTime: '2026-11-29T14:39:05' }).act, 'keep');
  t.equal(drainAction({ name: 'n', state: 'DOWN', reason: 'Not responding', reasonUser: 'slurm', reasonTime: '2026-11-29T14:39:05' }).act, 'keep');
  t.equal(drainAction({ name: 'n', state: 'IDLE+DRAIN', reason: 'gdrgate: pcie-acs x', reasonUser: 'root', reasonTime: '2026-11-29T14:39:05' }).act, 'keep', 'already ours: one reason, no storm');
  t.equal(drainAction(null).act, 'keep');
  t.same(resumeAction({ name: 'n', state: 'IDLE+DRAIN', reason: 'gdrgate: pcie-link x', reasonUser: 'root', reasonTime: '2026-11-29T14:39:05' }), { act: 'resume' });
  t.equal(resumeAction({ name: 'n', state: 'IDLE+DRAIN', reason: 'rack maintenance', reasonUser: 'root', reasonTime: '2026-11-29T14:39:05' }).act, 'refuse');
  t.equal(resumeAction({ name: 'n', state: 'IDLE+DRAIN', reason: 'gdrgate-lookalike', reasonUser: 'root', reasonTime: '2026-11-29T14:39:05' }).act, 'refuse');
  // Ours only when it begins with our prefix: an admin's reason that quotes ours is the admin's.
  t.equal(resumeAction({ name: 'n', state: 'IDLE+DRAIN', reason: 'rack 4 (was gdrgate: pcie-link x)', reasonUser: 'root', reasonTime: '2026-11-29T14:39:05' }).act, 'refuse');
  t.equal(resumeAction({ name: 'n', state: 'IDLE+DRAIN', reason: ' gdrgate: pcie-link x', reasonUser: 'root', reasonTime: '2026-11-29T14:39:05' }).act, 'refuse');
  t.equal(resumeAction({ name: 'n', state: 'IDLE', reason: null, reasonUser: null, reasonTime: null }).act, 'none');
  t.equal(resumeAction(null).act, 'refuse');
});
