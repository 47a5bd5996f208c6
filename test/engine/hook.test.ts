// runHook, the one Slurm hook life cycle (src/engine/hook.ts), driven in-process with stand-in judges: each mode's Slurm rules, the drain, the run line, the summary line, and an import graph small enough for a gate-only bundle.
import t from 'tap';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { MODES, runHook, type HookMode, type Judgement } from '../../src/engine/hook.js';
import type { AnyFinding } from '../../src/model/finding.js';
import { writeDrainRecord } from '../../src/slurm/drain-record.js';
import { fakeScontrol, type FakeScontrol } from '../helpers/fake-scontrol.js';
import { scratchDir } from '../helpers/scratch.js';

interface Place {
  readonly config: string;
  readonly log: string;
  readonly sc: FakeScontrol;
  runs(): Record<string, unknown>[];
}

function place(): Place {
  const dir = scratchDir('gdrgate-hook-');
  const sc = fakeScontrol(dir);
  const config = path.join(dir, 'config.json');
  const log = path.join(dir, 'gate.log');
  writeFileSync(config, JSON.stringify({ baseline: path.join(dir, 'baseline.json'), scontrol: sc.path, logFile: log, stateDir: path.join(dir, 'run'), spool: path.join(dir, 'spool'), deadlineMs: 60_000 }));
  const runs = (): Record<string, unknown>[] =>
    existsSync(log)
      ? readFileSync(log, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as Record<string, unknown>)
      : [];
  return { config, log, sc, runs };
}

const env = { SLURMD_NODENAME: 'vm', SLURM_JOB_ID: '7' };
/** The node drained with `reason` as a drain of this node's gdrgate leaves it: Slurm's reason and the record in the spool. */
function ourDrain(p: Place, reason: string): void {
  p.sc.adminDrain(reason);
  writeDrainRecord(path.join(path.dirname(p.config), 'spool'), 'vm', reason);
}
const bwFail: AnyFinding = { check: 'bandwidth', code: 'bw-gpu-path', status: 'fail', subject: 'GPU0-mlx5_0', message: 'below band', expected: '>= 180 Gb/s', actual: '95 Gb/s' };
const failing = (f: AnyFinding): Judgement<null> => ({ outcome: { kind: 'unhealthy', failing: [f] }, findings: [f], work: null });
const healthy: Judgement<null> = { outcome: { kind: 'healthy' }, findings: [], work: null };

async function run(mode: HookMode, p: Place, judged: Judgement<null> | Error) {
  return runHook<null, AnyFinding>({ mode, env, config: p.config, judge: async () => (judged instanceof Error ? Promise.reject(judged) : judged) });
}

t.test('an unhealthy verdict drains with the first finding as the reason, whatever made it (a bandwidth finding by its code)', async (t) => {
  const p = place();
  const r = await run('epilog', p, failing(bwFail));
  t.equal(r.code, 1);
  t.same(p.sc.drainCalls(), [`update nodename=vm state=drain reason=gdrgate: bw-gpu-path GPU0-mlx5_0 95 Gb/s (want >= 180 Gb/s) job=7`]);
  t.equal(r.summary, 'gdrgate epilog node=vm job=7 result=unhealthy exit=1 ' + /\d+ms/.exec(r.summary ?? '')![0] + ' reason="gdrgate: bw-gpu-path GPU0-mlx5_0 95 Gb/s (want >= 180 Gb/s) job=7" action=drained');
  const line = p.runs().filter((l) => l.msg === 'gdrgate epilog');
  t.same(line.map((l) => [l.result, l.exitCode, l.action, l.level]), [['unhealthy', 1, 'drained', 40]], 'one run line, a warning since the exit is not 0');
});

t.test('a drain that is not ours (an admin\'s reason): the Epilog exits 0, the Prolog still 1 (MODES)', async (t) => {
  for (const [mode, code] of [['epilog', 0], ['prolog', 1]] as const) {
    const p = place();
    p.sc.adminDrain('memory test');
    const r = await run(mode, p, failing(bwFail));
    t.equal(r.code, code, mode);
    t.match(r.acted.action, /^kept: node is \S+ for a reason that is not ours \(memory test\): left as it is$/, `${mode}: the admin's reason stays`);
    t.same(p.sc.drainCalls(), [], `${mode}: no drain written`);
  }
});

t.test('a drain of ours already on the node: the Epilog writes nothing and still exits 1 (its own drain stands)', async (t) => {
  const p = place();
  const BW6 = 'gdrgate: bw-gpu-path GPU1-mlx5_1 90 Gb/s (want >= 180 Gb/s) job=6';
  ourDrain(p, BW6);
  const r = await run('epilog', p, failing(bwFail));
  t.same([r.code, r.acted.action, p.sc.drainCalls()], [1, `kept: already drained by gdrgate: ${BW6}`, []]);
});

