// drill run through the built CLI: once it has lifted the drill's own drain, no exit leaves the fault armed on the
// re-opened node (the probe job not submitted; SIGHUP while it is being submitted).
import t from 'tap';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { loadDrill } from '../../src/drill/file.js';
import { cli } from '../helpers/cli.js';
import { makeGateEnv, type GateEnv } from '../helpers/gate-env.js';
import { CLI, fixture } from '../helpers/paths.js';

/** Stand-ins beside the fake scontrol (where drill run looks first): sbatch as given, the others record and succeed. */
function clients(env: GateEnv, sbatch: string): void {
  for (const [name, body] of [['sbatch', sbatch], ['squeue', ''], ['sinfo', ''], ['scancel', '']] as const) {
    const exe = path.join(env.dir, name);
    writeFileSync(exe, `#!/bin/bash\necho "${name} $*" >> "${env.calls}"\n${body}\n`);
    chmodSync(exe, 0o755);
  }
}

function started(env: GateEnv): string {
  const s = cli(['drill', 'start', '--config', env.config, '--node', 'vm', '--fault', 'memlock=64K', '--drain']);
  if (s.code !== 0) throw new Error(s.stdout + s.stderr);
  return /drill ([0-9a-f]{8}) armed/.exec(s.stdout)![1]!;
}

const IDLE = readFileSync(fixture('scontrol/show_node_o_idle_22.05.8.txt'), 'utf8');
const stateDir = (env: GateEnv): string => path.join(env.dir, 'run');
const nodeState = (env: GateEnv): string => readFileSync(path.join(env.dir, 'scontrol.state'), 'utf8');
const lastCall = (env: GateEnv, re: RegExp): string | undefined => readFileSync(env.calls, 'utf8').split('\n').filter((l) => re.test(l)).at(-1);

t.test('sbatch fails after the drill drain was lifted: the drill file is removed, the node is idle without the fault', async (t) => {
  const env = makeGateEnv();
  clients(env, 'echo "sbatch: error: Batch job submission failed: Socket timed out on send/recv operation" >&2; exit 1');
  started(env);
  t.equal(loadDrill(stateDir(env), 'vm').ok, true, 'arranged: the drill is armed');
  const r = cli(['drill', 'run', '--config', env.config, '--node', 'vm', '--step-seconds', '1']);
  t.equal(r.code, 1, 'the drill failed: exit 1');
  t.match(r.stdout, /^result: FAIL — probe job not submitted: sbatch exited 1: sbatch: error: Batch job submission failed: Socket timed out on send\/recv operation$/m);
  t.equal(lastCall(env, /^update /), 'update nodename=vm state=resume', 'the drill drain was lifted (step 1)');
  t.equal(nodeState(env), IDLE, 'the node is back in service: IDLE, no reason');
  t.equal(loadDrill(stateDir(env), 'vm').ok, false, 'the drill is gone: no fault on the re-opened node');
  t.equal(existsSync(path.join(stateDir(env), 'drill.json')), false, 'drill file removed');
  const p = env.prolog();
  t.equal(p.code, 0, 'the next real job\'s Prolog passes');
  t.equal(env.drainCalls().length, 1, 'only the drill start drain: the Prolog drained nothing');
});

t.test('SIGHUP while the probe is being submitted: the drill file is removed (as for SIGINT and SIGTERM)', async (t) => {
  const env = makeGateEnv();
  const pidFile = path.join(env.dir, 'sbatch.pid');
  // sbatch says it was reached (drill run's handlers are set by then, the drill drain lifted), then hangs.
  clients(env, `echo $$ > "${pidFile}.new" && mv "${pidFile}.new" "${pidFile}"\nexec sleep 30`);
  const marker = started(env);
  const child = spawn(process.execPath, [CLI, 'drill', 'run', '--config', env.config, '--node', 'vm', '--step-seconds', '1'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
  const t0 = Date.now();
  while (!existsSync(pidFile) && Date.now() - t0 < 50_000) await new Promise((r) => setTimeout(r, 50));
  t.teardown(() => {
    // The hung sbatch outlives drill run: ended here, by its own pid.
    if (existsSync(pidFile)) {
      try {
        process.kill(Number(readFileSync(pidFile, 'utf8')));
      } catch {
        // already gone
      }
    }
  });
  t.equal(existsSync(pidFile), true, 'sbatch was reached');
  t.equal(lastCall(env, /^update /), 'update nodename=vm state=resume', 'the drill drain was lifted before the probe');
  child.kill('SIGHUP');
  const end = await ended;
  t.same(end, { code: 130, signal: null }, 'drill run handled SIGHUP and exited 130');
  t.equal(stderr, `gdrgate drill run: SIGHUP: drill file removed; the node may still be drained with drill=${marker} (gdrgate drill stop)\n`);
  t.equal(loadDrill(stateDir(env), 'vm').ok, false, 'the drill is gone');
  t.equal(nodeState(env), IDLE, 'the node: IDLE, no reason, no fault');
});
