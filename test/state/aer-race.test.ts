// pcie-aer's reference with two runs at once: a health check that read the counters before a burst, held in its scontrol call, must not put them back over the reference of a Prolog that judged the burst meanwhile.
import t from 'tap';
import { chmodSync, existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { cli, cliBackground, type CliRun } from '../helpers/cli.js';
import { makeEpilogEnv } from '../epilog/_env.js';

const GPU = '0000:41:00.0';
const cor = (n: number): string => `RxErr 0\nBadTLP ${n}\nBadDLLP 0\nRollover 0\nTimeout 0\nNonFatalErr 0\nCorrIntErr 0\nHeaderOF 0\nTOTAL_ERR_COR ${n}\n`;

/** Waits for `file` to appear (a barrier, bounded: the test fails rather than hangs). */
async function until(file: string, ms = 60_000): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; await sleep(20)) if (existsSync(file)) return true;
  return false;
}

t.test('a health check held in scontrol after reading the counters: a Prolog judges a burst meanwhile; the burst is judged once', async (t) => {
  const e = await makeEpilogEnv(1);
  e.writeConfig({}, { deadlineMs: 60_000, scontrolTimeoutMs: 30_000 });
  const cfg = JSON.parse(readFileSync(e.config, 'utf8')) as Record<string, unknown>;
  delete cfg.probes;
  writeFileSync(e.config, JSON.stringify(cfg));
  const errors = (n: number): void => writeFileSync(path.join(e.tree, 'sys/bus/pci/devices', GPU, 'aer_dev_correctable'), cor(n));
  const reference = (): number | null => (JSON.parse(readFileSync(path.join(e.dir, 'run', 'aer-last.json'), 'utf8')) as { devices: Record<string, { cor: number | null }> }).devices[GPU]?.cor ?? null;
  const state = (): string => {
    const s = readFileSync(path.join(e.dir, 'scontrol.state'), 'utf8');
    return / State=IDLE\+DRAIN /.test(s) ? `drained: ${/ Reason=(.*) \[root@/.exec(s)?.[1] ?? '?'}` : 'idle';
  };
  const env = { SLURMD_NODENAME: 'gpu001' };
  const prolog = (job: string): CliRun => cli(['prolog', '--config', e.config], { ...env, SLURM_JOB_ID: job, SLURM_JOB_UID: '0', SLURM_JOB_GID: '0', SLURM_SCRIPT_CONTEXT: 'prolog_slurmd' });

  t.equal(prolog('10').code, 0, 'a first Prolog records the reference');
  t.equal(reference(), 0);

  // The first `show` (the health check's, after its judgement) waits at a barrier: a slurmctld slow to answer.
  const exe = path.join(e.dir, 'scontrol');
  renameSync(exe, `${exe}.real`);
  const [held, go, gate] = ['held', 'go', 'gate'].map((f) => path.join(e.dir, f)) as [string, string, string];
  writeFileSync(exe, `#!/bin/bash\nif [ "$1" = show ] && mkdir "${gate}" 2>/dev/null; then : > "${held}"; while [ ! -e "${go}" ]; do sleep 0.02; done; fi\nexec "${exe}.real" "$@"\n`);
  chmodSync(exe, 0o755);

  const health = cliBackground(['health', '--config', e.config], { ...env, SLURM_JOB_ID: '' });
  t.equal(await until(held), true, 'the health check judged the node (no burst yet) and waits in scontrol show');
  errors(150);
  const p = prolog('11');
  t.equal(p.code, 1, 'a Prolog meanwhile judges the burst and drains');
  t.equal(state(), 'drained: gdrgate: pcie-aer 0000:41:00.0 +150 (want growth <= 100) job=11');
  t.equal(reference(), 150, 'and moves the reference to what it judged');

  writeFileSync(go, '');
  const h = await health;
  t.equal(h.code, 0, 'the health check ends healthy');
  t.equal(reference(), 150, 'the reference stays the newest counters judged, not the health check\'s older ones');
  const next = prolog('12');
  t.equal(next.code, 0, 'the next Prolog judges no growth: the burst was judged once');
  t.same(e.drainCalls(), ['update nodename=gpu001 state=drain reason=gdrgate: pcie-aer 0000:41:00.0 +150 (want growth <= 100) job=11'], 'one drain for one burst');
});
