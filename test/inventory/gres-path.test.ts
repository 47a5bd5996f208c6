// Which gres.conf the inventory reads when the config names none: the one slurmd reads, beside its slurm.conf
// (SLURM_CONF on the node itself; else /etc/slurm, else the configless cache /run/slurm/conf), not always /etc/slurm.
import { spawn } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { openHost } from '../../src/host/open.js';
import { buildInventory } from '../../src/inventory/build.js';
import { slurmGresConf } from '../../src/inventory/gres-path.js';
import { scratchDir } from '../helpers/scratch.js';

const GRES = 'Name=gpu File=/dev/nvidia0\n';

/** A root holding `files` (path → text). */
function rootWith(files: Record<string, string>): string {
  const root = scratchDir('gdrgate-gres-path-');
  for (const [f, text] of Object.entries(files)) {
    mkdirSync(path.join(root, path.dirname(f)), { recursive: true });
    writeFileSync(path.join(root, f), text);
  }
  return root;
}

t.test('a configless node (no /etc/slurm/slurm.conf, the cache linked as /run/slurm/conf): its cached gres.conf', async (t) => {
  const root = rootWith({ 'run/slurm/conf/slurm.conf': 'ClusterName=c\n', 'run/slurm/conf/gres.conf': GRES });
  const inv = await buildInventory(await openHost(root));
  t.same({ path: inv.placement.gresPath, state: inv.placement.gres.state }, { path: '/run/slurm/conf/gres.conf', state: 'present' });
});

t.test('/etc/slurm/slurm.conf there: /etc/slurm/gres.conf, as a Slurm command would read it, whatever the cache holds', async (t) => {
  const root = rootWith({ 'etc/slurm/slurm.conf': 'ClusterName=c\n', 'etc/slurm/gres.conf': GRES, 'run/slurm/conf/slurm.conf': 'ClusterName=c\n', 'run/slurm/conf/gres.conf': GRES });
  const inv = await buildInventory(await openHost(root));
  t.same({ path: inv.placement.gresPath, state: inv.placement.gres.state }, { path: '/etc/slurm/gres.conf', state: 'present' });
});

t.test('neither slurm.conf: Slurm default place, /etc/slurm/gres.conf (absent here)', async (t) => {
  const inv = await buildInventory(await openHost(rootWith({})));
  t.same({ path: inv.placement.gresPath, state: inv.placement.gres.state }, { path: '/etc/slurm/gres.conf', state: 'absent' });
});

t.test('the config names one: that one, whatever SLURM_CONF says', async (t) => {
  const root = rootWith({ 'run/slurm/conf/slurm.conf': 'ClusterName=c\n', 'site/gres.conf': GRES });
  const inv = await buildInventory(await openHost(root), { gresConf: '/site/gres.conf', env: { SLURM_CONF: '/opt/slurm/etc/slurm.conf' } });
  t.same({ path: inv.placement.gresPath, state: inv.placement.gres.state }, { path: '/site/gres.conf', state: 'present' });
});

t.test("on the node itself, SLURM_CONF (slurmd's, in its Prolog's and Epilog's environment) decides", async (t) => {
  const host = await openHost(rootWith({ 'etc/slurm/slurm.conf': 'ClusterName=c\n' }));
  const got = await Promise.all([
    slurmGresConf(host, { SLURM_CONF: '/opt/slurm/etc/slurm.conf' }, true),
    slurmGresConf(host, { SLURM_CONF: '/var/spool/slurmd/conf-cache/slurm.conf' }, true),
    slurmGresConf(host, { SLURM_CONF: '/etc/slurm//./slurm.conf' }, true),
    // A capture's root: the node's SLURM_CONF names no file of it.
    slurmGresConf(host, { SLURM_CONF: '/opt/slurm/etc/slurm.conf' }, false),
    // Not a file's absolute path: the places, as without it.
    slurmGresConf(host, { SLURM_CONF: 'slurm.conf' }, true),
    slurmGresConf(host, { SLURM_CONF: '/etc/slurm/' }, true),
    slurmGresConf(host, {}, true),
  ]);
  t.same(got, ['/opt/slurm/etc/gres.conf', '/var/spool/slurmd/conf-cache/gres.conf', '/etc/slurm/gres.conf', '/etc/slurm/gres.conf', '/etc/slurm/gres.conf', '/etc/slurm/gres.conf', '/etc/slurm/gres.conf']);
});

/** A real process named slurmd (a copy of bash: comm is its file's name) started with `args` and `env`; its child's pid. */
async function slurmdWith(t: Test, args: readonly string[], env: Record<string, string>): Promise<number> {
  const dir = scratchDir('gdrgate-gres-path-slurmd-');
  const exe = path.join(dir, 'slurmd');
  copyFileSync('/bin/bash', exe);
  chmodSync(exe, 0o755);
  // bash -c SCRIPT NAME ARGS...: SCRIPT and NAME are operands slurmd's getopt_long skips; ARGS are slurmd's.
  const p = spawn(exe, ['-c', '/bin/sleep 60 & echo $!; wait', 'slurmd', ...args], { env, stdio: ['ignore', 'pipe', 'ignore'] });
  t.teardown(() => void p.kill('SIGKILL'));
  const line = await new Promise<string>((resolve) => p.stdout.once('data', (d: Buffer) => resolve(d.toString())));
  const child = Number(line.trim());
  t.teardown(() => {
    try {
      process.kill(child, 'SIGKILL');
    } catch {
      /* gone */
    }
  });
  return child;
}

