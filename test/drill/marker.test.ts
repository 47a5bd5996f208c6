// The drill marker on drain reasons: appended within 255 bytes, check name, job and marker kept.
import t from 'tap';
import { hasMarker, markReason } from '../../src/drill/marker.js';
import type { Finding } from '../../src/model/finding.js';
import { buildReason, isOurs, MAX_REASON_BYTES } from '../../src/slurm/reason.js';

const finding = (subject: string, actual: string): Finding => ({ check: 'pcie-link', code: 'link-width-low', status: 'fail', subject, message: actual, actual, expected: 'Gen5 x16' });

t.test('short reason: the marker is appended as is', async (t) => {
  const r = markReason(buildReason([finding('0000:18:00.0', 'Gen5 x8')], '42'), 'a1b2c3d4');
  t.equal(r, 'gdrgate: pcie-link 0000:18:00.0 Gen5 x8 (want Gen5 x16) job=42 drill=a1b2c3d4');
  t.ok(isOurs(r), 'still ours (gdrgate: prefix)');
  t.ok(hasMarker(r), 'has a drill marker');
  t.ok(hasMarker(r, 'a1b2c3d4'), 'has this drill marker');
  t.notOk(hasMarker(r, 'deadbeef'), 'not another drill marker');
});

t.test('long reason: the body gives way, prefix, job and marker stay, at most 255 bytes', async (t) => {
  const long = buildReason([finding('0000:18:00.0', 'x'.repeat(400)), finding('0000:19:00.0', 'y')], '123456');
  t.equal(long.length, MAX_REASON_BYTES, 'buildReason already used all 255 bytes');
  const r = markReason(long, 'a1b2c3d4');
  t.equal(Buffer.byteLength(r), MAX_REASON_BYTES, '255 bytes');
  t.ok(r.startsWith('gdrgate: pcie-link 0000:18:00.0'), 'first 20 characters unchanged');
  t.ok(r.endsWith('x...; +1 more job=123456 drill=a1b2c3d4'), `tail kept: ${r.slice(-50)}`);
  t.ok(hasMarker(r, 'a1b2c3d4'));
  const noJob = markReason(buildReason([finding('0000:18:00.0', 'z'.repeat(400))], undefined), 'a1b2c3d4');
  t.ok(Buffer.byteLength(noJob) <= MAX_REASON_BYTES && noJob.endsWith(' drill=a1b2c3d4'), 'without a job too');
});

t.test('reasons without a marker', async (t) => {
  for (const r of [null, 'rack maintenance', 'gdrgate: pcie-link 0000:18:00.0 Gen5 x8 job=4', 'gdrgate: x drill=', 'drill=a1b2c3d4 later']) t.notOk(hasMarker(r), String(r));
});
