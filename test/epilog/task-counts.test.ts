// TaskProlog findings counted for the admin: appended per job, counted per code for this node only, exported to Prometheus.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';

import path from 'node:path';
import { renderProm } from '../../src/epilog/prom.js';
import { countTaskFindings, recordTaskFindings, TASK_FINDINGS_FILE, TASK_FINDINGS_OLD } from '../../src/epilog/task-counts.js';
import { scratchDir } from '../helpers/scratch.js';

t.test('append per job, count per code, torn lines skipped', async (t) => {
  const dir = scratchDir('gdrgate-taskcount-');
  t.same(countTaskFindings(dir, 'gpu001'), {}, 'nothing yet');
  recordTaskFindings(dir, 'gpu001', '41', ['job-memlock-propagated']);
  recordTaskFindings(dir, 'gpu001', '42', ['job-memlock-propagated', 'job-uverbs-missing']);
  recordTaskFindings(dir, 'gpu001', '43', []);
  appendFileSync(path.join(dir, TASK_FINDINGS_FILE), '{"ts":1,"node":"gpu001","job":"44","co'); // a crash mid-line
  t.same(countTaskFindings(dir, 'gpu001'), { 'job-memlock-propagated': 2, 'job-uverbs-missing': 1 });
  // The next job's line starts on a line of its own: only the cut one is lost.
  recordTaskFindings(dir, 'gpu001', '45', ['job-uverbs-missing']);
  t.strictSame(countTaskFindings(dir, 'gpu001'), { 'job-memlock-propagated': 2, 'job-uverbs-missing': 2 }, 'the line after a cut one counted');
  t.equal(readFileSync(path.join(dir, TASK_FINDINGS_FILE), 'utf8').split('\n').at(-3), '{"ts":1,"node":"gpu001","job":"44","co', 'the cut line ended where it was cut');
});

t.test('exported as a counter that promtool accepts', async (t) => {
  const text = renderProm({ node: 'gpu001', stats: [], window: 5, spool: { torn: 0, corrupt: 0 }, now: 1764430000000, taskFindings: { 'job-memlock-propagated': 3 } });
  t.equal(text, [
    '# HELP gdrgate_spool_skipped_lines Spool lines skipped when the statistics were computed (torn: cut by a crash or a full disk; corrupt: not a sample; future: stamped more than 60 s after the clock, written while it ran ahead).',
    '# TYPE gdrgate_spool_skipped_lines gauge',
    'gdrgate_spool_skipped_lines{node="gpu001",kind="torn"} 0',
    'gdrgate_spool_skipped_lines{node="gpu001",kind="corrupt"} 0',
    'gdrgate_spool_skipped_lines{node="gpu001",kind="future"} 0',
    '# HELP gdrgate_task_findings_total Findings the TaskProlog reported from inside jobs (memlock, device visibility), by code: each job\'s own unverified report (task.json is written by the job\'s user; only known codes are counted, nothing acts on them).',
    '# TYPE gdrgate_task_findings_total counter',
    'gdrgate_task_findings_total{node="gpu001",code="job-memlock-propagated"} 3',
    '# HELP gdrgate_samples_generated_timestamp_seconds Unix time this file was written.',
    '# TYPE gdrgate_samples_generated_timestamp_seconds gauge',
    'gdrgate_samples_generated_timestamp_seconds{node="gpu001"} 1764430000',
    '',
  ].join('\n'));
  const promtool = '/usr/bin/promtool';
  if (!existsSync(promtool) && process.env.CI) t.fail('promtool missing in CI');
  await t.test('promtool check metrics', { skip: existsSync(promtool) ? false : 'promtool not installed' }, async (t) => {
    const f = path.join(scratchDir('gdrgate-prom-'), 'gdrgate.prom');
    writeFileSync(f, text);
    t.equal(execFileSync('/bin/sh', ['-c', `${promtool} check metrics < ${f}; echo rc=$?`], { encoding: 'utf8' }).trim(), 'rc=0');
  });
});

