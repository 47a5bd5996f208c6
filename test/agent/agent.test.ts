// gdrgate agent as Slurm meets it: slurm/prolog.sh (unchanged, its .conf beside it) asks a running agent first.
// The agent answers only "healthy"; a broken node, another config, a stopped or dead agent, or an agent whose code
// changed on disk all end in the gate running in the Prolog's own process, which judges and drains. Real runs of
// the built package on the bundled capture, with a recording scontrol.
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { breakLink, makeGateEnv } from '../helpers/gate-env.js';
import { CLI, REPO } from '../helpers/paths.js';
import { agentRuns, healthyRun, JOB, lastRun, lines, maskedRun, slurmdShim, startAgent, stderrRecords, stderrShows, wrapper, type Agent } from './_agent.js';

/** The agent's first line on stderr, masked as stderrRecords() gives it. */
const listening = (e: { config: string }, a: Agent): Record<string, unknown> => ({ level: 30, time: '<time>', tool: 'gdrgate', pid: a.proc.pid, dir: a.dir, config: e.config, msg: 'gdrgate agent listening' });
/** A warning of the agent's on stderr, masked likewise. */
const warned = (a: Agent, rest: Record<string, unknown>): Record<string, unknown> => ({ level: 40, time: '<time>', tool: 'gdrgate', pid: a.proc.pid, ...rest });

t.test('a healthy node: the agent answers, the Prolog prints its line and exits 0', async (t) => {
  const e = makeGateEnv();
  const a = await startAgent(e);
  t.teardown(() => void a.proc.kill('SIGKILL'));
  const run = wrapper(e, `AGENT=${a.dir}\n`);
  const r = run();
  t.equal(r.code, 0);
  t.match(r.stdout, /^gdrgate prolog node=vm job=42 result=healthy exit=0 \d+ms action=none\n$/);
  const logged = (await agentRuns(e, '42')).at(-1);
  t.same(maskedRun(logged, 'client'), healthyRun('42', 'agent', { pid: a.proc.pid, client: '<client>' }), 'logged by the agent');
  t.type(logged?.client, 'number', "with the Prolog's pid");
  t.ok(existsSync(path.join(e.dir, 'run', 'job-42', 'prolog.json')), "the job's state for the TaskProlog, from the Prolog's SLURM_* variables");
  t.same(e.drainCalls(), [], 'no scontrol');
  t.same(readdirSync(a.dir).sort(), ['agent.pid', 'requests'], 'no file besides the FIFO and the pid file');
  // Nothing is kept between requests: the next job is judged and recorded anew.
  t.equal(run({ ...JOB, SLURM_JOB_ID: '43' }).code, 0);
  t.same(maskedRun((await agentRuns(e, '43')).at(-1), 'client'), healthyRun('43', 'agent', { pid: a.proc.pid, client: '<client>' }));
  a.proc.kill('SIGTERM');
  t.equal(await a.exited, 0, 'SIGTERM: exit 0');
  t.same(readdirSync(a.dir), [], 'and its FIFO and pid file are gone');
  t.same(stderrRecords(a.stderr()), [listening(e, a), { level: 30, time: '<time>', tool: 'gdrgate', pid: a.proc.pid, dir: a.dir, why: 'SIGTERM', msg: 'gdrgate agent stopped' }], "the agent's own lines go to stderr");
});