t.test('health --dry-run judged healthy resumes nothing: a drain of ours stays', async (t) => {
  const p = place();
  ourDrain(p, 'gdrgate: pcie-link 0000:17:00.0 Gen5 x8 (want Gen5 x16) job=6');
  const r = await runHook<null, AnyFinding>({ mode: 'health', env, config: p.config, dryRun: true, judge: async () => ({ ...healthy, judged: ['pcie-link'] }) });
  t.same([r.code, r.acted.action], [0, 'none']);
  t.equal(existsSync(p.sc.calls), false, 'scontrol never run: no read, no resume');
});

t.test("the agent's deadline counts from the question's arrival, not from the wrapper's GDRGATE_T0 as a Prolog's does", async (t) => {
  const p = place();
  // The wrapper started 100 s ago (within the 120 s runOrigin takes); the config gives 60 s.
  const T0 = ((Date.now() - 100_000) / 1000).toFixed(3);
  const left: Record<string, number> = {};
  for (const startup of ['agent', 'modules'] as const)
    await runHook<null, AnyFinding>({ mode: 'prolog', env: { ...env, GDRGATE_T0: T0 }, config: p.config, startup, judge: async (run) => ((left[startup] = Math.round(run.deadline.left() / 10_000) * 10), healthy) });
  t.same(left, { agent: 60, modules: -40 }, 'seconds left when judged, to ten: the agent 60, the Prolog run itself 60 - 100');
});

t.test('health resumes a drain of ours once judged healthy; the Prolog does not', async (t) => {
  for (const [mode, action] of [['health', 'resumed'], ['prolog', 'none']] as const) {
    const p = place();
    ourDrain(p, 'gdrgate: pcie-link 0000:17:00.0 Gen5 x8 (want Gen5 x16) job=6');
    const r = await run(mode, p, { ...healthy, judged: ['pcie-link'] });
    t.equal(r.acted.action, action, mode);
    t.equal(r.code, 0, mode);
  }
});

t.test('health with probes configured: its resume restarts the probe window', async (t) => {
  const p = place();
  writeFileSync(p.config, JSON.stringify({ ...(JSON.parse(readFileSync(p.config, 'utf8')) as object), probes: {} }));
  const LINK = 'gdrgate: pcie-link 0000:17:00.0 Gen5 x8 (want Gen5 x16) job=6';
  ourDrain(p, LINK);
  const r = await run('health', p, { ...healthy, judged: ['pcie-link'] });
  t.equal(r.acted.action, 'resumed');
  const win = JSON.parse(readFileSync(path.join(path.dirname(p.config), 'spool', 'probe-window.json'), 'utf8')) as { why: string };
  // (gdrgate resume names the reason it lifted here; the health check's run names its outcome.)
  t.equal(win.why, 'resumed: healthy', 'samples taken while drained are not judged with the mended path\'s');
});

t.test("health on a node drained for another's reason says why it left it, not \"none\"", async (t) => {
  const p = place();
  p.sc.adminDrain('memory test');
  const r = await run('health', p, { ...healthy, judged: ['pcie-link'] });
  t.equal(r.acted.action, 'drained for a reason that is not ours (memory test): left drained');
  t.equal(r.code, 0);
});

t.test('health resumes only a drain whose label its verdict judged (judged: absent is none)', async (t) => {
  const cases = [
    ['gdrgate: bw-gpu-path GPU0-mlx5_0 95 Gb/s (want >= 180 Gb/s) job=7', ['pcie-link'], 'left drained: bw-gpu-path is not judged by the health check'],
    ['gdrgate: pcie-link 0000:17:00.0 Gen5 x8 (want Gen5 x16) job=6', undefined, 'left drained: pcie-link is not judged by the health check'],
    ['gdrgate: pcie-link 0000:17:00.0 Gen5 x8 (want Gen5 x16) job=6 drill=0a1b2c3d', ['pcie-link'], "left drained: a drill's drain (drill=0a1b2c3d) is not judged by the health check"],
  ] as const;
  for (const [reason, judged, action] of cases) {
    const p = place();
    p.sc.adminDrain(reason);
    const r = await run('health', p, { ...healthy, judged });
    t.equal(r.acted.action, action, reason);
    t.equal(r.code, 0);
    t.same(readFileSync(p.sc.calls, 'utf8').split('\n').filter((l) => l.includes('state=resume')), [], 'no resume');
  }
});

