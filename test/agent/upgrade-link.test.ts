// Upgrades the agent must see though its files' inode, size and mtime stay: one that switches a link (a `current`
// link to a versioned directory, `npm install -g <dir>`, an alternatives or Nix profile link) leaves the agent's own
// files in place under their real paths, which Node runs it from, so the agent looks at the program it was started as
// too; one that rewrites a file in place keeping its size and mtime (`cp -p`, `rsync --inplace -t` of a build whose
// mtimes are fixed, as npm's are) changes its ctime. The Prolog after either is judged by the new code in its own
// process, and the agent exits for its service manager.
import { spawnSync } from 'node:child_process';
import { renameSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { makeGateEnv } from '../helpers/gate-env.js';
import { reachableBuild } from '../helpers/reachable.js';
import { agentRuns, lastRun, startAgent, wrapper } from './_agent.js';

t.test('the program link switched to another version: fallback once, the agent exits 0', async (t) => {
  const e = makeGateEnv();
  const v1 = path.dirname(path.dirname(reachableBuild(path.join(e.dir, 'v1'))));
  const v2 = path.dirname(path.dirname(reachableBuild(path.join(e.dir, 'v2'))));
  const current = path.join(e.dir, 'current');
  symlinkSync(v1, current);
  const cli = path.join(current, 'dist/cli.js');
  const a = await startAgent(e, [], [], cli);
  t.teardown(() => void a.proc.kill('SIGKILL'));
  const run = wrapper(e, `AGENT=${a.dir}\n`);
  t.equal(run().code, 0);
  t.equal((await agentRuns(e, '42')).length, 1, 'answered by the agent');
  // The upgrade: the link replaced at once by one to the new version (v1's files stay as they were).
  symlinkSync(v2, `${current}.new`);
  renameSync(`${current}.new`, current);
  t.equal(run().code, 0, 'judged in the Prolog');
  t.equal(lastRun(e).agent, `fallback: gdrgate changed on disk since the agent started (${cli}); the agent exits for its service manager to restart it`);
  t.equal(lastRun(e).startup === 'agent', false, 'not by the agent');
  t.equal(await Promise.race([a.exited, new Promise((r) => setTimeout(() => r('still running after 30 s'), 30_000).unref())]), 0, 'the agent exited 0');
});

t.test('a watched file rewritten in place, its size and mtime kept: fallback once, the agent exits 0', async (t) => {
  const e = makeGateEnv();
  const marker = path.join(e.dir, 'code-marker');
  writeFileSync(marker, 'v1.2.3');
  const was = statSync(marker);
  const a = await startAgent(e, ['--watch', marker]);
  t.teardown(() => void a.proc.kill('SIGKILL'));
  const run = wrapper(e, `AGENT=${a.dir}\n`);
  t.equal(run().code, 0);
  t.equal((await agentRuns(e, '42')).length, 1, 'answered by the agent');
  // The new version's file, stamped as the old one is (a build whose mtimes are fixed), copied over it with cp -p.
  const next = path.join(e.dir, 'next');
  writeFileSync(next, 'v1.2.4');
  t.equal(spawnSync('/usr/bin/touch', ['-r', marker, next]).status, 0);
  t.equal(spawnSync('/bin/cp', ['-p', next, marker]).status, 0);
  const now = statSync(marker);
  t.same([now.ino, now.size, now.mtimeMs], [was.ino, was.size, was.mtimeMs], 'the same inode, size and mtime');
  t.equal(run().code, 0, 'judged in the Prolog');
  t.equal(lastRun(e).agent, `fallback: gdrgate changed on disk since the agent started (${marker}); the agent exits for its service manager to restart it`);
  t.equal(await Promise.race([a.exited, new Promise((r) => setTimeout(() => r('still running after 30 s'), 30_000).unref())]), 0, 'the agent exited 0');
});