// Settings a site's .conf may hold that once kept the Prolog from asking at all. BASH_COMPAT=50: a here-string is then a
// file, not the pipe it is in bash 5.1+, and the Prolog took no reply pipe. AGENT_TIMEOUT=99999999999999999: in
// hundredths, bash's 64-bit arithmetic wrapped it to a negative count, and the Prolog gave up at once ("its requests
// stayed unread") without asking. Each must still be answered by the agent.
for (const [what, conf, job] of [
  ['a here-string that is no pipe (BASH_COMPAT=50 in the .conf)', 'BASH_COMPAT=50', '8001'],
  ['an AGENT_TIMEOUT past 64-bit hundredths', 'AGENT_TIMEOUT=99999999999999999', '8101'],
] as const) {
  t.test(`${what}: the Prolog still asks the agent`, async (t) => {
    const e = makeGateEnv();
    const a = await startAgent(e);
    t.teardown(() => void a.proc.kill('SIGKILL'));
    const r = wrapper(e, `AGENT=${a.dir}\n${conf}\n`)({ ...JOB, SLURM_JOB_ID: job });
    t.same([r.code, r.stdout.replace(/ \d+ms /, ' ')], [0, `gdrgate prolog node=vm job=${job} result=healthy exit=0 action=none\n`]);
    t.same((await agentRuns(e, job)).map((l) => l.job), [job], 'answered by the agent');
  });
}

t.test('a broken node: the agent hands it back, the gate in the Prolog judges and drains', async (t) => {
  const e = makeGateEnv();
  const a = await startAgent(e);
  t.teardown(() => void a.proc.kill('SIGKILL'));
  const run = wrapper(e, `AGENT=${a.dir}\n`);
  t.equal(run().code, 0);
  breakLink(e.tree); // between two jobs: the agent must see it on the next request
  const r = run();
  t.equal(r.code, 1);
  t.equal(r.stdout.match(/^gdrgate prolog node=vm/gm)?.length, 1, 'one verdict printed, the in-process one');
  t.same(e.drainCalls(), ['update nodename=vm state=drain reason=gdrgate: pcie-link 0000:00:06.0 Gen5 x8 (want Gen5 x16) job=42'], 'drained once, by the in-process run');
  const drained = { result: 'unhealthy', exitCode: 1, reason: 'gdrgate: pcie-link 0000:00:06.0 Gen5 x8 (want Gen5 x16) job=42', action: 'drained', summary: { pass: 10, warn: 0, fail: 1, skip: 5, error: 0 } };
  t.same(maskedRun(lastRun(e), 'pid'), healthyRun('42', 'snapshot', { pid: '<pid>', agent: 'fallback: unhealthy: 1 failing finding(s)', ...drained }), 'the in-process run logs what the agent said');
  t.equal(lines(e).filter((l) => l.msg === 'gdrgate run' && l.startup === 'agent').length, 1, 'the agent logged only the healthy run');
});

// The same config under another path: the agent answers only for its own; and a path with a space cannot be asked for
// at all (a request is split at spaces: the agent would ignore the line, the Prolog wait its AGENT_TIMEOUT).
for (const [name, said] of [
  ['other.json', (e: { config: string }, other: string) => `fallback: the agent answers for ${e.config}, not ${other}`],
  ['with space.json', () => 'not asked: CONFIG has a space or a control character'],
] as const) {
  t.test(`CONFIG=.../${name}: judged in the Prolog, with no wait for an answer`, async (t) => {
    const e = makeGateEnv();
    const a = await startAgent(e);
    t.teardown(() => void a.proc.kill('SIGKILL'));
    const other = path.join(e.dir, name);
    copyFileSync(e.config, other);
    const r = wrapper(e, `AGENT=${a.dir}\nAGENT_TIMEOUT=30\nCONFIG='${other}'\n`)();
    t.equal(r.code, 0, 'healthy, judged in the Prolog');
    t.ok(r.ms < 30_000, `no 30 s wait (${r.ms.toFixed(0)} ms)`);
    t.same(maskedRun(lastRun(e), 'pid'), healthyRun('42', 'snapshot', { pid: '<pid>', agent: said(e, other) }));
  });
}

