// The health check (resumeWhenHealthy) through the built CLI on a healthy tree: it resumes only a drain of ours whose
// label is a check it has just run and whose text is the one this node's gdrgate wrote (its record in the spool; with
// no record of this node, the prefix as before); the Epilog's bandwidth drain, a drill's drain, a check not run, and
// our reason with an admin's note added are left drained.
import t from 'tap';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { cli } from '../helpers/cli.js';
import { breakLink, makeGateEnv, type GateEnv } from '../helpers/gate-env.js';
import { trainGpuTo } from '../helpers/h200-link.js';
import { fixture } from '../helpers/paths.js';

const IDLE = readFileSync(fixture('scontrol/show_node_o_idle_22.05.8.txt'), 'utf8');

/** The node drained with `reason` (as `scontrol show node -o` says it; null: as it is), then one health check. */
function healthOn(env: GateEnv, reason: string | null) {
  const drained = IDLE.replace('State=IDLE ', 'State=IDLE+DRAIN ').replace(/\n?$/, ` Reason=${reason} [root@2026-11-29T14:39:05]\n`);
  if (reason !== null) writeFileSync(path.join(env.dir, 'scontrol.state'), drained);
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

/** The Prolog drains the node for the H200's GPU link trained down to x8; then the link is mended. */
function drainedByProlog(env: GateEnv): string {
  breakLink(env.tree);
  const p = env.prolog();
  trainGpuTo(env.tree, 16);
  return /Reason=(.*) \[root@/.exec(readFileSync(path.join(env.dir, 'scontrol.state'), 'utf8'))?.[1] ?? `no reason (prolog exit ${p.code})`;
}

/** As healthOn, the node's state already drained as `reason` by the fake scontrol. */
function health(env: GateEnv) {
  return healthOn(env, null);
}

t.test('a drain the Prolog wrote (pcie-link), the link mended: the health check resumes it, its record kept', async (t) => {
  const env = makeGateEnv();
  const reason = drainedByProlog(env);
  t.equal(reason, 'gdrgate: pcie-link 0000:00:06.0 Gen5 x8 (want Gen5 x16) job=42');
  t.same(Object.keys(JSON.parse(readFileSync(path.join(env.dir, 'spool/drain-reason.json'), 'utf8')) as object), ['node', 'reason', 'at']);
  t.equal((JSON.parse(readFileSync(path.join(env.dir, 'spool/drain-reason.json'), 'utf8')) as { reason: string }).reason, reason);
  const r = health(env);
  t.equal(r.code, 0);
  t.equal(r.action, 'resumed');
  t.same(r.resumes, ['update nodename=vm state=resume']);
});

t.test("an admin's note added to our reason: the text is a person's now, left drained", async (t) => {
  const env = makeGateEnv();
  const reason = drainedByProlog(env);
  const file = path.join(env.dir, 'scontrol.state');
  writeFileSync(file, readFileSync(file, 'utf8').replace(`Reason=${reason} [root@`, `Reason=${reason} RMA 5512 keep out [root@`));
  const r = health(env);
  t.equal(r.code, 0);
  t.equal(r.action, `left drained: the reason is not the one gdrgate wrote (${reason}): edited or written by a person; resume it by hand once mended (gdrgate resume)`);
  t.same(r.resumes, []);
});

t.test('no record of this node (a drain from before the record, a stateless node after its reboot, a cloned spool): the prefix decides, as before', async (t) => {
  const reason = 'gdrgate: pcie-link 0000:00:06.0 Gen5 x8 (want Gen5 x16) job=7';
  const none = healthOn(makeGateEnv(), reason);
  t.same([none.action, none.resumes], ['resumed', ['update nodename=vm state=resume']], 'no record: resumed');
  const env = makeGateEnv();
  mkdirSync(path.join(env.dir, 'spool'));
  writeFileSync(path.join(env.dir, 'spool/drain-reason.json'), `${JSON.stringify({ node: 'golden', reason: 'gdrgate: pcie-acs x', at: '2026-11-29T14:39:05.000Z' })}\n`);
  const other = healthOn(env, reason);
  t.same([other.action, other.resumes], ['resumed', ['update nodename=vm state=resume']], "another node's record: resumed");
});

t.test('a record that cannot be read (a directory planted in its place): what gdrgate wrote cannot be told, left drained', async (t) => {
  const env = makeGateEnv();
  mkdirSync(path.join(env.dir, 'spool/drain-reason.json'), { recursive: true });
  const file = path.join(env.dir, 'spool/drain-reason.json');
  const r = healthOn(env, 'gdrgate: pcie-link 0000:00:06.0 Gen5 x8 (want Gen5 x16) job=7');
  t.equal(r.action, `left drained: what gdrgate wrote cannot be told (${file} is not a regular file); resume it by hand once mended (gdrgate resume)`);
  t.same(r.resumes, []);
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

t.test('a drain whose check cannot tell now (the GPU link unread) is left: a judgement not made is no reason to resume', async (t) => {
  const env = makeGateEnv();
  const reason = drainedByProlog(env);
  t.equal(reason, 'gdrgate: pcie-link 0000:00:06.0 Gen5 x8 (want Gen5 x16) job=42');
  // The GPU's link as a read that cannot be judged: config space cut to its 64-byte header (no PCI Express
  // capability), the kernel's width file not a number.
  const dir = path.join(env.tree, 'sys/devices/pci0000:00/0000:00:06.0');
  writeFileSync(path.join(dir, 'config'), readFileSync(path.join(dir, 'config')).subarray(0, 64));
  writeFileSync(path.join(dir, 'current_link_width'), 'garbage\n');
  const r = health(env);
  t.equal(r.code, 0);
  t.same(r.resumes, [], 'before: update nodename=vm state=resume');
  t.equal(r.action, 'left drained: pcie-link could not tell of 0000:00:06.0 now (skip link-unknown): not resumed on a judgement not made');
});
