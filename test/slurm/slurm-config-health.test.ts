// slurm-config and the health check's schedule: slurmd starts HealthCheckProgram only with a HealthCheckInterval (or
// HealthCheckNodeState=START_ONLY from 25.11, REBOOT_ONLY from 26.05: slurmd.c run_script_health_check), so the plan
// says so where the site has none, and keeps the site's own interval and node states, never prescribing others.
import t, { type Test } from 'tap';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { FsHost } from '../../src/host/fs-host.js';
import { loadConf } from '../../src/slurm/conf-load.js';
import { mergePlan, type Change } from '../../src/slurm/conf-merge.js';
import { renderText } from '../../src/slurm/conf-render.js';
import type { Release } from '../../src/slurm/versions.js';

const CONF = '/etc/slurm/slurm.conf';
const S = '/usr/libexec/gdrgate';
const scripts = { prolog: `${S}/prolog.sh`, epilog: `${S}/epilog.sh`, taskprolog: `${S}/taskprolog.sh`, health: `${S}/health.sh` };

async function health(t: Test, text: string, release: Release): Promise<{ lines: string[]; changes: readonly Change[]; text: string }> {
  const root = t.testdir();
  mkdirSync(path.join(root, 'etc/slurm'), { recursive: true });
  writeFileSync(path.join(root, CONF), text);
  const loaded = await loadConf(new FsHost(root), CONF);
  const p = mergePlan({ entries: loaded.entries, mainFile: CONF, release, scripts, wrapperDir: '/etc/slurm' });
  const changes = p.changes.filter((c) => c.key.startsWith('HealthCheck'));
  const lines = changes.map((c) => `${c.key} ${c.action}${c.line === null ? '' : ` @${c.line}`}${c.set === null ? '' : ` ${c.set}`}`);
  const ctx = { conf: CONF, files: loaded.files, configless: false, release, releaseFrom: 'test', problems: [] };
  return { lines, changes, text: renderText(ctx, { ...p, changes }) };
}

const PROGRAM = `HealthCheckProgram optional HealthCheckProgram=${S}/health.sh`;
const NEVER = "without one slurmd never starts HealthCheckProgram (slurmd.c run_script_health_check): the HealthCheckProgram line alone would do nothing; 300 s between runs, on the nodes HealthCheckNodeState names (default ANY)";

t.test('no interval: the interval is offered with the program, or the program would never run', async (t) => {
  const p = await health(t, 'ClusterName=c\n', '22.05');
  t.same(p.lines, [PROGRAM, 'HealthCheckInterval optional HealthCheckInterval=300']);
  t.equal(p.changes[1]!.why, NEVER);
  t.equal(p.changes[0]!.why, 'optional: the same gate on idle nodes between jobs, on the schedule of HealthCheckInterval and HealthCheckNodeState; it resumes only its own drains');
});

t.test("the site's HealthCheckInterval=0: offered as a change of its line, said", async (t) => {
  const p = await health(t, 'HealthCheckInterval=0\n', '24.11');
  t.same(p.lines, [PROGRAM, 'HealthCheckInterval optional @1 HealthCheckInterval=300']);
  t.equal(
    p.text.split('\n').slice(3).join('\n'),
    [
      '',
      'HealthCheckProgram: optional, add to /etc/slurm/slurm.conf',
      `+ HealthCheckProgram=${S}/health.sh`,
      '  why: optional: the same gate on idle nodes between jobs, on the schedule of HealthCheckInterval and HealthCheckNodeState; it resumes only its own drains',
      '',
      'HealthCheckInterval: optional, change /etc/slurm/slurm.conf line 1',
      '- HealthCheckInterval=0',
      '+ HealthCheckInterval=300',
      `  why: ${NEVER}`,
      '',
    ].join('\n'),
  );
});

t.test("the site's own interval and node states are kept, never replaced", async (t) => {
  const p = await health(t, 'HealthCheckInterval=600\nHealthCheckNodeState=IDLE,CYCLE\n', '22.05');
  t.same(p.lines, [PROGRAM, 'HealthCheckInterval keep @1']);
  t.equal(p.changes[1]!.why, "the site's: slurmd starts HealthCheckProgram every 600 s (HealthCheckNodeState=IDLE,CYCLE)");
  const nhc = await health(t, 'HealthCheckProgram=/usr/sbin/nhc\nhealthcheckinterval=120\n', '24.05');
  t.same(nhc.lines, ['HealthCheckProgram set @1 HealthCheckProgram=/etc/slurm/gdrgate-health-chain.sh', 'HealthCheckInterval keep @2']);
});

t.test('START_ONLY runs it at slurmd start from 25.11 (REBOOT_ONLY from 26.05); before, Slurm ignores the word', async (t) => {
  const start = 'HealthCheckNodeState=START_ONLY\n';
  t.same((await health(t, start, '25.11')).lines, [PROGRAM, 'HealthCheckInterval keep']);
  t.equal((await health(t, start, '25.11')).changes[1]!.why, "the site's: slurmd starts HealthCheckProgram only as it starts (HealthCheckNodeState=START_ONLY), no interval");
  t.same((await health(t, start, '25.05')).lines, [PROGRAM, 'HealthCheckInterval optional HealthCheckInterval=300']);
  t.same((await health(t, 'HealthCheckNodeState=reboot_only\n', '26.05')).lines, [PROGRAM, 'HealthCheckInterval keep']);
  t.same((await health(t, 'HealthCheckNodeState=REBOOT_ONLY\n', '25.11')).lines, [PROGRAM, 'HealthCheckInterval optional HealthCheckInterval=300']);
});

t.test("26.05's HealthCheckTimeout: the interval offered is above it (read_config.c: a timeout not below the interval is an error)", async (t) => {
  const p = await health(t, 'HealthCheckTimeout=600\n', '26.05');
  t.same(p.lines, [PROGRAM, 'HealthCheckInterval optional HealthCheckInterval=660']);
  t.equal(p.changes[1]!.why, "without one slurmd never starts HealthCheckProgram (slurmd.c run_script_health_check): the HealthCheckProgram line alone would do nothing; 660 s between runs, 60 s more than the site's HealthCheckTimeout=600 (slurmd wants the interval above it), on the nodes HealthCheckNodeState names (default ANY)");
  t.same((await health(t, 'HealthCheckTimeout=90\n', '26.05')).lines, [PROGRAM, 'HealthCheckInterval optional HealthCheckInterval=300'], 'a timeout well below 300: 300');
});
