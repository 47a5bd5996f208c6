// pcie-aer's reference over several runs of every mode (Prolog, health, Epilog, resume): who moves it and when, so that a correctable burst is judged once and a drain for it ends with the errors (docs/limits-and-state.md).
import t from 'tap';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { cli, type CliRun } from '../helpers/cli.js';
import { makeEpilogEnv, type EpilogEnv } from '../epilog/_env.js';

const GPU = '0000:41:00.0';
const cor = (n: number): string => `RxErr 0\nBadTLP ${n}\nBadDLLP 0\nRollover 0\nTimeout 0\nNonFatalErr 0\nCorrIntErr 0\nHeaderOF 0\nTOTAL_ERR_COR ${n}\n`;
const last = (r: CliRun): string => r.stdout.trim().split('\n').pop() ?? '';

interface Node {
  readonly e: EpilogEnv;
  errors(n: number): void;
  prolog(job: string): CliRun;
  health(): CliRun;
  resume(): CliRun;
  /** The GPU's correctable count in aer-last.json, the reference the next run judges from. */
  reference(): number | null;
  /** The fake scontrol's node state: drained with which reason, or idle. */
  state(): string;
}

async function node(extra: Record<string, unknown>): Promise<Node> {
  const e = await makeEpilogEnv(1);
  // What is tested is the state, not the clock: wide limits, so that a loaded machine never cuts a drain short.
  e.writeConfig({}, { deadlineMs: 60_000, scontrolTimeoutMs: 30_000, ...extra });
  const cfg = JSON.parse(readFileSync(e.config, 'utf8')) as Record<string, unknown>;
  delete cfg.probes;
  writeFileSync(e.config, JSON.stringify(cfg));
  const env = { SLURMD_NODENAME: 'gpu001' };
  return {
    e,
    errors: (n) => writeFileSync(path.join(e.tree, 'sys/bus/pci/devices', GPU, 'aer_dev_correctable'), cor(n)),
    prolog: (job) => cli(['prolog', '--config', e.config], { ...env, SLURM_JOB_ID: job, SLURM_JOB_UID: '0', SLURM_JOB_GID: '0', SLURM_SCRIPT_CONTEXT: 'prolog_slurmd' }),
    // HealthCheckProgram: slurmd's environment, no job.
    health: () => cli(['health', '--config', e.config], { ...env, SLURM_JOB_ID: '' }),
    resume: () => cli(['resume', '--config', e.config], { ...env, SLURM_JOB_ID: '' }),
    reference: () => {
      const ref = JSON.parse(readFileSync(path.join(e.dir, 'run', 'aer-last.json'), 'utf8')) as { devices: Record<string, { cor: number | null }> };
      return ref.devices[GPU]?.cor ?? null;
    },
    state: () => {
      const s = readFileSync(path.join(e.dir, 'scontrol.state'), 'utf8');
      return / State=IDLE\+DRAIN /.test(s) ? `drained: ${/ Reason=(.*) \[root@/.exec(s)?.[1] ?? '?'}` : 'idle';
    },
  };
}

const BURST = 'gdrgate: pcie-aer 0000:41:00.0 +150 (want growth <= 100)';

t.test('an idle node drained by the health check for a burst: not drained again after resume (resumeWhenHealthy off)', async (t) => {
  const n = await node({ resumeWhenHealthy: false });
  t.equal(n.prolog('10').code, 0, 'round 1, Prolog: passes, records the reference');
  t.equal(n.reference(), 0);
  t.equal(last(n.e.epilog('10')).endsWith(' aer=ok'), true, 'round 1, Epilog: no growth during the job');

  n.errors(150); // the node idles; the link throws 150 correctable errors, then stops
  const h1 = n.health();
  t.equal(h1.code, 1, 'round 2, health: drains for the burst');
  t.equal(n.state(), `drained: ${BURST}`);
  t.equal(n.reference(), 150, 'the health check moved the reference to what it judged');

  const h2 = n.health();
  t.equal(h2.code, 0, 'round 3, health: no new error, healthy', { stdout: h2.stdout });
  t.ok(/ result=healthy exit=0 \d+ms action=none$/.test(last(h2)), last(h2));
  t.equal(n.state(), `drained: ${BURST}`, 'left drained: this site resumes by hand');

  const r = n.resume();
  t.equal(r.code, 0, 'gdrgate resume: the re-check judges no growth since the drain', { stdout: r.stdout });
  t.equal(n.state(), 'idle');
  for (const round of [4, 5, 6]) {
    const h = n.health();
    t.equal(h.code, 0, `round ${round}, health after the resume: healthy, not drained again`, { stdout: h.stdout });
  }
  t.equal(n.e.drainCalls().length, 1, 'one drain in all');
  t.equal(n.state(), 'idle');

  n.errors(153);
  const h7 = n.health();
  t.equal(h7.code, 0, 'round 7: three new errors warn, never fail (the class allows 100)');
  t.equal(n.reference(), 153, 'and move the reference');
  t.equal(n.prolog('11').code, 0, 'round 8, Prolog: judged from the health check\'s counters, no growth');
  const log = readFileSync(n.e.log, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { msg?: string; job?: string; summary?: { warn: number; fail: number } });
  t.same(log.filter((l) => l.msg === 'gdrgate run' && l.job === '11').map((l) => l.summary && [l.summary.warn, l.summary.fail]), [[0, 0]], 'the three were warned once, by the health check');
});

