// `baseline capture` (from one node) writes only what `baseline validate` and every Prolog accept: a class the
// schema refuses (its name, here) is refused at capture, exit 2, nothing on stdout, instead of a file that turns the gate off.
import t from 'tap';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { cli } from '../helpers/cli.js';
import { REPO } from '../helpers/paths.js';

const ROOT = path.join(REPO, 'examples/h200-vm');
const PATTERN = 'must match pattern "^[A-Za-z0-9_.-]{1,64}$"';

t.test('a class name the schema refuses: capture exits 2 and writes nothing', async (t) => {
  for (const name of ['H200 SXM', 'h200/ib', 'x'.repeat(65)]) {
    const r = cli(['baseline', 'capture', '--root', ROOT, '--class', name, '--match', 'gpu*']);
    t.strictSame({ code: r.code, stdout: r.stdout }, { code: 2, stdout: '' }, JSON.stringify(name));
    const last = r.stderr.trim().split('\n').pop();
    t.equal(last, `gdrgate: baseline capture (not written): /classes/0/name: ${PATTERN}`, `${JSON.stringify(name)}: says why`);
  }
});

t.test('a name the schema takes: written, and validate takes it', async (t) => {
  const dir = t.testdir({});
  const r = cli(['baseline', 'capture', '--root', ROOT, '--class', 'h200.sxm_5-a', '--match', 'gpu*']);
  t.equal(r.code, 0);
  const file = path.join(dir, 'b.json');
  writeFileSync(file, r.stdout);
  const v = cli(['baseline', 'validate', file]);
  t.strictSame({ code: v.code, stdout: v.stdout }, { code: 0, stdout: `${file}: valid, 1 class(es): h200.sxm_5-a [gpu*] virtualized, 1 devices\n` });
});