t.test('the file is set aside before it would pass the 4 MiB ever counted: what a node keeps stays bounded, the counts start again', async (t) => {
  const dir = scratchDir('gdrgate-taskcount-rotate-');
  const live = path.join(dir, TASK_FINDINGS_FILE);
  const old = path.join(dir, TASK_FINDINGS_OLD);
  // 150,000 jobs' findings (about 10 MiB of lines): set aside twice.
  const JOBS = 150_000;
  for (let job = 1; job <= JOBS; job++) recordTaskFindings(dir, 'gpu001', String(job), ['job-memlock-propagated']);
  const longest = `${JSON.stringify({ ts: Date.now(), node: 'gpu001', job: String(JOBS), code: 'job-memlock-propagated' })}\n`.length;
  const [a, b] = [statSync(live).size, statSync(old).size];
  t.equal(a <= 4 << 20 && b <= 4 << 20 && b > (4 << 20) - longest, true, `live ${a} bytes, the one before ${b}: each at most 4 MiB, the one before within a line of it`);
  const lines = readFileSync(live, 'utf8').split('\n').filter(Boolean);
  t.equal(JSON.parse(lines.at(-1)!).job, String(JOBS), 'the newest job is in the live file');
  t.same(countTaskFindings(dir, 'gpu001'), { 'job-memlock-propagated': lines.length }, 'counted from the live file: the jobs since it was set aside');
});

t.test('the counter never falls before the rotation: a job that would take the file past 4 MiB is counted in a new file', async (t) => {
  const dir = scratchDir('gdrgate-taskcount-edge-');
  const live = path.join(dir, TASK_FINDINGS_FILE);
  // Lines as recordTaskFindings writes them, up to 100 bytes short of the 4 MiB counted (written at once: quicker).
  const line = `${JSON.stringify({ ts: 1, node: 'gpu001', job: '1', code: 'job-no-rdma' })}\n`;
  const n = Math.floor(((4 << 20) - 100) / line.length);
  writeFileSync(live, line.repeat(n));
  t.same(countTaskFindings(dir, 'gpu001'), { 'job-no-rdma': n }, 'all counted');
  recordTaskFindings(dir, 'gpu001', '2', ['job-no-rdma'], 1);
  t.same(countTaskFindings(dir, 'gpu001'), { 'job-no-rdma': n + 1 }, 'a job that fits: +1 exactly');
  recordTaskFindings(dir, 'gpu001', '123456789', Array(32).fill('job-nccl-topo-unreachable'), 1764430000000);
  t.same(countTaskFindings(dir, 'gpu001'), { 'job-nccl-topo-unreachable': 32 }, 'one that would not fit: set aside first, the counts start again (one reset)');
  t.equal(readFileSync(path.join(dir, TASK_FINDINGS_OLD), 'utf8').split('\n').filter(Boolean).length, n + 1, 'the one before holds every earlier line');
  t.equal(statSync(live).size <= 4 << 20, true);
});

t.test('read side: a line with a code the TaskProlog never emits is not counted (no new series)', async (t) => {
  const dir = scratchDir('gdrgate-taskcount-foreign-');
  recordTaskFindings(dir, 'gpu001', '1', ['job-no-rdma'], 1);
  appendFileSync(path.join(dir, TASK_FINDINGS_FILE), `${JSON.stringify({ ts: 1, node: 'gpu001', job: '2', code: 'job-made-up' })}\n${JSON.stringify({ ts: 1, node: 'gpu001', job: '3', code: 7 })}\n`);
  t.same(countTaskFindings(dir, 'gpu001'), { 'job-no-rdma': 1 });
});

t.test("this node's lines only: a spool copied from a golden image (another node's lines) and lines that name no node are not counted", async (t) => {
  const dir = scratchDir('gdrgate-taskcount-node-');
  const live = path.join(dir, TASK_FINDINGS_FILE);
  // The golden image's node ran jobs before the spool was copied; its lines come first, as in the copy.
  recordTaskFindings(dir, 'golden', '7', ['job-memlock-propagated', 'job-uverbs-missing'], 1);
  // A line as the Epilog wrote them before lines named their node.
  appendFileSync(live, `${JSON.stringify({ ts: 2, job: '8', code: 'job-memlock-propagated' })}\n`);
  recordTaskFindings(dir, 'gpu001', '41', ['job-memlock-propagated'], 3);
  t.strictSame(readFileSync(live, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as unknown), [
    { ts: 1, node: 'golden', job: '7', code: 'job-memlock-propagated' },
    { ts: 1, node: 'golden', job: '7', code: 'job-uverbs-missing' },
    { ts: 2, job: '8', code: 'job-memlock-propagated' },
    { ts: 3, node: 'gpu001', job: '41', code: 'job-memlock-propagated' },
  ], 'each line names its node');
  t.strictSame(countTaskFindings(dir, 'gpu001'), { 'job-memlock-propagated': 1 });
  t.strictSame(countTaskFindings(dir, 'golden'), { 'job-memlock-propagated': 1, 'job-uverbs-missing': 1 });
});
