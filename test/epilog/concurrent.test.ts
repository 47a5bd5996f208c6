// Fifty epilogs ending at once (a job array) under an hourly policy: one probes, the others skip; the spool gets
// exactly one probing run's samples and no torn line.
import t from 'tap';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { literal } from '../helpers/exactly.js';
import { CLI } from '../helpers/paths.js';
import { bin, makeEpilogEnv } from './_env.js';

const e = await makeEpilogEnv(1);
e.writeConfig({ tools: { ibWriteBw: bin('ib_write_bw-healthy'), nvbandwidth: bin('nvbandwidth') }, sampling: { minIntervalS: 3600 }, nvbandwidth: { testcases: ['host_to_device_memcpy_ce'] } });

const one = (job: string): Promise<{ code: number | null; out: string }> =>
  new Promise((res) => {
    const c = spawn(process.execPath, [CLI, 'epilog', '--config', e.config], { env: { ...process.env, SLURMD_NODENAME: 'gpu001', SLURM_JOB_ID: job } });
    let out = '';
    c.stdout.on('data', (d: Buffer) => (out += d.toString()));
    c.on('close', (code) => res({ code, out }));
  });

const runs = await Promise.all(Array.from({ length: 50 }, (_, i) => one(String(500 + i))));
t.strictSame(runs.map((r) => r.code), Array(50).fill(0), 'all exit 0');
const ran = runs.filter((r) => /probes=ran/.test(r.out));
t.equal(ran.length, 1, 'exactly one probed');
for (const r of runs.filter((x) => !/probes=ran/.test(x.out)))
  // (no pid when the holder had created its lock file but not yet written it: src/host/lock.ts reads it empty; "busy"
  // when the lock was released and taken again by another epilog twice between this one's tries, on a loaded machine)
  t.match(r.out, new RegExp(`^gdrgate epilog node=gpu001 job=5\\d\\d view=none removed=false probes=skipped \\((another epilog( \\(pid \\d+\\))? is probing|(another epilog probed meanwhile: )?last probing run \\d+ s ago \\(every 3600 s at most\\)|${literal(path.join(e.spool, 'probe.lock'))} is busy)\\) result=healthy exit=0 \\d+ms action=none\\n$`));
const lines = readFileSync(path.join(e.spool, 'samples.jsonl'), 'utf8').split('\n').filter(Boolean);
t.equal(lines.length, 3, 'one run of samples');
t.ok(lines.every((l) => JSON.parse(l)), 'every line whole');
