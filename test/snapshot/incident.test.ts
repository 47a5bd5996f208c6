// docs/incident.md and the README's copy of its suspect stay true: their outputs are what the commands print today on
// the same two trees.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CLI, REPO } from '../helpers/paths.js';
import { buildIncident } from './incident-trees.js';

const DOC = readFileSync(`${REPO}/docs/incident.md`, 'utf8');
const README = readFileSync(`${REPO}/README.md`, 'utf8');

/** The output printed under `$ <cmd>` in the doc, up to the next prompt or the end of the block. */
function printed(cmd: string, doc = DOC): string {
  const at = doc.indexOf(`$ ${cmd}\n`);
  if (at < 0) throw new Error(`${doc === DOC ? 'docs/incident.md' : 'README.md'} does not show ${cmd}`);
  const rest = doc.slice(at + cmd.length + 3);
  return rest.slice(0, Math.min(...['\n$ ', '\n```'].map((m) => (rest.includes(m) ? rest.indexOf(m) : rest.length)))) + '\n';
}

t.test('the compare outputs in docs/incident.md are real', async (t) => {
  const dir = t.testdir();
  await buildIncident(dir);
  const run = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { cwd: dir, encoding: 'utf8' });
  for (const [name, root] of [['gpu017', 'suspect'], ['gpu002', 'reference']]) t.equal(run('snapshot', '--root', root!, '--out', `${name}.tar.gz`).status, 0);
  const cap = run('baseline', 'capture', '--root', 'gpu002.tar.gz', '--class', 'hgx-h100', '--match', 'gpu[001-064]');
  writeFileSync(path.join(dir, 'hgx-h100.json'), cap.stdout);
  for (const [cmd, code] of [['compare gpu017.tar.gz gpu002.tar.gz', 1], ['compare gpu002.tar.gz reference', 0], ['compare gpu017.tar.gz hgx-h100.json', 1], ['compare gpu017.tar.gz gpu002.tar.gz --json', 1]] as const) {
    const r = run(...cmd.split(' '));
    t.equal(r.status, code, cmd);
    t.equal(r.stdout + (cmd.endsWith('--json') ? '' : `(exit ${code})\n`), printed(`gdrgate ${cmd}`), cmd);
  }
  const check = run('check', '--root', 'gpu017.tar.gz');
  t.equal(check.stdout.split('\n').filter((l) => l && !l.startsWith('PASS')).join('\n') + '\n', printed('gdrgate check --root gpu017.tar.gz | grep -v "^PASS"'));
  const tree = run('check', '--root', 'suspect');
  t.equal(tree.stdout.split('\n').filter((l) => l && !l.startsWith('PASS')).join('\n') + '\n', printed('gdrgate check --root suspect | grep -v "^PASS"', README), "the README's suspect");
});
