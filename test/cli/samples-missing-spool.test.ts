// `gdrgate samples` on a spool that cannot be read: exit 2 with the reason, and --prom writes no textfile (an old
// one is left untouched to go stale), never a freshly dated one claiming 0 skipped lines.
import t from 'tap';
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { cli } from '../helpers/cli.js';

t.test('a missing spool: exit 2, said, no textfile written', async (t) => {
  const dir = t.testdir();
  const spool = path.join(dir, 'nonexistent');
  const prom = path.join(dir, 'gdrgate.prom');
  const r = cli(['samples', '--spool', spool, '--prom', prom]);
  t.equal(r.code, 2);
  t.equal(r.stdout, '');
  t.equal(r.stderr, `gdrgate: cannot read the spool ${spool}: cannot list ${spool}: ENOENT: no such file or directory, scandir '${spool}'; ${prom} not written\n`);
  t.equal(existsSync(prom), false);
  // An older textfile stays as it was.
  writeFileSync(prom, 'old\n');
  t.equal(cli(['samples', '--spool', spool, '--prom', prom]).code, 2);
  t.equal(readFileSync(prom, 'utf8'), 'old\n');
  const j = cli(['samples', '--spool', spool, '--json']);
  t.equal(j.code, 2);
  t.equal(j.stdout, '');
});

t.test('an empty spool directory is not an error: no samples, exit 0', async (t) => {
  const spool = path.join(t.testdir(), 'spool');
  mkdirSync(spool);
  const r = cli(['samples', '--spool', spool]);
  t.equal(r.code, 0);
  t.same(r.stdout.split('\n'), [`no samples in ${spool}`, `spool ${spool}: 0 file(s), 0 samples`, '']);
});
