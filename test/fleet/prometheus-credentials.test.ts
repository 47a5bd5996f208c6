// A --prometheus URL with a user and password: the fleet report (its text, its JSON, its notes) names the server
// without them, since the report is shared; a URL without credentials is named as it was given.
import t from 'tap';
import { copyFileSync } from 'node:fs';
import path from 'node:path';
import { statsSources } from '../../src/cli/fleet.js';
import { runFleetReport } from '../../src/fleet/report-command.js';
import { renderFleetText } from '../../src/fleet/text.js';
import { REPO } from '../helpers/paths.js';
import { scratchDir } from '../helpers/scratch.js';

t.test('the source is named without its credentials', async (t) => {
  t.same(statsSources({ prometheus: 'http://alice:s3cret@127.0.0.1:9/prom' }).map((s) => s.name), ['prometheus http://127.0.0.1:9/prom']);
  t.same(statsSources({ prometheus: 'http://alice@127.0.0.1:9' }).map((s) => s.name), ['prometheus http://127.0.0.1:9/']);
  t.same(statsSources({ prometheus: 'http://127.0.0.1:9' }).map((s) => s.name), ['prometheus http://127.0.0.1:9']);
});

t.test('a report whose Prometheus cannot be reached says so without the password, and the source once', async (t) => {
  const dir = scratchDir('gdrgate-fleet-cred-');
  copyFileSync(path.join(REPO, 'examples/h200-vm.tar.gz'), path.join(dir, 'gpu0001.tar.gz'));
  const { report } = await runFleetReport({ dir, baseline: null, sources: statsSources({ prometheus: 'http://alice:s3cret@127.0.0.1:9/' }) });
  const text = renderFleetText(report);
  t.equal(`${text}\n${JSON.stringify(report)}`.includes('s3cret'), false, 'the password is nowhere in the report');
  t.same(report.problems.filter((p) => p.startsWith('prometheus ')), [
    'prometheus http://127.0.0.1:9/: GET http://127.0.0.1:9/api/v1/query?query=gdrgate_bandwidth_bytes_per_second%7Bwindow%3D%22all%22%2Cstat%3D%7E%22p50%7Cmin%22%7D: bad port',
  ]);
});
