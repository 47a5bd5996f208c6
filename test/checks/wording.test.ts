// The one wording catalog (src/checks/catalog.ts): every record (node checks, the gate, the job view, the Epilog's probes) worded once as { tells, do, layer }, one sorter and one renderer for any finding.
import t from 'tap';
import { CATALOG, entry, RECORDS, sortFindings, WORDING, type AnyCode } from '../../src/checks/catalog.js';
import { CHECKS } from '../../src/checks/index.js';
import { bw } from '../../src/epilog/finding.js';
import type { AnyFinding } from '../../src/model/finding.js';
import { listLines, sentence, tableLines, worded } from '../../src/report/findings.js';
import { tf } from '../../src/task/finding.js';
import { JOB_VIEW } from '../../src/task/records.js';

t.test('every record words its codes once, and the catalog holds each with its source', async (t) => {
  const all = RECORDS.flatMap((r) => Object.keys(r.codes).map((code) => `${r.source}:${r.id}:${code}`));
  const codes = all.map((x) => x.split(':')[2]!);
  t.same(codes.filter((c, i) => codes.indexOf(c) !== i), [], 'no code is worded by two records');
  t.equal(Object.keys(WORDING).length, codes.length);
  for (const r of RECORDS) for (const [code, w] of Object.entries(r.codes)) t.same(entry(code as AnyCode), { tells: w.tells, do: w.do, layer: w.layer, source: r.source }, code);
  t.same([...new Set(RECORDS.map((r) => r.source))], ['node', 'job', 'probe']);
  t.same(Object.keys(CATALOG).sort(), Object.keys(WORDING).filter((c) => WORDING[c as AnyCode].source === 'node').sort(), 'CATALOG is the node\'s part');
});

t.test('an id names one area: a job-view record that shares a check\'s id is that check\'s judgement from inside the job', async (t) => {
  const checkIds = new Set<string>(CHECKS.map((c) => c.id));
  t.same(JOB_VIEW.filter((r) => checkIds.has(r.id)).map((r) => r.id), ['memlock-limit', 'job-placement']);
  for (const r of JOB_VIEW) t.equal(r.source, 'job', r.id);
  // The same id, two sources, disjoint codes: a finding's (check, code) pair always finds its wording.
  const jobCodes = new Set(JOB_VIEW.flatMap((r) => Object.keys(r.codes)));
  t.same(CHECKS.flatMap((c) => Object.keys(c.codes)).filter((c) => jobCodes.has(c)), []);
});

t.test('one sorter for any finding: worst first, then the source\'s order (checks, job view, probes), subject, code', async (t) => {
  const mixed: AnyFinding[] = [
    bw('bw-ok', 'pass', 'b', 'm'),
    tf('job-hca-missing', 'fail', 'mlx5_1', 'm'),
    bw('bw-low', 'fail', 'a', 'm'),
    bw('bw-gpu-path', 'fail', 'a', 'm'),
    { check: 'pcie-link', code: 'link-width-low', status: 'fail', subject: 'z', message: 'm' },
    tf('job-memlock-low', 'warn', 'job', 'm'),
    { check: 'device-inventory', code: 'device-missing', status: 'fail', subject: 'z', message: 'm' },
  ];
  t.same(
    sortFindings(mixed).map((f) => `${f.status} ${f.check} ${f.subject} ${f.code}`),
    ['fail device-inventory z device-missing', 'fail pcie-link z link-width-low', 'fail job-visibility mlx5_1 job-hca-missing', 'fail bandwidth a bw-gpu-path', 'fail bandwidth a bw-low', 'warn memlock-limit job job-memlock-low', 'pass bandwidth b bw-ok'],
  );
});

t.test('one renderer: the same wording in a table, the Epilog\'s list and a TaskProlog line', async (t) => {
  const f = tf('job-memlock-low', 'fail', 'job', 'memlock is 64 KiB in this job', '>= unlimited', '64 KiB');
  const w = entry('job-memlock-low');
  t.same(tableLines([worded(f)]).slice(1), [
    'FAIL    memlock-limit  job      memlock is 64 KiB in this job (want >= unlimited)',
    `${' '.repeat(32)}tells: ${w.tells}`,
    `${' '.repeat(32)}do:    ${w.do} [scheduler]`,
  ]);
  t.same(listLines([f]), ['FAIL job-memlock-low job: memlock is 64 KiB in this job', `     ${w.tells}`, `     -> ${w.do} [scheduler]`]);
  t.equal(sentence(f), `gdrgate: memlock is 64 KiB in this job (need >= unlimited): ${w.tells}; ${w.do}`);
  const b = bw('bw-gpu-path', 'fail', 'GPU0-mlx5_0', 'below band');
  t.same(tableLines([worded(b)])[2], `${' '.repeat(6 + 2 + 9 + 2 + 11 + 2)}tells: ${entry('bw-gpu-path').tells}`, 'a probe finding in a table');
  t.same(tableLines([worded(tf('job-visibility-ok', 'pass', 'job', 'fine'))], true).length, 3, 'verbose: tells, and no "do: none"');
});