t.test('a stopped agent: the Prolog waits AGENT_TIMEOUT, then judges itself; the agent recovers', async (t) => {
  const e = makeGateEnv();
  const a = await startAgent(e);
  t.teardown(() => void a.proc.kill('SIGKILL'));
  const run = wrapper(e, `AGENT=${a.dir}\nAGENT_TIMEOUT=0.3\n`);
  a.proc.kill('SIGSTOP');
  const r = run();
  t.equal(r.code, 0);
  t.ok(r.ms >= 300, `waited the timeout (${r.ms.toFixed(0)} ms)`);
  t.same(maskedRun(lastRun(e), 'pid'), healthyRun('42', 'snapshot', { pid: '<pid>', agent: 'no answer within 0.3s' }));
  t.same(readdirSync(a.dir).sort(), ['agent.pid', 'requests'], 'nothing left behind by the Prolog');
  a.proc.kill('SIGCONT');
  const dropped = warned(a, { dropped: 1, msg: 'gdrgate agent: dropped 1 request(s): the Prolog stopped waiting before the answer' });
  t.same(stderrRecords(await stderrShows(a, /stopped waiting/)), [listening(e, a), dropped], 'the late answer finds nobody and says so');
  t.same(lines(e).filter((l) => l.msg === 'gdrgate run' && l.job === '42').map((l) => l.startup), ['snapshot'], 'and the agent logged no run (nor wrote state) for a job the Prolog judged itself');
  // The recovered agent is asked with the generous default timeout: 0.3 s is what a stopped agent gets, not what a
  // loaded machine's answer may take.
  const patient = wrapper(e, `AGENT=${a.dir}\n`);
  t.equal(patient({ ...JOB, SLURM_JOB_ID: '44' }).code, 0);
  t.same(maskedRun((await agentRuns(e, '44')).at(-1), 'client'), healthyRun('44', 'agent', { pid: a.proc.pid, client: '<client>' }), 'and the next Prolog is answered');
});

t.test('eight Prologs at once: one FIFO, no torn request, each answered with its own job', async (t) => {
  const e = makeGateEnv();
  const a = await startAgent(e);
  t.teardown(() => void a.proc.kill('SIGKILL'));
  // Eight at once on one agent, answered one after another: the last waits for the seven before it, which on a loaded
  // 2-core machine may take longer than one answer's default timeout.
  wrapper(e, `AGENT=${a.dir}\nAGENT_TIMEOUT=60\n`);
  const file = path.join(e.dir, 'gdrgate-prolog.sh');
  const slurmd = slurmdShim(e.dir);
  const jobs = ['101', '102', '103', '104', '105', '106', '107', '108'];
  const runs = await Promise.all(
    jobs.map(
      (job) =>
        new Promise<{ code: number | null; out: string }>((res) => {
          let out = '';
          const p = spawn(slurmd, [file], { env: { ...JOB, SLURM_JOB_ID: job }, cwd: '/', stdio: ['ignore', 'pipe', 'ignore'] });
          p.stdout!.on('data', (d: Buffer) => (out += d.toString()));
          p.on('close', (code) => res({ code, out }));
        }),
    ),
  );
  t.same(runs.map((r) => r.code), jobs.map(() => 0), 'all exit 0');
  t.same(runs.map((r) => /job=(\d+)/.exec(r.out)?.[1]), jobs, 'each printed its own job');
  const byAgent = (await agentRuns(e, ...jobs)).map((l) => l.job).sort();
  t.same(byAgent, jobs, 'all eight answered by the agent');
  t.same(jobs.filter((j) => !existsSync(path.join(e.dir, 'run', `job-${j}`, 'prolog.json'))), [], 'eight job states');
});

