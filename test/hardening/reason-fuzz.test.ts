// Drain reasons from hostile findings and job ids (control characters, quotes, huge strings, unicode across the
// 255-byte cut): always `gdrgate: ` first, at most 255 bytes of one line of ASCII, ours to resume, the drill
// marker kept, and read back as ours from a real `scontrol show node -o` line.
import fs from 'node:fs';
import t from 'tap';
import { hasMarker, markReason } from '../../src/drill/marker.js';
import { CHECK_IDS } from '../../src/checks/index.js';
import type { Finding } from '../../src/model/finding.js';
import { parseShowNode } from '../../src/parsers/scontrol.js';
import { bandwidthReason, buildReason, isOurs, MAX_REASON_BYTES } from '../../src/slurm/reason.js';
import { fixture } from '../helpers/paths.js';
import { seeded } from '../helpers/seeded.js';

const PIECES = ['a', 'Z', '0', '9', ' ', '  ', '\t', '\n', '\r', '\u0000', '\u001b[31m', '\u007f', '"', "'", '`', '\\', '$', '$(id)', ';', '[', ']', '@',
  '[root@2026-11-29T14:39:05]', ' Reason=', 'gdrgate:', '...', ' drill=a1b2', ' job=1', '; +3 more', 'é', '€', '😀', '\ud800', '\udfff', '\u0301', '中文', '\u2028', '\ufeff'];
const IDLE_LINE = fs.readFileSync(fixture('scontrol/show_node_o_idle_22.05.8.txt'), 'utf8').trimEnd();

t.test('the reported case: a 400-character SLURM_JOB_ID', async (t) => {
  const f: Finding = { check: 'pcie-link', code: 'link-width-low', status: 'fail', subject: '0000:17:00.0', message: 'm', expected: 'Gen5 x16', actual: 'Gen5 x8' };
  const r = buildReason([f], '7'.repeat(400));
  t.ok(r.startsWith('gdrgate: pcie-link 0000:17:00.0 Gen5 x8'), r.slice(0, 40));
  t.ok(Buffer.byteLength(r) <= MAX_REASON_BYTES, `${Buffer.byteLength(r)} bytes`);
  t.ok(isOurs(r), 'resume recognises it');
});

t.test('4000 seeded reasons keep their prefix, bounds and marker', async (t) => {
  const g = seeded(0x5eed);
  const text = (): string => (g.int(8) === 0 ? g.join(PIECES, 60 + g.int(400)) : g.join(PIECES, g.int(12)));
  let bad = 0;
  let cases = 0;
  let longest = 0;
  for (let i = 0; i < 4000 && bad < 5; i++, cases++) {
    const n = 1 + g.int(4);
    const findings = Array.from({ length: n }, (): Finding => ({
      check: g.pick(CHECK_IDS), code: text() as Finding['code'], status: 'fail', subject: text(), message: text(),
      ...(g.int(2) ? { actual: text() } : {}), ...(g.int(2) ? { expected: text() } : {}),
    }));
    const digits = String(g.int(1e9));
    const job = g.pick([undefined, '', digits, `${digits}_${g.int(99)}`, text(), digits.repeat(1 + g.int(60))]);
    const marker = g.pick(['a1b2', 'deadbeef', '0123456789abcdef0123456789abcdef']);
    const r = i % 2 ? buildReason(findings, job) : bandwidthReason(findings, job);
    const marked = markReason(r, marker);
    longest = Math.max(longest, ...findings.map((f) => f.message.length + f.subject.length), job?.length ?? 0);
    const read = parseShowNode(`${IDLE_LINE.replace(' State=IDLE ', ' State=IDLE+DRAIN ')} Reason=${r} [root@2026-11-29T14:39:05]\n`, 'vm');
    const problems = [
      !r.startsWith('gdrgate: ') && 'prefix',
      !/^[\x20-\x7e]+$/.test(r) && 'not one line of printable ASCII (so not plain, valid UTF-8)',
      Buffer.byteLength(r) > MAX_REASON_BYTES && `${Buffer.byteLength(r)} bytes`,
      !isOurs(r) && 'not ours',
      i % 2 === 1 && !r.startsWith(`gdrgate: ${buildReason([{ ...findings[0]!, subject: '', actual: '', expected: undefined, message: '' }], undefined).slice(9)}`) && 'label not first',
      job === digits && !r.endsWith(` job=${digits}`) && 'job id lost',
      n > 1 && !r.includes(`; +${n - 1} more`) && 'count lost',
      !marked.startsWith('gdrgate: ') && 'marked: prefix',
      Buffer.byteLength(marked) > MAX_REASON_BYTES && `marked: ${Buffer.byteLength(marked)} bytes`,
      !/^[\x20-\x7e]+$/.test(marked) && 'marked: not printable ASCII',
      !hasMarker(marked, marker) && 'marker lost',
      job === digits && !marked.endsWith(` job=${digits} drill=${marker}`) && 'marked: job id lost',
      !(read.ok && isOurs(read.value.reason)) && 'not ours when read back from scontrol',
    ].filter(Boolean);
    if (problems.length) {
      bad++;
      t.fail(`case ${i}: ${problems.join(', ')}`, { reason: r, marked, job, findings });
    }
  }
  t.equal(bad, 0, 'every generated reason held');
  // What was covered, in counts (its speed is no test's to assert): every case, inputs far past the 255-byte cut.
  t.equal(cases, 4000, 'all 4000 cases ran');
  t.ok(longest > 10 * MAX_REASON_BYTES, `the longest input string ${longest} characters`);
});

t.test('markReason: any reason comes out one bounded line; a marker hasMarker cannot find is not written', async (t) => {
  const fault = `gdrgate: drill ${'x\n'.repeat(200)}`;
  const m = markReason(fault, 'a1b2c3d4');
  t.ok(/^gdrgate: drill x x [\x20-\x7e]+ drill=a1b2c3d4$/.test(m) && m.length <= MAX_REASON_BYTES, m.slice(0, 40));
  t.equal(markReason('gdrgate: drill a\tb', 'a1b2'), 'gdrgate: drill a b drill=a1b2', 'short ones are cleaned too');
  for (const bad of ['', 'xyz', 'A1B2', 'a1b2 job=9', 'a'.repeat(33)]) t.equal(markReason('gdrgate: pcie-link x job=4', bad), 'gdrgate: pcie-link x job=4', JSON.stringify(bad));
});
