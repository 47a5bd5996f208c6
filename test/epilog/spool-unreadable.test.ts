// A spool the Epilog cannot read is no spool: it judges nothing from it (pending), and it writes no textfile that would
// read as a fresh, healthy history of one sample with nothing skipped; the older textfile is left to go stale, as
// `gdrgate samples --prom` leaves it (one rule: src/epilog/collect.ts unreadableSpool).
import t from 'tap';
import { readFileSync, rmSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { cli } from '../helpers/cli.js';
import { scratchDir } from '../helpers/scratch.js';
import { healthy, last } from './_cli.js';

t.test('samples.jsonl replaced by a link (planted, or a restore gone wrong): no textfile from it, and why in the log', async (t) => {
  const dir = scratchDir('gdrgate-prom-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const prom = path.join(dir, 'gdrgate.prom');
  const e = await healthy(3, { promFile: prom });
  const before = readFileSync(prom, 'utf8');
  t.equal(before.split('\n').filter((l) => l.startsWith('gdrgate_bandwidth_samples{') && l.includes('probe="ib-write-gpu"') && l.includes('window="all"')).map((l) => l.split(' ').pop()).join(), '3');
  const live = path.join(e.spool, 'samples.jsonl');
  rmSync(live);
  symlinkSync('/etc/hostname', live);
  const s = cli(['samples', '--config', e.config, '--prom', path.join(dir, 'by-samples.prom')]);
  t.equal(s.code, 2);
  const r = e.epilog('4');
  t.equal(r.code, 0, r.stderr);
  t.equal(/ result=(\S+) /.exec(last(r.stdout))?.[1], 'healthy');
  t.strictSame(r.stdout.split('\n').filter((l) => l.startsWith('SKIP')).map((l) => l.split(/\s+/).slice(0, 2).join(' ')), ['SKIP bw-pending', 'SKIP bw-pending', 'SKIP bw-pending'], 'host, GPU and nvbandwidth judged from nothing: pending');
  t.equal(readFileSync(prom, 'utf8'), before, 'the textfile is the one written before, left to go stale');
  const logged = readFileSync(e.log, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { msg: string; writeErrors?: string[] }).filter((l) => l.writeErrors);
  const said = logged.pop()?.writeErrors?.find((w) => w.startsWith('textfile ')) ?? '';
  t.equal(said.slice(0, said.indexOf(': cannot read the spool ')), `textfile ${prom} not written`);
});