t.test('a dead agent (killed, its files left): the Prolog does not wait', async (t) => {
  const e = makeGateEnv();
  const a = await startAgent(e);
  a.proc.kill('SIGKILL');
  await a.exited;
  t.ok(existsSync(path.join(a.dir, 'requests')) && existsSync(path.join(a.dir, 'agent.pid')), 'FIFO and pid file remain');
  const r = wrapper(e, `AGENT=${a.dir}\nAGENT_TIMEOUT=30\n`)();
  t.equal(r.code, 0);
  // A wait would take AGENT_TIMEOUT (30 s) at least, however idle the machine: shorter than that, it did not wait
  // (the log's missing `agent` below says the same from the gate's side: it never asked).
  t.ok(r.ms < 30_000, `no 30 s wait: its pid is not alive (${r.ms.toFixed(0)} ms)`);
  t.same(maskedRun(lastRun(e), 'pid'), healthyRun('42', 'snapshot', { pid: '<pid>' }));
  t.notOk('agent' in lastRun(e), 'nothing was asked');
  // A Prolog wrapper of protocol v1 killed while it waited left its reply FIFO; the next agent clears it, and answers.
  const left = spawnSync('/usr/bin/mkfifo', [path.join(a.dir, 'reply.999999')]);
  t.equal(left.status, 0);
  const b = await startAgent(e);
  t.teardown(() => void b.proc.kill('SIGKILL'));
  t.same(readdirSync(b.dir).sort(), ['agent.pid', 'requests'], 'a new agent: its own FIFO and pid file, nothing else');
  t.equal(wrapper(e, `AGENT=${b.dir}\n`)().code, 0);
  t.equal((await agentRuns(e, '42')).length, 1, 'answered by the new agent');
});

t.test('its code changed on disk: the agent answers fallback once and exits for its service manager', async (t) => {
  const e = makeGateEnv();
  const marker = path.join(e.dir, 'code-marker');
  writeFileSync(marker, 'v1');
  const a = await startAgent(e, ['--watch', marker]);
  t.teardown(() => void a.proc.kill('SIGKILL'));
  const run = wrapper(e, `AGENT=${a.dir}\n`);
  t.equal(run().code, 0);
  t.equal((await agentRuns(e, '42')).length, 1, 'answered by the agent');
  writeFileSync(marker, 'v2, longer');
  t.equal(run().code, 0, 'judged in the Prolog');
  const changed = `fallback: gdrgate changed on disk since the agent started (${marker}); the agent exits for its service manager to restart it`;
  t.same(maskedRun(lastRun(e), 'pid'), healthyRun('42', 'snapshot', { pid: '<pid>', agent: changed }));
  t.equal(await a.exited, 0, 'the agent exited 0');
  t.same(readdirSync(a.dir), [], 'removing its FIFO and pid file');
});

t.test('a malformed request is logged and ignored; the agent keeps serving', async (t) => {
  const e = makeGateEnv();
  const a = await startAgent(e);
  t.teardown(() => void a.proc.kill('SIGKILL'));
  // Root could write anything into the FIFO: a line from another tool, or half a line.
  const w = spawnSync('/bin/bash', ['-c', `printf 'hello\\nv2 prolog 12\\nv1 prolog 12 /c\\n' 1<>${a.dir}/requests`]);
  t.equal(w.status, 0);
  t.equal(wrapper(e, `AGENT=${a.dir}\n`)().code, 0);
  t.equal((await agentRuns(e, '42')).length, 1, 'answered by the agent');
  const ignored = (why: string): Record<string, unknown> => warned(a, { why, msg: 'gdrgate agent: request ignored' });
  t.same(stderrRecords(await stderrShows(a, /not answered any more/)), [
    listening(e, a),
    ignored('unknown protocol "hello" (want v2)'),
    ignored('want "v2 prolog <pid> <fd> <config>", got 3 fields'),
    ignored('protocol v1 (a reply FIFO) is not answered any more: that Prolog wrapper is older than this agent; it judges itself after its timeout'),
  ]);
});

t.test('the agent refuses a directory others can enter, or one under a directory others can write', async (t) => {
  const e = makeGateEnv();
  const dir = path.join(e.dir, 'open');
  mkdirSync(dir, { mode: 0o755 });
  chmodSync(dir, 0o755);
  const r = spawnSync(process.execPath, [CLI, 'agent', '--config', e.config, '--dir', dir], { encoding: 'utf8', timeout: 30_000 });
  t.equal(r.status, 2, 'a configuration error');
  t.equal(r.stderr, `gdrgate: agent directory ${dir} has mode 755; want 700\n`);
  t.same(readdirSync(dir), [], 'nothing made in it');
  // 0700 itself, but under a directory anyone may write: its entries could be renamed away and replaced.
  const open2 = path.join(e.dir, 'shared');
  mkdirSync(open2);
  chmodSync(open2, 0o777);
  const r2 = spawnSync(process.execPath, [CLI, 'agent', '--config', e.config, '--dir', path.join(open2, 'agent')], { encoding: 'utf8', timeout: 30_000 });
  t.equal(r2.status, 2);
  t.equal(r2.stderr, `gdrgate: agent directory: ${open2}/agent would lie where another user could redirect it: ${open2} is writable by anyone (mode 777)\n`);
});

