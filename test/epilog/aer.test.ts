// pcie-aer through the commands Slurm runs: the Prolog records the counters, correctable errors grown during the job
// fail the job's Epilog (owned drain, gdrgate: pcie-aer reason), and the next Prolog starts from the Epilog's counters.
import t from 'tap';
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { cli } from '../helpers/cli.js';
import { last } from './_cli.js';
import { makeEpilogEnv } from './_env.js';

const GPU = '0000:41:00.0';
const cor = (n: number): string => `RxErr 0\nBadTLP ${n}\nBadDLLP 0\nRollover 0\nTimeout 0\nNonFatalErr 0\nCorrIntErr 0\nHeaderOF 0\nTOTAL_ERR_COR ${n}\n`;

t.test('Prolog → errors during the job → Epilog drains; the next Prolog judges from there', async (t) => {
  const e = await makeEpilogEnv(1);
  e.writeConfig({});
  const cfg = JSON.parse(readFileSync(e.config, 'utf8')) as Record<string, unknown>;
  delete cfg.probes;
  writeFileSync(e.config, JSON.stringify(cfg));
  const run = path.join(e.dir, 'run');
  const env = (job: string, ctx: string) => ({ SLURMD_NODENAME: 'gpu001', SLURM_JOB_ID: job, SLURM_JOB_UID: '0', SLURM_JOB_GID: '0', SLURM_SCRIPT_CONTEXT: ctx });
  const prolog = (job: string) => cli(['prolog', '--config', e.config], env(job, 'prolog_slurmd'));
  const counters = path.join(e.tree, 'sys/bus/pci/devices', GPU, 'aer_dev_correctable');

  const p1 = prolog('10');
  t.equal(p1.code, 0, 'first Prolog passes (no growth known yet)', { stderr: p1.stderr });
  t.ok(existsSync(path.join(run, 'aer-last.json')) && existsSync(path.join(run, 'aer-job-10.json')), 'counters recorded for the next Prolog and the Epilog');
  writeFileSync(counters, cor(150));
  const ep = e.epilog('10');
  t.equal(ep.code, 1, 'the Epilog drains: 150 correctable errors during the job', { stdout: ep.stdout, stderr: ep.stderr });
  t.match(last(ep.stdout), /^gdrgate epilog node=gpu001 job=10 view=none removed=true aer=fail:1 probes=none result=unhealthy exit=1 \d+ms reason="gdrgate: pcie-aer 0000:41:00.0 \+150 \(want growth <= 100\) job=10" action=drained$/);
  t.equal(e.drainCalls().length, 1);
  t.notOk(existsSync(path.join(run, 'aer-job-10.json')), "the job's record is taken");

  const { time, ...newest } = JSON.parse(readFileSync(path.join(run, 'aer-last.json'), 'utf8')) as Record<string, unknown>;
  t.match(time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  const zero = { cor: 0, rootCor: null, ceSta: 0 };
  t.same(newest, { format: 'gdrgate-aer-counters/1', boot: '6f1d2c3b-8a4e-4b7f-9e21-0c5d7a9b3e18', job: null, devices: { '0000:40:01.0': { ...zero, rootCor: 0 }, '0000:40:02.0': { ...zero, rootCor: 0 }, [GPU]: { ...zero, cor: 150 }, '0000:42:00.0': zero } }, 'the Epilog recorded the newest counters');
  const p2 = prolog('11');
  t.match(last(p2.stdout), /^gdrgate prolog node=gpu001 job=11 result=healthy exit=0 \d+ms action=none$/, 'the next Prolog ran', { stdout: p2.stdout });
  const log = readFileSync(e.log, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { msg?: string; job?: string; summary?: Record<string, number> });
  t.same(log.filter((l) => l.msg === 'gdrgate run' && l.job === '11').pop()?.summary, { pass: 21, warn: 0, fail: 0, skip: 3, error: 0 }, 'the burst is not judged twice: the Epilog\'s counters are the reference');
  writeFileSync(counters, cor(152));
  const p3 = prolog('12');
  t.equal(p3.code, 0, 'two more between jobs: a warning, the job runs', { stdout: p3.stdout });
  const run12 = readFileSync(e.log, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { msg?: string; job?: string; summary?: Record<string, number> }).filter((l) => l.msg === 'gdrgate run' && l.job === '12').pop();
  t.same(run12?.summary, { pass: 20, warn: 1, fail: 0, skip: 3, error: 0 }, 'warned against the previous Prolog');
  const e13 = e.epilog('12');
  t.equal(last(e13.stdout), 'gdrgate epilog node=gpu001 job=12 view=none removed=true aer=ok', 'no growth during job 12');
});
