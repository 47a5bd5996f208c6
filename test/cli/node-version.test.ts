// gdrgate runs on Node 24.11 or later (package.json's engines): an older Node runs nothing and says why (exit 3, which
// the Slurm wrappers fail open on) instead of failing somewhere inside, perhaps only while it drains a node.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { NODE_MIN, nodeTooOld } from '../../src/version.js';
import { REPO } from '../helpers/paths.js';

t.test('nodeTooOld: older than NODE_MIN by any part is refused; equal, newer and unreadable are let run', async (t) => {
  const said = (v: string): string | null => nodeTooOld(v);
  const refused = (v: string): string => `gdrgate needs Node ${NODE_MIN} or later; this is Node ${v}`;
  t.same(
    ['20.20.2', '23.99.99', '24.10.9', '24.11.0', '24.11.1', '24.22.3', '25.0.0', '24.12.0', 'x', ''].map(said),
    [refused('20.20.2'), refused('23.99.99'), refused('24.10.9'), null, null, null, null, null, null, null],
  );
  t.equal(nodeTooOld(process.versions.node), null, 'the Node the tests run on');
});

t.test("NODE_MIN is package.json's engines floor", async (t) => {
  const engines = (JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node;
  t.equal(engines, `>=${NODE_MIN.replace(/\.0$/, '')} <25`);
});

// The real case: a node whose /usr/bin/node is its distribution's older Node (Debian's 20 here), named by a wrapper's
// default NODE. Skipped where that Node is absent or new enough.
const old = '/usr/bin/node';
const version = existsSync(old) ? spawnSync(old, ['--version'], { encoding: 'utf8' }).stdout.trim().replace(/^v/, '') : '';
if (version === '' || nodeTooOld(version) === null) {
  t.skip(`an older Node: ${old} is ${version || 'absent'}`, () => {});
} else {
  t.test(`the one-file program on ${old} (Node ${version}): exit 3, said, nothing judged`, async (t) => {
    const r = spawnSync(old, [path.join(REPO, 'dist/gdrgate.cjs'), 'prolog', '--dry-run', '--config', '/nonexistent.json'], { encoding: 'utf8', env: {}, timeout: 60_000 });
    t.same({ code: r.status, stdout: r.stdout, first: r.stderr.split('\n')[0] }, { code: 3, stdout: '', first: `gdrgate: gdrgate needs Node ${NODE_MIN} or later; this is Node ${version}` });
  });
}