t.test("a config anyone may change: the agent takes no stateDir from it (no chmod, no TaskProlog FIFOs), as no Prolog takes the config", async (t) => {
  for (const [cfgMode, want] of [[0o644, true], [0o666, false]] as const) {
    const e = makeGateEnv();
    const stateDir = path.join(e.dir, 'run');
    mkdirSync(stateDir, { mode: 0o755 });
    chmodSync(stateDir, 0o755);
    chmodSync(e.config, cfgMode);
    const a = await startAgent(e);
    t.teardown(() => void a.proc.kill('SIGKILL'));
    const st = (): [number, boolean] => [statSync(stateDir).mode & 0o7777, existsSync(path.join(stateDir, '.task-fifos'))];
    if (want) await stderrShows(a, () => st()[1]);
    a.proc.kill('SIGTERM');
    await a.exited;
    t.same(st(), want ? [0o711, true] : [0o755, false], `config mode ${cfgMode.toString(8)}: ${want ? 'its stateDir made the agent\'s' : 'its stateDir left as it was'}`);
  }
});

t.test('the example service unit: valid for systemd, and naming the directory the wrapper asks', async (t) => {
  const unit = path.join(REPO, 'examples/systemd/gdrgate-agent.service');
  const text = readFileSync(unit, 'utf8');
  const key = (k: string): string => new RegExp(`^${k}=(.*)$`, 'm').exec(text)?.[1] ?? '';
  const wrapperAgent = /^AGENT=(.*)$/m.exec(readFileSync(path.join(REPO, 'slurm/prolog.sh'), 'utf8'))?.[1];
  t.equal(`/run/${key('RuntimeDirectory')}`, wrapperAgent, "systemd makes the directory slurm/prolog.sh's AGENT names");
  t.equal(key('RuntimeDirectoryMode'), '0700', 'closed to all but root, as the agent requires');
  t.equal(key('ExecStart'), `/usr/bin/node --max-semi-space-size=16 --expose-gc /usr/lib/node_modules/gdrgate/dist/gdrgate.cjs agent --config /etc/gdrgate/config.json --dir ${wrapperAgent}`, 'the agent serves that directory');
  t.equal(key('Restart'), 'always', 'restarted after it exits for an upgrade');
  // ProtectSystem=full makes /usr read-only to the service: the blob its ExecStartPre writes there needs ReadWritePaths.
  const out = / --out (\S+)$/.exec(key('ExecStartPre'))?.[1] ?? '';
  t.same([key('ProtectSystem'), out.startsWith('/usr/'), key('ReadWritePaths').split(/\s+/).some((p) => out.startsWith(`${p}/`))], ['full', true, true], `${out} is writable to the service`);
  const analyze = '/usr/bin/systemd-analyze';
  if (!existsSync(analyze)) {
    // Under CI the oracle must be there (systemd is in every image .ci/run runs on); by hand, said and not checked.
    t.equal(process.env.CI === undefined, true, `${analyze} absent: the unit's syntax is not checked`);
    return;
  }
  const r = spawnSync(analyze, ['verify', unit], { encoding: 'utf8', timeout: 30_000 });
  // verify also checks that ExecStart's binary exists: only a missing /usr/bin/node (no Node package) is tolerated.
  const complaints = r.stderr.split('\n').filter((l) => l.trim() && !/\/usr\/bin\/node/.test(l));
  t.same(complaints, [], `systemd-analyze verify: ${r.stderr.trim() || 'no complaint'}`);
});
