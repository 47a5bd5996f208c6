// `scontrol show job -o` on real Slurm 22.05.8 captures (test/fixtures/scontrol/SOURCES.md): a running job, the same
// job requeued held, then run to its end on another node; what the drill follows its probe by.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { parseShowJob } from '../../src/parsers/scontrol-job.js';
import { fixture } from '../helpers/paths.js';

const cap = (name: string): string => readFileSync(fixture('scontrol', `show_job_o_${name}_22.05.8.txt`), 'utf8');

t.test('running, requeued held, completed on another node', async (t) => {
  t.same(parseShowJob(cap('running'), '1'), { ok: true, value: { id: '1', state: 'RUNNING', reason: null, nodeList: 'node1', batchHost: 'node1', restarts: 0, partition: 'debug', exitCode: '0:0' } });
  // Pending: NodeList= is empty, there is no BatchHost yet; scontrol writes the reason with underscores.
  t.same(parseShowJob(cap('requeued_held'), '1'), { ok: true, value: { id: '1', state: 'PENDING', reason: 'job_requeued_in_held_state', nodeList: null, batchHost: null, restarts: 1, partition: 'debug', exitCode: '0:0' } });
  t.same(parseShowJob(cap('completed_elsewhere'), '1'), { ok: true, value: { id: '1', state: 'COMPLETED', reason: null, nodeList: 'node2', batchHost: 'node2', restarts: 1, partition: 'debug', exitCode: '0:0' } });
});

t.test('ReqNodeList/ExcNodeList are not NodeList; fields with spaces do not split a value', async (t) => {
  const line = cap('completed_elsewhere');
  t.match(line, / ReqNodeList=\(null\) ExcNodeList=node1 NodeList=node2 /, 'the capture holds all three');
  const withSpaces = line.replace('Reason=None', 'Reason=launch failed requeued held');
  const p = parseShowJob(withSpaces, '1');
  t.same(p, { ok: true, value: { id: '1', state: 'COMPLETED', reason: 'launch failed requeued held', nodeList: 'node2', batchHost: 'node2', restarts: 1, partition: 'debug', exitCode: '0:0' } }, 'a reason with spaces stays whole');
});

t.test('refuses what is not this job', async (t) => {
  t.same(parseShowJob(cap('running'), '2'), { ok: false, error: 'answer names job "1", not "2"' });
  t.same(parseShowJob(cap('not_found_stderr'), '999'), { ok: false, error: 'no JobId= line in "slurm_load_jobs error: Invalid job id specified\\n"' });
  t.same(parseShowJob('', '1'), { ok: false, error: 'no JobId= line in ""' });
  t.same(parseShowJob(`${cap('running').trim()}\n${cap('running')}`, '1'), { ok: false, error: '2 JobId= lines for one job "1"' });
  t.same(parseShowJob(cap('running').replace('JobState=RUNNING', 'JobState='), '1'), { ok: false, error: 'no JobState= field ("")' });
  t.same(parseShowJob(cap('running').replace('Restarts=0', 'Restarts=x'), '1'), { ok: false, error: 'Restarts= is not a count: "x"' });
});
