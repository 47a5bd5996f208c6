// A probe never outlives the gate that started it: killed at the wrapper's hard bound (or by the OOM killer), the
// gate's own timers and exit handler never run, and a perftest server waiting in accept() held its port and a CUDA
// context on the next job's GPU until the next probing Epilog. Probes run under setpriv --pdeathsig KILL (util-linux
// 2.33+, src/probes/run.ts tiedProbes), so the kernel kills them with the gate. The real slurm/epilog.sh, HARD_TIMEOUT=3,
// a stand-in ib_write_bw that never answers (test/fixtures/probe-bin, `hang`), its pids written down.
import t from 'tap';
import { chmodSync, copyFileSync, existsSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { SETPRIV } from '../../src/probes/run.js';
import { CLI, REPO } from '../helpers/paths.js';
import { bin, makeEpilogEnv } from './_env.js';

const root = process.getuid?.() === 0;
t.test('killed at the hard bound mid-probe: no probe process is left', { skip: (!root && 'the wrapper starts only root\'s Node and program: needs root') || (!existsSync(SETPRIV) && `${SETPRIV} absent`) }, async (t) => {
  const e = await makeEpilogEnv(1);
  const tool = path.join(e.dir, 'ib_write_bw-hang');
  symlinkSync(bin('ib_write_bw'), tool);
  const pids = path.join(e.dir, 'pids');
  writeFileSync(pids, '');
  e.writeConfig({ tools: { ibWriteBw: tool, nvbandwidth: null }, sampling: {}, ibWriteBw: { timeoutMs: 30_000 }, budgetMs: 60_000 });
  const wrapper = path.join(e.dir, 'gdrgate-epilog.sh');
  copyFileSync(path.join(REPO, 'slurm/epilog.sh'), wrapper);
  chmodSync(wrapper, 0o755);
  writeFileSync(path.join(e.dir, 'gdrgate-epilog.conf'), `NODE=${process.execPath}\nCLI=${CLI}\nCONFIG=${e.config}\nHARD_TIMEOUT=3\nLOGGER=\n`, { mode: 0o644 });
  const r = spawnSync(wrapper, [], { env: { SLURM_JOB_ID: '9', SLURMD_NODENAME: 'gpu001', SLURM_SCRIPT_CONTEXT: 'epilog_slurmd' }, encoding: 'utf8', cwd: '/', timeout: 60_000 });
  t.equal(r.status, 0, r.stderr);
  t.equal(r.stderr.trim().split('\n').pop(), `gdrgate epilog: ${process.execPath} killed at the hard bound, 3s after the gate started, without a verdict; not failing the Epilog`);
  const started = readFileSync(pids, 'utf8').split('\n').filter(Boolean);
  t.equal(started.length, 2, 'the loopback server and its client were running');
  await new Promise((res) => setTimeout(res, 500));
  const left = started.filter((p) => existsSync(`/proc/${p}`) && !/^\d+ \(.*\) Z /.test(readFileSync(`/proc/${p}/stat`, 'utf8')));
  for (const p of left) process.kill(Number(p), 'SIGKILL');
  t.strictSame(left, [], 'none outlived the gate');
});

t.test('a tool root may not execute (mode 0644) is unusable, a skip, with or without setpriv in front (not its exit 126, an error)', async (t) => {
  const e = await makeEpilogEnv(1);
  const tool = path.join(e.dir, 'ib_write_bw');
  copyFileSync(bin('ib_write_bw'), tool);
  chmodSync(tool, 0o644);
  e.writeConfig({ tools: { ibWriteBw: tool, nvbandwidth: null }, sampling: {} });
  const r = e.epilog('4');
  t.equal(r.code, 0, r.stderr);
  t.strictSame(r.stdout.split('\n').filter((l) => /^(SKIP|ERR)/.test(l)).map((l) => l.replace(/\s+/g, ' ')), [
    `SKIP bw-tool-unusable mlx5_0: ${tool}: not executable (EACCES)`,
    `SKIP bw-tool-unusable mlx5_0/0000:41:00.0: ${tool}: not executable (EACCES)`,
  ]);
});
