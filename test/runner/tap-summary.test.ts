// scripts/tap-summary.mjs, the line CI reads: counts summed over several tap logs, and every failed test point
// repeated with its path and diagnostics (a CI that keeps only the tail of its output must still say which test
// failed). Run on real tap output: a small test file run by tap itself, failing at two depths.
import { spawnSync } from 'node:child_process';
import { symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { REPO } from '../helpers/paths.js';
import { scratchDir } from '../helpers/scratch.js';

const dir = scratchDir('gdrgate-tapsum-');
// The test files below import tap: resolved through the project's own node_modules.
symlinkSync(path.join(REPO, 'node_modules'), path.join(dir, 'node_modules'));
const SUMMARY = path.join(REPO, 'scripts/tap-summary.mjs');
const TAP = path.join(REPO, 'node_modules/.bin/tap');

/**
 * A tap log of `body` run by tap itself as a test file, beside a one-point file: tap writes its closing counts only
 * for a run of several files (as CI's is), and a log without them is counted as a failure.
 */
function tapLog(name: string, body: string): string {
  const file = path.join(dir, `${name}.test.mjs`);
  writeFileSync(file, `import t from 'tap';\n${body}\n`);
  const other = path.join(dir, `${name}-other.test.mjs`);
  writeFileSync(other, `import t from 'tap';\nt.ok(true, 'the other file');\n`);
  const r = spawnSync(TAP, ['--disable-coverage', '--reporter=tap', file, other], { cwd: dir, encoding: 'utf8', env: { ...outsideTap(), CI: 'true' }, timeout: 120_000 });
  const log = path.join(dir, `${name}.log`);
  writeFileSync(log, r.stdout + r.stderr);
  return log;
}
/** This process's environment without tap's own variables: with them the inner tap runs as this one's child. */
function outsideTap(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(TAP|_TAPJS|NODE_OPTIONS$)/.test(k)));
}
const summary = (...logs: string[]): string[] => spawnSync(process.execPath, [SUMMARY, ...logs], { encoding: 'utf8' }).stdout.trimEnd().split('\n');

const failing = tapLog(
  'failing',
  `t.test('outer', async (t) => { t.test('inner', async (t) => { t.equal(1, 2, 'one is two'); t.ok(true, 'fine'); }); t.ok(true); });
t.test('flat', async (t) => { t.ok(false, 'a flat failure'); });
t.test('passing', async (t) => { t.ok(true); });`,
);
const green = tapLog('green', `t.test('a', async (t) => { t.ok(true); t.ok(true); }); t.skip('later');`);

t.test('failures named innermost, with their path and diagnostics, before the counts', async (t) => {
  const out = summary(failing);
  t.equal(out.at(-1), '4 passed, 2 failed, 0 skipped');
  const named = out.filter((l) => l.startsWith('not ok - '));
  t.same(named.map((l) => l.replace(/^not ok - .*?failing\.test\.mjs > /, '')), ['outer > inner > one is two', 'flat > a flat failure'], 'each failing assertion once, not its parents');
  t.ok(out.some((l) => /^\s+-2$/.test(l)) && out.some((l) => /^\s+\+1$/.test(l)), 'the diff of the failed equal is shown');
});

t.test('several logs: counts summed; a green log adds no failure lines', async (t) => {
  const out = summary(failing, green);
  t.equal(out.at(-1), '7 passed, 2 failed, 1 skipped');
  t.same(summary(green), ['3 passed, 0 failed, 1 skipped']);
});

t.test('a log without tap\'s closing counts is a failure, never a pass', async (t) => {
  const cut = path.join(dir, 'cut.log');
  writeFileSync(cut, 'TAP version 14\nok 1 - something\n');
  t.equal(summary(cut).at(-1), '0 passed, 1 failed');
});
