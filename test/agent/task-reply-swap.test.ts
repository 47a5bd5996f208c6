// The agent answers into the asker's pipe through /proc/<pid>/fd/<fd>. A job's user who flips that descriptor between
// the pipe and a file they may only read, while their proven requests are answered, must never make root open that
// file for writing (the review of e8e7aec: 512 write opens of a root-owned 0644 file in 8 s, by a look then an open).
// The agent is watched by strace -y for its opens; the flipping is bash's own dup2 (exec redirections) as the user.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { startRig, USER } from '../task/_agent-rig.js';

const STRACE = '/usr/bin/strace';
const SECONDS = 4;

if (process.getuid?.() !== 0) t.skip('needs root (the agent is root, the requests come from another uid)', () => {});
else if (!fs.existsSync(STRACE)) t.skip(`needs ${STRACE} (Debian strace: .ci/run installs it)`, () => {});
else await main();

async function main(): Promise<void> {
  const rig = await startRig();
  t.teardown(() => rig.close());
  await t.test("a reply descriptor flipped to a file the user may read: root never opens that file for writing", async (t) => {
    t.equal(rig.prolog('900'), 0, "prolog: job 900 is USER's");
    rig.conf(true);
    t.equal((await rig.task({ SLURM_JOB_ID: '900', SLURM_STEP_ID: '0' })).code, 0, 'a TaskProlog of the job: its facts are the template');
    const job = path.join(rig.stateDir, 'job-900');
    const template = fs.readdirSync(job).find((f) => f.endsWith('.facts'));
    t.not(template, undefined, 'the facts a TaskProlog wrote');
    const victim = path.join(rig.work, 'victim.conf');
    fs.writeFileSync(victim, 'ClusterName=x\n', { mode: 0o644 });
    const trace = path.join(rig.work, 'agent.strace');
    const st = spawn(STRACE, ['-f', '-y', '-qq', '-e', 'trace=openat,open', '-o', trace, '-p', String(rig.agent.pid)], { stdio: 'ignore' });
    await new Promise((r) => setTimeout(r, 500));
    // As USER: facts of its own (its pid, its nonce), proven requests naming fd 87 with a config that is not the
    // agent's (a quick "fallback" answer), and fd 87 flipped between a pipe and the victim between requests.
    const attack = [
      'exec 86<<<"" && exec 86<>"/proc/$$/fd/86" && read -r -u 86 _ || exit 3',
      'n=0123456789abcdef; { printf "gdrgate-task-facts 1 %s %s %s 0\\n" "$n" "$$" "$UID"; tail -n +2 "$3"; } >"$2/task.swap$$.facts" || exit 4',
      'exec 88<>"$1" || exit 5',
      'end=$((SECONDS + $6)); k=0',
      'while ((SECONDS < end)); do',
      '  printf "v1 task 900 %s 87 swap%s %s /not/the/agent/config\\n" "$$" "$$" "$n" >&88; k=$((k + 1))',
      '  for ((i = 0; i < 40; i++)); do exec 87<&86; exec 87<"$4"; done',
      '  while read -r -t 0 -u 86 && read -r -t 0.001 -u 86 _; do :; done',
      'done',
      'echo "$k requests"',
    ].join('\n');
    const a = spawn('/bin/bash', ['-c', attack, 'swap', path.join(rig.stateDir, 'tasks-900'), job, path.join(job, template!), victim, '', String(SECONDS)], { uid: USER, gid: USER, stdio: ['ignore', 'pipe', 'pipe'] });
    let said = '';
    a.stdout!.on('data', (d: Buffer) => (said += d.toString()));
    a.stderr!.on('data', (d: Buffer) => (said += d.toString()));
    const code = await new Promise((r) => a.on('close', r));
    await new Promise((r) => setTimeout(r, 300));
    st.kill('SIGINT');
    await new Promise((r) => st.on('exit', r));
    t.equal(code, 0, `the user's requests went: ${said.trim()}`);
    const opens = fs.readFileSync(trace, 'utf8').split('\n').filter((l) => l.includes(`<${victim}>`));
    t.same(opens.filter((l) => /O_WRONLY|O_RDWR/.test(l)), [], 'no open of the victim for writing');
    t.equal(fs.readFileSync(victim, 'utf8'), 'ClusterName=x\n', 'the victim as it was');
    t.comment(`${said.trim()}; the agent's opens of the victim (references only): ${opens.length}`);
  });
}
