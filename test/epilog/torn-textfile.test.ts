// A samples.jsonl line cut by a crash stays counted torn in the Epilog's own textfile: the Epilog appends (closing the
// cut line) before it writes the textfile, and a bare newline there made the line read as corrupt.
import t from 'tap';
import { appendFileSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { cli } from '../helpers/cli.js';
import { scratchDir } from '../helpers/scratch.js';
import { healthy, last } from './_cli.js';

t.test('a line cut by a crash, then an Epilog that appends and writes its textfile: torn 1, corrupt 0', async (t) => {
  const dir = scratchDir('gdrgate-prom-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const prom = path.join(dir, 'gdrgate.prom');
  const e = await healthy(1, { promFile: prom });
  const live = path.join(e.spool, 'samples.jsonl');
  // The crash: the first real sample line written again, cut at 120 bytes, no newline.
  appendFileSync(live, readFileSync(live, 'utf8').slice(0, 120));
  t.equal(last(cli(['samples', '--spool', e.spool, '--node', 'gpu001']).stdout), `spool ${e.spool}: 1 file(s), 3 samples, skipped 1 torn and 0 corrupt line(s)`);
  const r = e.epilog('2');
  t.equal(r.code, 0, r.stderr);
  t.equal(/ probes=ran samples=(\d+) /.exec(last(r.stdout))?.[1], '3');
  t.strictSame(readFileSync(prom, 'utf8').split('\n').filter((l) => l.startsWith('gdrgate_spool_skipped_lines{')), [
    'gdrgate_spool_skipped_lines{node="gpu001",kind="torn"} 1',
    'gdrgate_spool_skipped_lines{node="gpu001",kind="corrupt"} 0',
    'gdrgate_spool_skipped_lines{node="gpu001",kind="future"} 0',
  ]);
  t.equal(last(cli(['samples', '--spool', e.spool, '--node', 'gpu001']).stdout), `spool ${e.spool}: 1 file(s), 6 samples, skipped 1 torn and 0 corrupt line(s)`, 'gdrgate samples reads it the same, after the append');
});
