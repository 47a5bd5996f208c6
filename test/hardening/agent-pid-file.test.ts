// The Prolog wrapper reads the agent's pid file before it asks: a file that is no pid (large, sparse, all digits,
// all newlines) costs it nothing. bash's read skips NUL bytes, so `read -r apid` of a sparse 4 GiB file ran through
// all of it (~9 s a GiB on this machine) before the gate started; the wrapper now reads up to 24 characters or a NUL.
import { spawnSync } from 'node:child_process';
import { mkdirSync, truncateSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { makeGateEnv } from '../helpers/gate-env.js';
import { JOB, installWrapper, lastRun, slurmdShim } from '../agent/_agent.js';

const cases: [string, (file: string) => void][] = [
  ['sparse, 4 GiB of NULs', (f) => { writeFileSync(f, ''); truncateSync(f, 4 * 2 ** 30); }],
  ['16 MiB of digits, no newline', (f) => writeFileSync(f, '7'.repeat(16 << 20))],
  ['16 MiB of newlines', (f) => writeFileSync(f, '\n'.repeat(16 << 20))],
];

for (const [i, [what, make]] of cases.entries())
  t.test(`agent.pid ${what}, beside a FIFO nobody reads: the gate judges in process at once`, async (t) => {
    const e = makeGateEnv();
    const dir = path.join(e.dir, 'agent');
    mkdirSync(dir, { mode: 0o700 });
    t.equal(spawnSync('/usr/bin/mkfifo', ['-m', '600', path.join(dir, 'requests')]).status, 0);
    make(path.join(dir, 'agent.pid'));
    const script = installWrapper(e, `AGENT=${dir}\nAGENT_TIMEOUT=60\n`);
    const job = String(7001 + i);
    // (The bound tells a read of the whole file from none: the old wrapper needed over 30 s for the first case.)
    const r = spawnSync(slurmdShim(e.dir), [script], { encoding: 'utf8', env: { ...JOB, SLURM_JOB_ID: job }, cwd: '/', timeout: 20_000 });
    t.same([r.status, r.signal, r.stderr], [0, null, ''], 'exit 0, nothing on stderr');
    t.same([lastRun(e)?.job, lastRun(e)?.startup, lastRun(e)?.agent], [job, 'snapshot', undefined], 'judged in process; no agent asked (no pid)');
  });
