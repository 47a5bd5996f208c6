// The health check (resumeWhenHealthy) through the built CLI on a healthy tree: it resumes only a drain of ours whose
// label is a check it has just run; the Epilog's bandwidth drain, a drill's drain and a check not run are left drained.
import t from 'tap';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { cli } from '../helpers/cli.js';
import { makeGateEnv, type GateEnv } from '../helpers/gate-env.js';
import { fixture } from '../helpers/paths.js';

const IDLE = readFileSync(fixture('scontrol/show_node_o_idle_22.05.8.txt'), 'utf8');

/** The node drained with `reason` (as `scontrol show node -o` says it), then one health check. */
function healthOn(env: GateEnv, reason: string) {
  const drained = IDLE.replace('State=IDLE ', 'State=IDLE+DRAIN ').replace(/\n?$/, ` Reason=${reason} [root@2026-11-29T14:39:05]\n`);
  writeFileSync(path.join(env.dir, 'scontrol.state'), drained);
  const r = cli(['health', '--config', env.config], { SLURMD_NODENAME: 'vm', SLURM_JOB_ID: '' });
  const summary = r.stdout.trimEnd().split('\n').at(-1) ?? '';
  const resumes = readFileSync(env.calls, 'utf8').split('\n').filter((l) => /^update .*state=resume/.test(l));
  return { code: r.code, action: / action=(.*)$/.exec(summary)?.[1] ?? summary, resumes };
}

t.test("the Epilog's bandwidth drain is not the health check's: left drained, and the action says why", async (t) => {
  const r = healthOn(makeGateEnv(), 'gdrgate: bw-gpu-path mlx5_0 GPU memory p50 9.1 GB/s (want >= 40 GB/s) job=7');
  t.equal(r.code, 0);
  t.equal(r.action, 'left drained: bw-gpu-path is not judged by the health check');
  t.same(r.resumes, [], 'no scontrol update state=resume');
});

t.test('a drain of a check the health check ran (pcie-link): resumed as before', async (t) => {
  const r = healthOn(makeGateEnv(), 'gdrgate: pcie-link 0000:00:06.0 Gen5 x8 (want Gen5 x16) job=7');
  t.equal(r.code, 0);
  t.equal(r.action, 'resumed');
  t.same(r.resumes, ['update nodename=vm state=resume']);
});

t.test('a check the config leaves out (checks: memlock-limit only): its drain is left drained', async (t) => {
  const env = makeGateEnv();
  env.writeConfig({ checks: ['memlock-limit'] });
  const r = healthOn(env, 'gdrgate: pcie-link 0000:00:06.0 Gen5 x8 (want Gen5 x16) job=7');
  t.equal(r.action, 'left drained: pcie-link is not judged by the health check');
  t.same(r.resumes, []);
});

t.test("a drill's drain (drill=<marker>), its drill file gone: left drained for drill run or drill stop", async (t) => {
  const r = healthOn(makeGateEnv(), 'gdrgate: memlock self 64 KiB (want >= unlimited) job=4711 drill=79f7346b');
  t.equal(r.action, "left drained: a drill's drain (drill=79f7346b) is not judged by the health check");
  t.same(r.resumes, []);
});
