// The agent judges a Prolog's limits, not its own: readMemlock with a pid reads that process's
// RLIMIT_MEMLOCK and walks up from it. A real child with its memlock lowered, on this machine's live /proc.
import { spawn } from 'node:child_process';
import t from 'tap';
import { FsHost } from '../../src/host/fs-host.js';
import { readMemlock } from '../../src/inventory/memlock.js';
import { Notes } from '../../src/inventory/read.js';
import { findSlurmd } from '../../src/inventory/slurmd.js';

t.test("a client's /proc/<pid>: its memlock, not this process's", async (t) => {
  const child = spawn('/bin/bash', ['-c', 'ulimit -S -l 48 && exec /bin/sleep 30'], { stdio: 'ignore' });
  t.teardown(() => void child.kill('SIGKILL'));
  // Wait for the exec: until then /proc/<pid>/limits may still be bash's before ulimit ran.
  for (let i = 0; i < 200; i++) {
    const comm = await new FsHost('/').readText(`/proc/${child.pid}/comm`);
    if (comm.ok && comm.value.trim() === 'sleep') break;
    await new Promise((r) => setTimeout(r, 10));
  }
  const host = new FsHost('/');
  const mine = await readMemlock(host, new Notes(), findSlurmd(host, new Notes(), [], '/proc/self'));
  t.equal(mine[0]!.pid, 'self', '/proc/self: no pid in the subject');
  const my = mine[0]!.limit;
  if (my.state !== 'present') throw new Error(`own memlock unreadable: ${my.why}`);
  t.not(my.value.soft, 48 * 1024, "this process's own soft limit is another");
  const theirs = await readMemlock(host, new Notes(), findSlurmd(host, new Notes(), [], `/proc/${child.pid!}`), child.pid!);
  t.same(theirs[0], { who: 'self', pid: child.pid, limit: { state: 'present', value: { soft: 48 * 1024, hard: my.value.hard } } }, 'the soft limit it set, the hard limit it inherited');
});
