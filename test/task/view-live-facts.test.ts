// The job's view read from the facts a live H100 VM's TaskProlog gathered (test/fixtures/device-h200-live/
// package-2026-12-07e-h100/trace-task.txt, its printf of the facts): that VM has no RDMA adapter, and its
// /sys/class/infiniband_verbs holds only abi_version, its /dev/infiniband only rdma_cm. Neither is a verbs device: the
// view has none, and a job there judged without a record (standalone) gets no verbs device "missing".
import fs from 'node:fs';
import t from 'tap';
import { FactHost, parseFacts } from '../../src/task/facts.js';
import { accessProbe } from '../../src/task/access.js';
import { judge } from '../../src/task/judge.js';
import { readJobView } from '../../src/task/view.js';
import { fixture } from '../helpers/paths.js';

const trace = fs.readFileSync(fixture('device-h200-live/package-2026-12-07e-h100/trace-task.txt'), 'utf8');
const printf = trace.split('\n').find((l) => l.includes(`printf '%s\\n' 'gdrgate-task-facts 1 `))!;
// xtrace quotes each argument ('…'); the last, `end`, bare.
const args = [...printf.slice(printf.indexOf(`'gdrgate-task-facts`)).matchAll(/'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2]!);
const facts = parseFacts(args.join('\n') + '\n');

t.test('the live facts: abi_version and rdma_cm are listed, and are no verbs devices of the view', async (t) => {
  if (!facts.ok) throw new Error(facts.error);
  t.same([facts.value.list.get('/sys/class/infiniband'), facts.value.list.get('/sys/class/infiniband_verbs'), facts.value.list.get('/dev/infiniband')], [{ t: 'is', v: [] }, { t: 'is', v: ['abi_version'] }, { t: 'is', v: ['rdma_cm'] }], 'as the VM listed them');
  const host = new FactHost(facts.value.root, facts.value);
  const view = await readJobView(host, accessProbe(host));
  t.same([view.hcas, view.verbsClass, view.uverbs], [{ state: 'present', value: [] }, { state: 'present', value: [] }, { state: 'present', value: [] }]);
  const f = judge({ view, rlimitMemlock: undefined, state: null, min: { value: 'unlimited', from: 'default (no baseline)' } });
  t.same(f.map((x) => [x.status, x.code, x.message]), [
    ['warn', 'job-no-rdma', 'no RDMA adapter is visible (/sys/class/infiniband is empty or absent)'],
    ['pass', 'job-memlock-ok', 'memlock is unlimited in this job'],
  ], 'the warning alone, no job-uverbs-missing');
});
