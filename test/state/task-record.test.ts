// task.json is the job's own unverified report: its shape is schemas/task.schema.json, the epilog keeps only
// codes the TaskProlog can emit, and the metric built from it says what it is.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { renderProm } from '../../src/epilog/prom.js';
import { countTaskFindings, recordTaskFindings, TASK_FINDINGS_FILE } from '../../src/epilog/task-counts.js';
import { summarizeTaskRecord } from '../../src/state/epilog.js';
import { TASK_FORMAT } from '../../src/state/names.js';
import type { TaskRecord } from '../../src/state/types.js';
import { TASK_CHECK_OF } from '../../src/task/records.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { REPO } from '../helpers/paths.js';
import { JOB_UID } from './_state.js';
import { scratchDir } from '../helpers/scratch.js';

const schema = new Ajv2020({ allErrors: true, strict: true }).compile(JSON.parse(fs.readFileSync(path.join(REPO, 'schemas/task.schema.json'), 'utf8')) as object);
const validate = (_: 'task', data: unknown): string[] => (schema(data) ? [] : (schema.errors ?? []).map((e) => `${e.instancePath}: ${e.message}`));

const rec = (findings: TaskRecord['findings'], over: Partial<TaskRecord> = {}): TaskRecord => ({
  format: TASK_FORMAT, job: '1234', step: 'batch', uid: JOB_UID, node: 'gpu001', time: '2026-11-29T15:00:01.000Z', state: 'trusted',
  memlock: { soft: 65536, hard: 'unlimited', source: 'propagated' }, findings, ...over,
});
const f = (code: string, status: TaskRecord['findings'][number]['status'] = 'fail') => ({ code, status, subject: 'job', message: 'memlock is 64 KiB in this job' });

t.test('the schema holds every record a TaskProlog writes, and refuses what it never writes', async (t) => {
  const codes = Object.keys(TASK_CHECK_OF);
  t.strictSame(validate('task', rec(codes.map((c) => f(c, 'warn')).slice(0, 32))), [], 'every catalog code');
  t.strictSame(validate('task', rec([], { memlock: null, step: null, state: 'missing' })), []);
  t.not(validate('task', rec([f('job-memlock-low')], { state: 'rooted' as TaskRecord['state'] })).length, 0, 'an unknown state');
  t.not(validate('task', { ...rec([]), extra: 1 }).length, 0, 'an unknown field');
  t.not(validate('task', rec(Array.from({ length: 33 }, () => f('job-memlock-low')))).length, 0, 'more than 32 findings');
});

t.test('only catalog codes survive the epilog; an unknown state reads as unknown', async (t) => {
  const s = summarizeTaskRecord(rec([f('job-memlock-low'), f('job-forged-outage'), f('job-memlock-ok', 'pass')], { state: 'rooted' as TaskRecord['state'] }), '1234');
  if (typeof s === 'string') return t.fail(s);
  t.strictSame(s.findings.map((x) => x.code), ['job-memlock-low', 'job-memlock-ok'], 'a code the TaskProlog cannot emit is dropped');
  t.equal(s.state, 'unknown');
});

t.test('counted: known codes only, at most 32 per job; the metric says it is the job\'s own report', async (t) => {
  const dir = scratchDir('gdrgate-taskrec-', '/tmp');
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  recordTaskFindings(dir, 'gpu001', '1', ['job-memlock-low', 'job-forged-outage', ...Array.from({ length: 100 }, () => 'job-gpu-missing')]);
  fs.appendFileSync(path.join(dir, TASK_FINDINGS_FILE), '{"ts":1,"node":"gpu001","job":"2","code":"job-forged-outage"}\n');
  const c = countTaskFindings(dir, 'gpu001');
  t.strictSame(c, { 'job-memlock-low': 1, 'job-gpu-missing': 31 });
  const text = renderProm({ node: 'gpu001', stats: [], window: 5, spool: { torn: 0, corrupt: 0 }, now: 0, taskFindings: c });
  t.same(text.split('\n').filter((l) => l.startsWith('# HELP gdrgate_task_findings_total ')), ['# HELP gdrgate_task_findings_total Findings the TaskProlog reported from inside jobs (memlock, device visibility), by code: each job\'s own unverified report (task.json is written by the job\'s user; only known codes are counted, nothing acts on them).']);
});
