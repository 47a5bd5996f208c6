// A command still running when the gate ends (its deadline fired, an error) dies with it: ExecaExec starts each
// command in its own process group, so nothing else would ever kill it.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { REPO } from '../helpers/paths.js';
import { scratchDir } from '../helpers/scratch.js';

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

t.test('process.exit while a command runs: its process group is killed, not left behind', async (t) => {
  const dir = scratchDir('gdrgate-reaper-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const pidFile = path.join(dir, 'pid');
  const exec = pathToFileURL(path.join(REPO, 'dist/host/exec.js')).href;
  // The command writes its pid, then sleeps a minute; the parent exits as soon as the pid is there.
  const script = `
    import { ExecaExec } from ${JSON.stringify(exec)};
    import { existsSync } from 'node:fs';
    void new ExecaExec().run('/bin/sh', ['-c', 'echo $$ > "$0"; exec /bin/sleep 60', ${JSON.stringify(pidFile)}], { timeoutMs: 60_000 });
    const poll = setInterval(() => { if (existsSync(${JSON.stringify(pidFile)})) { clearInterval(poll); process.exit(0); } }, 20);
  `;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 90_000 });
  t.equal(r.status, 0, `the parent exited by itself (${r.stderr.trim() || 'no stderr'})`);
  t.ok(existsSync(pidFile), 'the command had started');
  const pid = Number(readFileSync(pidFile, 'utf8').trim());
  t.ok(pid > 1, `its pid ${pid}`);
  // SIGKILL is delivered at once; a zombie is reaped by init soon after. Wait for it, bounded by the sleep itself.
  for (let i = 0; i < 250 && alive(pid); i++) await new Promise((res) => setTimeout(res, 20));
  const st = alive(pid) ? readFileSync(`/proc/${pid}/stat`, 'utf8').split(' ')[2] : 'gone';
  t.ok(st === 'gone' || st === 'Z', `the sleep was killed with the parent (state ${st}), not left for 60 s`);
});
