// An error after the verdict is decided (the drain's scontrol library throwing, the state record, the report) is the
// tool's: runHook logs it and keeps the verdict's exit code; it never reaches the top-level catch, whose exit 3 the
// wrappers fail open on. Driven in-process with stand-in judges, as test/engine/hook.test.ts.
import t from 'tap';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { runHook, type HookMode, type Judgement } from '../../src/engine/hook.js';
import type { Exec } from '../../src/host/exec.js';
import type { AnyFinding } from '../../src/model/finding.js';
import { fakeScontrol } from '../helpers/fake-scontrol.js';
import { scratchDir } from '../helpers/scratch.js';

const env = { SLURMD_NODENAME: 'vm', SLURM_JOB_ID: '7' };
const fail: AnyFinding = { check: 'pcie-link', code: 'link-degraded', status: 'fail', subject: '0000:17:00.0', message: 'trained down', expected: 'Gen5 x16', actual: 'Gen5 x8' };
const unhealthy: Judgement<null> = { outcome: { kind: 'unhealthy', failing: [fail] }, findings: [fail], work: null };
const healthy: Judgement<null> = { outcome: { kind: 'healthy' }, findings: [], work: null };
/** scontrol's library throws (as an older Node's did inside execa: "TEXT_ENCODINGS.union is not a function"). */
const broken: Exec = { run: async () => Promise.reject(new TypeError('TEXT_ENCODINGS.union is not a function')) };

function place() {
  const dir = scratchDir('gdrgate-hookafter-');
  const sc = fakeScontrol(dir);
  const config = path.join(dir, 'config.json');
  const log = path.join(dir, 'gate.log');
  writeFileSync(config, JSON.stringify({ baseline: path.join(dir, 'baseline.json'), scontrol: sc.path, logFile: log, stateDir: path.join(dir, 'run'), spool: path.join(dir, 'spool'), deadlineMs: 60_000 }));
  const lines = (): Record<string, unknown>[] => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>) : []);
  return { config, lines };
}

t.test('the drain throws: the verdict stands (Prolog 1, Epilog 0 as when its drain did not take), said and logged', async (t) => {
  for (const [mode, code] of [['prolog', 1], ['health', 1], ['epilog', 0]] as const) {
    const p = place();
    const r = await runHook<null, AnyFinding>({ mode, env, config: p.config, exec: broken, judge: async () => unhealthy });
    t.same([r.code, r.acted.action, r.acted.reason], [code, 'drain failed: internal error: TEXT_ENCODINGS.union is not a function', null], mode);
    const errs = p.lines().filter((l) => l.step === 'act');
    t.same(errs.map((l) => [l.level, l.msg]), [[50, 'gdrgate: internal error after the verdict (act); the verdict stands']], `${mode}: logged once`);
  }
  // health resumes a healthy node: the resume throwing leaves it healthy, 0.
  const p = place();
  const r = await runHook<null, AnyFinding>({ mode: 'health', env, config: p.config, exec: broken, judge: async () => healthy });
  t.same([r.code, r.acted.action], [0, 'resume failed: internal error: TEXT_ENCODINGS.union is not a function']);
});

t.test('record, later and render throwing: the exit code and the summary line stand, each error logged', async (t) => {
  for (const [mode, judged, code] of [['prolog', healthy, 0], ['prolog', unhealthy, 1], ['epilog', healthy, 0]] as [HookMode, Judgement<null>, number][]) {
    const p = place();
    const boom = (what: string) => async (): Promise<void> => Promise.reject(new Error(`${what} broke`));
    const r = await runHook<null, AnyFinding>({
      mode,
      env,
      config: p.config,
      exec: broken,
      judge: async () => judged,
      record: boom('record'),
      later: boom('later'),
      render: () => {
        throw new Error('render broke');
      },
    });
    if (r.handedBack) throw new Error('handed back');
    t.equal(r.code, code, `${mode} ${judged.outcome.kind}`);
    t.same(r.report, ['internal-error: the report could not be rendered: render broke']);
    t.same(p.lines().filter((l) => typeof l.step === 'string').map((l) => l.step).sort(), [...(judged === unhealthy ? ['act'] : []), 'later', 'record', 'render'].sort());
    const summary = /^gdrgate (prolog|epilog) node=vm job=7 result=(healthy|unhealthy) exit=(\d) /.exec(r.summary ?? '');
    t.same(summary?.slice(1), [mode, judged.outcome.kind, String(code)]);
  }
});