t.test('health check with resumeWhenHealthy (the default): the drain ends with the errors, by itself', async (t) => {
  const n = await node({});
  t.equal(n.prolog('20').code, 0);
  n.errors(150);
  t.equal(n.health().code, 1, 'health drains for the burst');
  t.equal(n.state(), `drained: ${BURST}`);
  const h = n.health();
  t.ok(/ result=healthy exit=0 \d+ms action=resumed$/.test(last(h)), `the next health check finds no new error and resumes its own drain: ${last(h)}`);
  t.equal(n.state(), 'idle');
  t.equal(n.health().code, 0, 'and the one after leaves it');
  t.equal(n.e.drainCalls().length, 1);
});

t.test('a burst during a job, seen by the health check first: the Epilog does not judge it again', async (t) => {
  const n = await node({ resumeWhenHealthy: false });
  t.equal(n.prolog('30').code, 0, 'Prolog of job 30');
  n.errors(150);
  t.equal(n.health().code, 1, 'health during the job drains for the burst');
  t.equal(n.resume().code, 0, 'an admin resumes after looking');
  const ep = n.e.epilog('30');
  t.equal(ep.code, 0, "the job's Epilog judges from the health check's counters (newer than the job's Prolog's)", { stdout: ep.stdout });
  t.ok(last(ep).endsWith(' aer=ok'), last(ep));
  t.equal(n.e.drainCalls().length, 1, 'one drain for one burst');
  t.equal(n.state(), 'idle');

  // A burst during a job that nothing saw before the Epilog: the Epilog judges it against the job's Prolog.
  t.equal(n.prolog('31').code, 0);
  n.errors(300);
  const ep2 = n.e.epilog('31');
  t.equal(ep2.code, 1, 'the Epilog drains for a burst during its job');
  t.equal(n.reference(), 300, 'and moves the reference');
  t.equal(n.resume().code, 0, 'resume');
  t.equal(n.health().code, 0, 'the next health check: no new error');
  t.equal(n.prolog('32').code, 0, 'the next Prolog: no new error');
  t.equal(n.e.drainCalls().length, 2);
});

t.test('resume refuses while the link still errors since the drain, and leaves the reference to the next run', async (t) => {
  const n = await node({ resumeWhenHealthy: false });
  t.equal(n.prolog('40').code, 0);
  n.errors(150);
  t.equal(n.health().code, 1, 'drained');
  n.errors(400);
  const r = n.resume();
  t.equal(r.code, 1, 'not resumed: 250 more since the drain', { stdout: r.stdout });
  t.ok(/^gpu001: still unhealthy, left drained: pcie-aer 0000:41:00\.0: correctable errors \+250 /.test(r.stdout), r.stdout);
  t.equal(n.reference(), 150, 'a refused resume moves nothing');
  t.equal(n.state(), `drained: ${BURST}`);
});

t.test('a counter the previous run could not read: the errors since are unknown, never "CESta unchanged" (the kernel clears CESta)', async (t) => {
  const n = await node({ resumeWhenHealthy: false });
  const file = path.join(n.e.tree, 'sys/bus/pci/devices', GPU, 'aer_dev_correctable');
  renameSync(file, `${file}.away`);
  t.equal(n.prolog('50').code, 0, 'round 1: the counter unreadable');
  t.equal(n.reference(), null, 'the reference records no counter');
  renameSync(`${file}.away`, file);
  n.errors(500);
  const r = cli(['prolog', '--dry-run', '--config', n.e.config], { SLURMD_NODENAME: 'gpu001', SLURM_JOB_ID: '51' });
  const line = r.stdout.split('\n').find((l) => / pcie-aer +0000:41:00\.0 /.test(l));
  t.equal(line, `PASS    pcie-aer               ${GPU}         no uncorrectable error (fatal counter, non-fatal counter, UESta, CESta clean); no growth known: the previous run could not read the correctable counter of ${GPU}`, 'round 2: no growth known, said so');
  t.equal(r.code, 0);
  t.equal(n.prolog('52').code, 0, 'round 2 as a Prolog: the reference now counts from 500');
  t.equal(n.reference(), 500);
  n.errors(650);
  t.equal(n.prolog('53').code, 1, 'round 3: +150 since round 2 drains');
});
