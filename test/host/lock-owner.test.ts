// A lock's owner is its pid and that process's start time: a holder killed without releasing leaves its pid to be
// reused by any process (a job user's too), and by pid alone its lock held off every drain, probe and spool rotation
// until its age ran out (60 s for drain.lock). The lock now records its owner's start (/proc/<pid>/stat field 22);
// a live pid with another start is a stale lock, broken at once.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { takeLock } from '../../src/host/lock.js';
import { ownerRuns, ownStartTicks, startTicks } from '../../src/host/process.js';
import { scratchDir } from '../helpers/scratch.js';

const holder = (pid: string): string => `held${pid}`;

/** A real process of this machine, running `name` (a copy of sleep, so its command name is `name`). */
function sleeper(t: Test, name = 'sleep'): ChildProcess {
  const dir = scratchDir('gdrgate-lock-owner-');
  const exe = path.join(dir, name);
  fs.copyFileSync('/bin/sleep', exe);
  fs.chmodSync(exe, 0o755);
  const child = spawn(exe, ['60'], { stdio: 'ignore' });
  t.teardown(() => child.kill('SIGKILL'));
  return child;
}

/** Waits until the child's /proc entry shows it running its own program (not still the fork of this process). */
async function started(child: ChildProcess, name: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    const comm = fs.readFileSync(`/proc/${child.pid!}/comm`, 'utf8').trim();
    if (comm === name.slice(0, 15)) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`${name} did not start`);
}

function lockIn(text: string): string {
  const file = path.join(scratchDir('gdrgate-lock-owner-'), 'drain.lock');
  fs.writeFileSync(file, text, { mode: 0o600 });
  return file;
}

t.test('a live pid that started when the lock says holds it; one that started at another time does not', async (t) => {
  const child = sleeper(t);
  await started(child, 'sleep');
  const start = startTicks(child.pid!);
  t.not(start, null, 'the child\'s start is read');
  const held = lockIn(`${child.pid!} ${Date.now()} abc start=${start!}\n`);
  t.strictSame(takeLock(held, { staleMs: 60_000, holder }), { ok: false, held: true, why: `held (pid ${child.pid!})` });
  const reused = lockIn(`${child.pid!} ${Date.now()} abc start=${String(BigInt(start!) + 1n)}\n`);
  const l = takeLock(reused, { staleMs: 60_000, holder });
  t.equal(l.ok, true, 'the pid was reused: the lock is stale, broken and ours');
  t.equal(fs.readFileSync(reused, 'utf8').startsWith(`${process.pid} `), true, 'now naming this process');
});

t.test('a lock written without its owner\'s start is judged by the pid, as before', async (t) => {
  const child = sleeper(t);
  await started(child, 'sleep');
  const file = lockIn(`${child.pid!} ${Date.now()} abc\n`);
  t.strictSame(takeLock(file, { staleMs: 60_000, holder }), { ok: false, held: true, why: `held (pid ${child.pid!})` });
});

t.test('the lock this process writes records its own start, which a second taker honours', (t) => {
  const file = path.join(scratchDir('gdrgate-lock-owner-'), 'probe.lock');
  const l = takeLock(file, { staleMs: 60_000, holder });
  t.equal(l.ok, true);
  const text = fs.readFileSync(file, 'utf8');
  t.equal(text.endsWith(` start=${ownStartTicks()!}\n`), true, text);
  t.strictSame(takeLock(file, { staleMs: 60_000, holder }), { ok: false, held: true, why: `held (pid ${process.pid})` });
  t.end();
});

t.test('the start is found after a command name with spaces and parentheses', async (t) => {
  const name = 'a) 1 2 (b) c';
  const child = sleeper(t, name);
  await started(child, name);
  const stat = fs.readFileSync(`/proc/${child.pid!}/stat`, 'utf8');
  t.equal(stat.startsWith(`${child.pid!} (${name}) `), true, stat);
  // Field 22 counted from the start of a name without spaces: the same process as seen through a plain name.
  const plain = stat.replace(`(${name})`, '(x)').split(' ')[21];
  t.equal(startTicks(child.pid!), plain);
});

t.test('a stat that is not there or not a stat line gives no start', (t) => {
  const proc = scratchDir('gdrgate-lock-owner-proc-');
  t.equal(startTicks(4242, proc), null, 'no such process');
  fs.mkdirSync(path.join(proc, '4243'));
  fs.writeFileSync(path.join(proc, '4243', 'stat'), '4243 (x) S 1 2\n');
  t.equal(startTicks(4243, proc), null, 'too few fields');
  t.end();
});

t.test('a stat line at its widest (every number 20 digits, a 15-byte name) gives its start', (t) => {
  // proc(5): 52 fields; pid, the name in parentheses, the state, then 49 numbers, none wider than 2^64's 20 digits.
  const proc = scratchDir('gdrgate-lock-owner-proc-');
  const wide = '18446744073709551615';
  const fields = ['4244', '(kworker/u1024:7)', 'S', ...Array.from({ length: 49 }, (_, i) => (i === 18 ? '12345678901234567890' : wide))];
  fs.mkdirSync(path.join(proc, '4244'));
  fs.writeFileSync(path.join(proc, '4244', 'stat'), `${fields.join(' ')}\n`);
  t.equal(startTicks(4244, proc), '12345678901234567890');
  t.end();
});

t.test("a live owner whose start cannot be read (a /proc that hides it, hidepid=2) still holds its lock: could not tell is not stale", async (t) => {
  const child = sleeper(t);
  await started(child, 'sleep');
  const start = startTicks(child.pid!)!;
  const hidden = scratchDir('gdrgate-lock-owner-proc-');
  t.same([ownerRuns(child.pid!, start), ownerRuns(child.pid!, start, hidden), ownerRuns(child.pid!, `${start}1`)], [true, true, false]);
});

t.test('a lock naming no owner (empty: its taker between create and write; or foreign) is judged by its age alone', (t) => {
  // 4194305: above PID_MAX_LIMIT (2^22), never a process; followed by a letter, not a pid at all.
  for (const text of ['', 'x\n', '4194305x\n', '0 1765000000000 abc start=1\n']) {
    const file = lockIn(text);
    t.strictSame(takeLock(file, { staleMs: 60_000, holder }), { ok: false, held: true, why: 'held' }, `fresh ${JSON.stringify(text)}: held`);
    const old = new Date(Date.now() - 120_000);
    fs.utimesSync(file, old, old);
    t.equal(takeLock(file, { staleMs: 60_000, holder }).ok, true, `old ${JSON.stringify(text)}: broken and ours`);
  }
  t.end();
});

t.test('release removes the lock only while it is still ours: one broken and retaken meanwhile is left to its owner', (t) => {
  const file = path.join(scratchDir('gdrgate-lock-owner-'), 'drain.lock');
  const l = takeLock(file, { staleMs: 60_000, holder });
  if (!l.ok) throw new Error(l.why);
  fs.rmSync(file);
  const other = `${process.pid + 1} ${Date.now()} other\n`;
  fs.writeFileSync(file, other, { mode: 0o600 });
  l.release();
  t.equal(fs.readFileSync(file, 'utf8'), other);
  t.end();
});
