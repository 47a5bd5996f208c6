// The health check's resume and an Epilog's drain at once: the Epilog's bw- drain written over our link drain between the health check's last read and its resume is never lifted with it.
import t from 'tap';
import { chmodSync, existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { cliBackground } from '../helpers/cli.js';
import { healthy, probes } from '../epilog/_cli.js';
import type { EpilogEnv } from '../epilog/_env.js';

/** The GPU-memory band of a class whose paths do better than this one's 23.03 Gb/s: the next Epilog drains. */
function raiseGpuBand(e: EpilogEnv): void {
  const b = JSON.parse(readFileSync(e.baseline, 'utf8')) as { classes: { probes: { probe: string; warnBelow: number; failBelow: number }[] }[] };
  e.setEnvelopes(b.classes[0]!.probes.map((x) => (x.probe === 'ib-write-gpu' ? { ...x, warnBelow: 40, failBelow: 30 } : x)));
}

const LINK = 'gdrgate: pcie-link 0000:41:00.0 Gen5 x8 (want Gen5 x16) job=3';
const BW = 'gdrgate: bw-gpu-path mlx5_0/0000:41:00.0 p50 23.03 Gb/s over 4 (want >= 30 Gb/s) job=4';

t.test("an Epilog's bw- drain lands between the health check's last read and its resume: the node stays drained for it", async (t) => {
  const e = await healthy(3);
  raiseGpuBand(e);
  const exe = path.join(e.dir, 'scontrol');
  const [goEpilog, held] = ['go-epilog', 'held'].map((f) => path.join(e.dir, f)) as [string, string];
  // The Epilog's GPU probe waits until the health check has read the node a second time: its drain comes just after.
  const ib = path.join(e.dir, 'ib_write_bw');
  writeFileSync(ib, `#!/bin/bash\nwhile [ ! -e "${goEpilog}" ]; do sleep 0.02; done\nexec "${probes('healthy').tools.ibWriteBw}" "$@"\n`);
  chmodSync(ib, 0o755);
  e.writeConfig({ ...probes('healthy'), tools: { ...probes('healthy').tools, ibWriteBw: ib } }, { deadlineMs: 120_000, scontrolTimeoutMs: 30_000 });

  // Our link drain from an earlier run, and its record (the health check may lift only what gdrgate wrote).
  t.equal(spawnSync(exe, ['update', 'nodename=gpu001', 'state=drain', `reason=${LINK}`]).status, 0);
  writeFileSync(path.join(e.spool, 'drain-reason.json'), `${JSON.stringify({ node: 'gpu001', reason: LINK, at: new Date().toISOString() })}\n`);
  const calls = path.join(e.dir, 'scontrol.calls');
  writeFileSync(calls, '');

  // The second `show` (the health check's read after its re-check) answers what slurmctld had, then waits for a drain
  // to be written (at most 10 s): the answer reaches the health check after the Epilog's drain, as a slow reply does.
  renameSync(exe, `${exe}.real`);
  writeFileSync(
    exe,
    `#!/bin/bash\nD="${e.dir}"\nif [ "$1" = show ] && ! mkdir "$D/show.1" 2>/dev/null && mkdir "$D/show.2" 2>/dev/null; then\n` +
      `  s=$("${exe}.real" "$@"); : > "${held}"; : > "${goEpilog}"\n` +
      `  end=$((\${EPOCHREALTIME/./} + 10000000)); until grep -q state=drain "${calls}" || ((\${EPOCHREALTIME/./} > end)); do sleep 0.02; done\n  printf '%s\\n' "$s"; exit 0\nfi\nexec "${exe}.real" "$@"\n`,
  );
  chmodSync(exe, 0o755);

  const epilog = cliBackground(['epilog', '--config', e.config], { SLURMD_NODENAME: 'gpu001', SLURM_JOB_ID: '4', SLURM_SCRIPT_CONTEXT: 'epilog_slurmd' });
  const health = cliBackground(['health', '--config', e.config], { SLURMD_NODENAME: 'gpu001', SLURM_JOB_ID: '' });
  const [h, ep] = await Promise.all([health, epilog]);
  t.equal(existsSync(held), true, 'the health check read the node a second time');
  t.equal(h.code, 0, 'the health check judged the node healthy');
  t.equal(ep.code, 1, 'the Epilog drained');
  const state = readFileSync(path.join(e.dir, 'scontrol.state'), 'utf8');
  t.same([/ State=(\S+) /.exec(state)?.[1], / Reason=(.*) \[root@/.exec(state)?.[1] ?? null], ['IDLE+DRAIN', BW], "the node is drained for the Epilog's reason");
  t.same(readFileSync(calls, 'utf8').trimEnd().split('\n').filter((l) => l.startsWith('update')), ['update nodename=gpu001 state=resume', `update nodename=gpu001 state=drain reason=${BW}`], 'the resume first, then the drain');
});