t.test('the HealthCheckProgram (no SLURM_CONF): the slurm.conf its slurmd was started with, on a real process tree', async (t) => {
  const host = await openHost('/');
  const as = async (args: string[], env: Record<string, string>): Promise<string> => (await buildInventory(host, { selfPid: await slurmdWith(t, args, env), env: {} })).placement.gresPath;
  t.equal(await as(['-D', '-f', '/opt/site slurm/etc/slurm.conf', '-N', 'gpu001'], {}), '/opt/site slurm/etc/gres.conf', '-f');
  t.equal(await as(['--systemd'], { SLURM_CONF: '/shared/slurm/slurm.conf' }), '/shared/slurm/gres.conf', "SLURM_CONF in slurmd's environment");
  t.equal(await as(['--systemd', '--conf-server', 'ctl:6817'], {}), '/run/slurm/conf/gres.conf', 'configless');
  const child = await slurmdWith(t, ['--not-an-option'], {});
  const slurmd = Number(/^PPid:\s+(\d+)$/m.exec(readFileSync(`/proc/${child}/status`, 'utf8'))![1]);
  const inv = await buildInventory(host, { selfPid: child, env: {} });
  const usual = existsSync('/etc/slurm/slurm.conf') ? '/etc/slurm/gres.conf' : existsSync('/run/slurm/conf/slurm.conf') ? '/run/slurm/conf/gres.conf' : '/etc/slurm/gres.conf';
  t.equal(inv.placement.gresPath, usual, 'cannot be told: the usual places');
  const at = `/proc/${slurmd}/cmdline`;
  t.same(inv.notes.filter((n) => n.startsWith(`${at}: `)), [`${at}: which slurm.conf slurmd (pid ${slurmd}) reads cannot be told (slurmd's option "--not-an-option" is not one this reading knows): its gres.conf is looked for in the usual places`]);
});

/** buildInventory as the HealthCheckProgram below a real process named slurmd, started with `env`: the gres.conf read, the notes on slurmd's /proc files. */
async function readBelow(t: Test, env: Record<string, string>): Promise<{ path: string; notes: string[]; slurmd: number }> {
  const child = await slurmdWith(t, ['--systemd'], env);
  const inv = await buildInventory(await openHost('/'), { selfPid: child, env: {} });
  const slurmd = Number(/^PPid:\s+(\d+)$/m.exec(readFileSync(`/proc/${child}/status`, 'utf8'))![1]);
  return { path: inv.placement.gresPath, notes: inv.notes.filter((n) => n.startsWith(`/proc/${slurmd}/`)), slurmd };
}

t.test("SLURM_CONF_SERVER in slurmd's environment beside SLURM_CONF: slurmd reads the file, and so does this reading", async (t) => {
  const got = await readBelow(t, { SLURM_CONF_SERVER: 'ctl:6817', SLURM_CONF: '/shared/slurm/slurm.conf' });
  t.same({ path: got.path, notes: got.notes }, { path: '/shared/slurm/gres.conf', notes: [] });
});

t.test("slurmd's starting environment: one of Lmod's size read whole, one past 128 KiB not read, said", async (t) => {
  const conf = { SLURM_CONF: '/shared/slurm/slurm.conf' };
  // Lmod keeps its module table in the environment in 256-byte pieces (_ModuleTable001_, _ModuleTable002_, ...).
  const lmod = (pieces: number): Record<string, string> => Object.fromEntries(Array.from({ length: pieces }, (_, i) => [`_ModuleTable${String(i + 1).padStart(3, '0')}_`, 'X'.repeat(256)]));
  const read = await readBelow(t, { ...lmod(300), ...conf });
  t.same({ path: read.path, notes: read.notes }, { path: '/shared/slurm/gres.conf', notes: [] }, '300 pieces (80 KiB): read whole, SLURM_CONF at its end found');
  const big = await readBelow(t, { ...lmod(520), ...conf });
  const usual = existsSync('/etc/slurm/slurm.conf') ? '/etc/slurm/gres.conf' : existsSync('/run/slurm/conf/slurm.conf') ? '/run/slurm/conf/gres.conf' : '/etc/slurm/gres.conf';
  const at = `/proc/${big.slurmd}/environ`;
  t.same({ path: big.path, notes: big.notes }, { path: usual, notes: [`${at}: which slurm.conf slurmd (pid ${big.slurmd}) reads cannot be told (${at}: larger than 128 KiB, not read): its gres.conf is looked for in the usual places`] }, '520 pieces (139 KiB): not read, said');
});

t.test("a capture's root: what this node's slurmd was started with is never asked, only the capture's places", async (t) => {
  const host = await openHost(rootWith({ 'etc/slurm/slurm.conf': 'ClusterName=c\n' }));
  let asked = 0;
  const slurmd = (): Promise<null> => {
    asked++;
    return Promise.resolve(null);
  };
  t.same([await slurmGresConf(host, {}, false, slurmd), asked], ['/etc/slurm/gres.conf', 0]);
  t.same([await slurmGresConf(host, {}, true, slurmd), asked], ['/etc/slurm/gres.conf', 1], 'the same root taken as live: asked');
});
