// A reader that goes away (`gdrgate samples | head -1`) is a normal end for a report: every command ends quietly
// with the exit code it has when its output goes to /dev/null, and no stack trace; but a snapshot to stdout is data
// that must arrive whole, and a cut one fails (exit 3). The reader here exits before the command starts, so the
// first write meets a closed pipe (EPIPE) whatever the machine's speed.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';

import path from 'node:path';
import t from 'tap';
import { makeSample } from '../../src/samples/sample.js';
import { appendSamples } from '../../src/samples/spool.js';
import { makeGateEnv } from '../helpers/gate-env.js';
import { CLI, H200, REPO } from '../helpers/paths.js';
import { scratchDir } from '../helpers/scratch.js';

const q = (a: string): string => `'${a.replace(/'/g, `'\\''`)}'`;

/** `cmd` with stdout at `sink`: `/dev/null`, or `closed` (a pipe whose reader has already exited). */
function run(cmd: string[], sink: 'null' | 'closed', env: Record<string, string> = {}): { code: string; stderr: string } {
  const line = cmd.map(q).join(' ');
  const script = sink === 'null' ? `${line} >/dev/null; echo $?` : `{ /bin/sleep 0.3; ${line}; } | /bin/true; echo "\${PIPESTATUS[0]}"`;
  const r = spawnSync('/bin/bash', ['-c', script], { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 60_000 });
  return { code: r.stdout.trim(), stderr: r.stderr };
}

const spool = scratchDir('gdrgate-epipe-');
const recipe = { tool: 'ib_write_bw', args: ['-d', 'mlx5_0'], msgSize: 65536, iterations: 5000, durationS: null, qps: 1, numaNode: 0, direction: 'gpu->nic' } as const;
appendSamples(
  { dir: spool },
  Array.from({ length: 20 }, (_, i) => makeSample({ ts: Date.now() - i * 1000, node: 'gpu001', job: String(i), probe: 'ib-write-gpu', recipe, gpu: null, nic: 'mlx5_0', bytes: 65536, value: 90 + i / 10, unit: 'Gb/s' })),
);
const gate = makeGateEnv();
const job = { SLURMD_NODENAME: 'vm', SLURM_JOB_ID: '42' };
const node = process.execPath;

const commands: { what: string; cmd: string[]; env?: Record<string, string> }[] = [
  { what: 'samples', cmd: [node, CLI, 'samples', '--spool', spool] },
  { what: 'samples --json', cmd: [node, CLI, 'samples', '--spool', spool, '--json'] },
  { what: 'check', cmd: [node, CLI, 'check', '--root', H200] },
  { what: 'check --json', cmd: [node, CLI, 'check', '--root', H200, '--json'] },
  { what: 'topo', cmd: [node, CLI, 'topo', '--root', H200] },
  { what: 'baseline capture', cmd: [node, CLI, 'baseline', 'capture', '--root', H200] },
  { what: '--help', cmd: [node, CLI, '--help'] },
  { what: '--version', cmd: [node, CLI, '--version'] },
  { what: 'prolog --dry-run', cmd: [node, CLI, 'prolog', '--config', gate.config, '--dry-run'], env: job },
  { what: 'prolog from the startup snapshot', cmd: [node, '--snapshot-blob', path.join(REPO, 'dist/gate.blob'), 'prolog', '--config', gate.config, '--dry-run'], env: job },
];

for (const c of commands) {
  t.test(c.what, async (t) => {
    const quiet = run(c.cmd, 'null', c.env);
    const closed = run(c.cmd, 'closed', c.env);
    t.equal(closed.code, quiet.code, `exit ${quiet.code}, as with stdout at /dev/null`);
    t.notMatch(closed.stderr, /EPIPE|\n\s+at /, 'no EPIPE error, no stack trace');
  });
}

t.test('snapshot --out - into a reader that went away: a failure, said once, exit 3', async (t) => {
  const cmd = [node, CLI, 'snapshot', '--root', H200, '--out', '-'];
  const quiet = run(cmd, 'null');
  t.equal(quiet.code, '0');
  const closed = run(cmd, 'closed');
  t.equal(closed.code, '3');
  t.match(closed.stderr, new RegExp(`^gdrgate: snapshot of ${H200.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: stdout closed before the end; the archive written there is cut \\(\\d+ bytes were due\\)\n$`));
});

t.test('snapshot --out - | head -c 100: the reader leaves after 100 bytes; the snapshot fails', async (t) => {
  // What a pipe's buffer (64 KiB) takes before the reader leaves is gone without the writer knowing, as for any
  // tool: the tree gets /proc/modules padded with incompressible lines, so the archive (~300 KB) outgrows it.
  const big = path.join(scratchDir('gdrgate-epipe-big-'), 'tree');
  cpSync(H200, big, { recursive: true, verbatimSymlinks: true });
  const modules = path.join(big, 'proc/modules');
  writeFileSync(modules, randomBytes(240_000).toString('base64').replace(/.{100}/g, '$&\n') + '\n' + readFileSync(modules, 'utf8'));
  const line = [node, CLI, 'snapshot', '--root', big, '--out', '-'].map(q).join(' ');
  const r = spawnSync('/bin/bash', ['-c', `${line} | /usr/bin/head -c 100 | /usr/bin/wc -c; echo "\${PIPESTATUS[0]}"`], { encoding: 'utf8', timeout: 60_000 });
  t.equal(r.stdout, '100\n3\n', '100 bytes read, exit 3');
});
