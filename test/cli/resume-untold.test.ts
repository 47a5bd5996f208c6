// `gdrgate resume` after its re-check could not tell of the drain's subject (the GPU's link unread): left drained, as
// the health check leaves it, since a run with no fail but a skip there judged nothing; --force still resumes.
import t from 'tap';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { cli } from '../helpers/cli.js';
import { breakLink, makeGateEnv, type GateEnv } from '../helpers/gate-env.js';
import { trainGpuTo } from '../helpers/h200-link.js';

/** The Prolog drains the node for the GPU link at x8; the link is then mended in width but its registers cut short. */
function drainedThenUnread(): GateEnv {
  const env = makeGateEnv();
  breakLink(env.tree);
  env.prolog();
  trainGpuTo(env.tree, 16);
  const dir = path.join(env.tree, 'sys/devices/pci0000:00/0000:00:06.0');
  writeFileSync(path.join(dir, 'config'), readFileSync(path.join(dir, 'config')).subarray(0, 64));
  writeFileSync(path.join(dir, 'current_link_width'), 'garbage\n');
  return env;
}

const resumes = (env: GateEnv): string[] => readFileSync(env.calls, 'utf8').split('\n').filter((l) => /^update .*state=resume/.test(l));
const REASON = 'gdrgate: pcie-link 0000:00:06.0 Gen5 x8 (want Gen5 x16) job=42';

t.test('the re-check skips the link the drain names: left drained, exit 1, no resume', async (t) => {
  const env = drainedThenUnread();
  t.equal(/Reason=(.*) \[root@/.exec(readFileSync(path.join(env.dir, 'scontrol.state'), 'utf8'))?.[1], REASON);
  const r = cli(['resume', '--config', env.config], { SLURMD_NODENAME: 'vm', SLURM_JOB_ID: '' });
  t.equal(r.stdout, 'vm: left drained: pcie-link could not tell of 0000:00:06.0 now (skip link-unknown): not resumed on a judgement not made\n');
  t.equal(r.code, 1);
  t.same(resumes(env), []);
});

t.test('--force (no re-check) resumes it, as before', async (t) => {
  const env = drainedThenUnread();
  const r = cli(['resume', '--force', '--config', env.config], { SLURMD_NODENAME: 'vm', SLURM_JOB_ID: '' });
  t.equal(r.stdout, `vm: resumed (was: ${REASON})\n`);
  t.equal(r.code, 0);
  t.same(resumes(env), ['update nodename=vm state=resume']);
});

t.test('the link mended and read: the re-check passes and resumes', async (t) => {
  const env = makeGateEnv();
  breakLink(env.tree);
  env.prolog();
  trainGpuTo(env.tree, 16);
  const r = cli(['resume', '--config', env.config], { SLURMD_NODENAME: 'vm', SLURM_JOB_ID: '' });
  t.equal(r.stdout, `vm: resumed (was: ${REASON})\n`);
  t.equal(r.code, 0);
  t.same(resumes(env), ['update nodename=vm state=resume']);
});
