// The drill report's shape (schemas/drill.schema.json) and its text: the drilled node and the node the requeued probe
// ran on. The reports here are built from the real scontrol captures the drill reads (test/fixtures/scontrol).
import t from 'tap';
import { readFileSync } from 'node:fs';
import { renderDrill, type DrillReport, type Requeue } from '../../src/drill/report.js';
import { parseShowJob } from '../../src/parsers/scontrol-job.js';
import { fixture } from '../helpers/paths.js';
import { validate } from '../helpers/schema.js';

const job = (name: string) => {
  const p = parseShowJob(readFileSync(fixture('scontrol', `show_job_o_${name}_22.05.8.txt`), 'utf8'), '1');
  if (!p.ok) throw new Error(p.error);
  return p.value;
};

const report = (requeue: Requeue): DrillReport => ({
  version: 2,
  marker: '0a1b2c3d',
  node: 'node1',
  fault: 'pcie-link:0000:00:06.0=x8',
  startedAt: '2026-12-01T12:00:00.000Z',
  ok: true,
  problems: [],
  probe: { job: '1', fate: 'PENDING (job requeued in held state)' },
  drain: { drained: true, ms: 640, reason: 'gdrgate: pcie-link 0000:00:06.0 Gen5 x8 (want x16) job=1 drill=0a1b2c3d', markerInReason: true, sinfoR: 'gdrgate: pcie-link 0000:00:06.0 Gen5 x8 (want x16) job=1 drill=0a1b2c3d root 2026-12-01T12:00:01 node1' },
  requeue,
  recovery: { faultRemovedMs: 9000, resume: 'resumed', idleMs: 300, followUp: { job: '2', state: 'COMPLETED', ms: 700 } },
  totalMs: 11000,
});

/** The report's text for report(): its lines but the requeued probe's and the nodes', which each case gives. */
const rendered = (requeued: string, nodes: string): string =>
  [
    'gdrgate drill 0a1b2c3d on node1: pcie-link:0000:00:06.0=x8 (started 2026-12-01T12:00:00.000Z)',
    '  probe job        1',
    '  submit → drain   0.64 s',
    '  drain reason     gdrgate: pcie-link 0000:00:06.0 Gen5 x8 (want x16) job=1 drill=0a1b2c3d',
    '  sinfo -R         gdrgate: pcie-link 0000:00:06.0 Gen5 x8 (want x16) job=1 drill=0a1b2c3d root 2026-12-01T12:00:01 node1',
    '  probe job fate   PENDING (job requeued in held state)',
    `  requeued probe   ${requeued}`,
    `  nodes            ${nodes}`,
    '  fault removed    at 9.00 s',
    '  resume           resumed',
    '  resume → idle    0.30 s',
    '  follow-up job    2 COMPLETED in 0.70 s',
    '  total            11.00 s',
    'result: PASS',
  ].join('\n');

t.test('ran elsewhere: both nodes in the report and its text', async (t) => {
  const done = job('completed_elsewhere');
  const r = report({ outcome: 'ran-elsewhere', why: `ran on ${done.nodeList} after ${done.restarts} requeue(s)`, released: true, nodeList: done.nodeList, batchHost: done.batchHost, restarts: done.restarts, state: done.state, ms: 6200 });
  t.same(validate('drill', r), [], 'validates');
  const text = renderDrill(r);
  t.equal(text, rendered('ran on node2 (BatchHost node2, Restarts=1) COMPLETED in 6.20 s', 'drilled node1; the probe ended on node2'), 'the drilled node, where the probe ran');
});

t.test('one-node cluster: cancelled, and said why', async (t) => {
  const held = job('requeued_held');
  const r = report({ outcome: 'cancelled', why: 'cancelled: no other node of partition debug can take it', released: false, nodeList: held.nodeList, batchHost: held.batchHost, restarts: held.restarts, state: 'CANCELLED', ms: 40 });
  t.same(validate('drill', r), [], 'validates');
  t.equal(renderDrill(r), rendered('cancelled: no other node of partition debug can take it', 'drilled node1; the probe ended on -'));
});

t.test('the schema refuses what the drill never writes', async (t) => {
  const ok = report({ outcome: 'not-followed', why: 'the probe job was not requeued', released: false, nodeList: null, batchHost: null, restarts: null, state: null, ms: null });
  t.same(validate('drill', ok), []);
  t.notSame(validate('drill', { ...ok, version: 1 }), [], 'version 1 (no requeue) is not this shape');
  t.notSame(validate('drill', { ...ok, requeue: { ...ok.requeue, outcome: 'moved' } }), [], 'an unknown outcome');
  const { requeue: _gone, ...noRequeue } = ok;
  t.same(validate('drill', noRequeue), [": must have required property 'requeue'"], 'requeue is required (the only error)');
  t.notSame(validate('drill', { ...ok, extra: 1 }), [], 'no extra keys');
});