t.test('health judges again after it reads a drain of ours, and resumes only when that judgement passes too', async (t) => {
  // Its first judgement may have begun before a Prolog drained the node (the link went bad meanwhile).
  const linkFail: AnyFinding = { check: 'pcie-link', code: 'link-degraded', status: 'fail', subject: '0000:17:00.0', message: 'Gen5 x8 (want Gen5 x16)', expected: 'Gen5 x16', actual: 'Gen5 x8' };
  for (const [second, action, resumes] of [
    [healthy, 'resumed', 1],
    [failing(linkFail), 'still unhealthy, left drained: pcie-link 0000:17:00.0: Gen5 x8 (want Gen5 x16)', 0],
  ] as const) {
    const p = place();
    ourDrain(p, 'gdrgate: pcie-link 0000:17:00.0 Gen5 x8 (want Gen5 x16) job=6');
    let judged = 0;
    const r = await runHook<null, AnyFinding>({ mode: 'health', env, config: p.config, judge: async () => (judged++ === 0 ? { ...healthy, judged: ['pcie-link'] } : second) });
    t.same([r.acted.action, r.code, judged], [action, 0, 2], action);
    t.equal(readFileSync(p.sc.calls, 'utf8').split('\n').filter((l) => l.includes('state=resume')).length, resumes);
  }
  const p = place();
  let judged = 0;
  const r = await runHook<null, AnyFinding>({ mode: 'health', env, config: p.config, judge: async () => (judged++, { ...healthy, judged: ['pcie-link'] }) });
  t.same([r.acted.action, judged], ['none', 1], 'a node not drained: judged once');
});

t.test('a judge that throws: the gate fails open (one error line, the run line says so); the TaskProlog leaves it to the top-level catch', async (t) => {
  const p = place();
  const r = await run('prolog', p, new Error('sysfs went away'));
  t.equal(r.code, 0);
  t.same(r.report, ['internal-error: sysfs went away']);
  t.same(
    p.runs().map((l) => [l.msg, l.level]),
    [
      ['gdrgate could not judge this node; letting the job run (fail-open)', 50],
      ['gdrgate run', 30],
    ],
  );
  t.same([p.runs()[1]!.startup, p.runs()[1]!.failedOpen, p.runs()[1]!.result], ['modules', true, 'internal-error']);
  await t.rejects(run('task', place(), new Error('no /proc')), { message: /^no \/proc$/ });
});

t.test('the TaskProlog writes no run line and no summary line: its stdout is the job\'s protocol', async (t) => {
  const p = place();
  const r = await run('task', p, failing({ ...bwFail, check: 'job-visibility', code: 'job-hca-missing' }));
  t.equal(r.summary, null);
  t.same(r.report, []);
  t.equal(r.code, 1);
  t.same(p.runs(), []);
  t.same(p.sc.drainCalls(), [], 'the job\'s user never drains');
  t.same(Object.fromEntries(Object.entries(MODES).map(([m, r]) => [m, r.log?.msg ?? null])), { prolog: 'gdrgate run', health: 'gdrgate run', epilog: 'gdrgate epilog', task: null });
});

t.test('a verdict handed back (the agent\'s) is neither acted on nor logged', async (t) => {
  const p = place();
  const r = await runHook<null, AnyFinding>({ mode: 'prolog', env, config: p.config, startup: 'agent', judge: async () => failing(bwFail), handBack: (_r, j) => (j.outcome.kind === 'healthy' ? null : 'unhealthy') });
  t.same(r, { handedBack: true, why: 'unhealthy' });
  t.same(p.sc.drainCalls(), []);
  t.same(p.runs(), []);
});

t.test('a config that cannot be read is the outcome (fail-open by default), and the judge still hears why', async (t) => {
  const p = place();
  writeFileSync(p.config, '{"baseline": 1}');
  let heard: string | null = 'not called';
  const r = await runHook<null, AnyFinding>({ mode: 'prolog', env, config: p.config, judge: async (h) => ((heard = h.cfgError), healthy) });
  t.equal(r.judgement.outcome.kind, 'config-error');
  t.equal(r.code, 0);
  t.equal(r.acted.decision.failedOpen, true);
  t.match(heard, /^.*config\.json: \/baseline: must be string$/);
});

t.test('engine/hook.ts imports no command line and no yargs (a gate-only bundle imports it)', async (t) => {
  const src = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src');
  const seen = new Set<string>();
  const bare = new Set<string>();
  const visit = (rel: string): void => {
    if (seen.has(rel)) return;
    seen.add(rel);
    const text = readFileSync(path.join(src, rel), 'utf8');
    for (const m of text.matchAll(/(?:from\s+|import\s*\(\s*|import\s+)'([^']+)'/g)) {
      const spec = m[1]!;
      if (spec.startsWith('.')) visit(path.relative(src, path.resolve(path.dirname(path.join(src, rel)), spec)).replace(/\.js$/, '.ts'));
      else bare.add(spec.split('/')[0]!);
    }
  };
  visit('engine/hook.ts');
  t.same([...seen].filter((m) => m.startsWith('cli/') || m === 'cli.ts'), []);
  t.equal(bare.has('yargs'), false, [...bare].join(', '));
});
