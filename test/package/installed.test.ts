// The .deb installed with dpkg on this machine, as on a node: an upgrade from the previous package keeps an edited
// config; /usr/sbin/gdrgate and /usr/libexec/gdrgate/*.sh run with nothing from the checkout on the path (check on
// the shipped example; prolog, health and epilog through the wrappers on a copy of the example tree, healthy, x8,
// config errors; the agent answering); dpkg --purge removes everything the package installed and nothing else.
// Installs and purges a system package: runs when GDRGATE_INSTALL_TEST=1 (.ci/run sets it, in a step of its own), as root.
import t from 'tap';
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { slurmdShim } from '../agent/_agent.js';
import { fakeScontrol } from '../helpers/fake-scontrol.js';
import { trainGpuTo } from '../helpers/h200-link.js';
import { REPO } from '../helpers/paths.js';
import { H200_GPU, artifacts, dpkg, installScope, missing, run } from './_artifacts.js';


const why =
  process.env.GDRGATE_INSTALL_TEST !== '1'
    ? 'set GDRGATE_INSTALL_TEST=1 to run it (it dpkg-installs and purges gdrgate on this machine; .ci/run runs it in its own step)'
    : process.getuid?.() !== 0
      ? 'it must run as root (dpkg -i)'
      : missing(['dpkg', 'dpkg-deb']);
if (why) t.skip(`installed-package test skipped: ${why}`, () => {});
else await installed();

/** Every path whose name says gdrgate, and the whole of the directories the package puts files in. */
function footprint(): string[] {
  const roots = ['/etc', '/usr/sbin', '/usr/libexec', '/usr/lib/systemd/system', '/usr/lib/tmpfiles.d', '/usr/share/doc', '/usr/share/gdrgate', '/usr/share/man/man5', '/usr/share/man/man8', '/var/lib', '/var/log', '/run'];
  const r = run('find', [...roots.filter((p) => existsSync(p)), '-xdev', '(', '-path', '/var/lib/dpkg', '-o', '-path', '/run/*', '-not', '-path', '/run/gdrgate*', ')', '-prune', '-o', '-print']);
  return r.stdout.split('\n').filter((p) => p && !p.startsWith('/var/lib/dpkg') && !/^\/var\/log\/[^/]+\.log/.test(p)).sort();
}


async function installed(): Promise<void> {
  t.setTimeout(600_000);
  const a = artifacts();
  const tmp = mkdtempSync(path.join(tmpdir(), 'gdrgate-installed-'));
  t.teardown(() => rmSync(tmp, { recursive: true, force: true }));
  installScope((fn) => t.teardown(fn));
  // systemd's directory of enablement links, there before the package as on a node (made here if this machine lacks it).
  const WANTS = '/etc/systemd/system/multi-user.target.wants';
  if (!existsSync(WANTS)) {
    mkdirSync(WANTS, { recursive: true });
    t.teardown(() => rmSync(WANTS, { recursive: true, force: true }));
  }
  const before = footprint();

  // The previous package: this build as release 0 (same files, an older version).
  const prev = run(process.execPath, ['scripts/package.mjs', '--arch', 'x64', '--out', path.join(tmp, 'prev'), '--release', '0', '--no-rpm'], { timeoutMs: 600_000 });
  t.equal(prev.status, 0, prev.stderr);
  const prevDeb = path.join(tmp, 'prev', readdirSync(path.join(tmp, 'prev')).find((f) => f.endsWith('.deb'))!);

  await t.test('upgrade keeps an edited /etc/gdrgate/config.json', async (t) => {
    t.equal(dpkg('-i', prevDeb).status, 0);
    const edited = readFileSync('/etc/gdrgate/config.json', 'utf8').replace('{', '{\n  "deadlineMs": 8000,');
    writeFileSync('/etc/gdrgate/config.json', edited);
    const up = dpkg('-i', a.deb);
    t.equal(up.status, 0, up.stderr);
    t.match(run('dpkg-query', ['-W', '-f', '${Version}', 'gdrgate']).stdout, /-1$/);
    t.equal(readFileSync('/etc/gdrgate/config.json', 'utf8'), edited);
    t.ok(statSync('/run/gdrgate').isDirectory(), 'tmpfiles.d made /run/gdrgate');
    // The postinst made the startup snapshot here, of the program just installed (the old one's blob is stale).
    t.equal(statSync('/var/lib/gdrgate/gate.blob').mode & 0o7777, 0o644, 'the startup snapshot, made at install');
    const v = run('/usr/lib/gdrgate/node', ['--snapshot-blob', '/var/lib/gdrgate/gate.blob', 'version'], { env: {} });
    t.equal(v.stdout, run('/usr/sbin/gdrgate', ['--version'], { env: {} }).stdout, 'it loads on this machine and is current');
    t.equal(run('/usr/sbin/gdrgate', ['baseline', 'validate', '/dev/null'], { env: {} }).status, 2, 'a usage/config error is exit 2');
  });

  // Nothing inherited: no PATH, no Node, cwd outside the checkout, as slurmd starts a Prolog: under a process named
  // slurmd (the agent judges only a Prolog with slurmd among its ancestors), for the node the fake scontrol answers
  // for (its real capture names `vm`; an answer naming another node is refused).
  const job = (id: number) => ({ SLURMD_NODENAME: 'vm', SLURM_JOB_ID: String(id), SLURM_JOB_UID: '0', SLURM_JOB_GID: '0' });
  const slurmd = slurmdShim(tmp);
  const sh = (file: string, env: NodeJS.ProcessEnv) => run(slurmd, [file], { env, cwd: tmp, timeoutMs: 60_000 });

  await t.test('check on the shipped example, with no Node on PATH', async (t) => {
    const r = run('/usr/sbin/gdrgate', ['check', '--root', '/usr/share/gdrgate/examples/h200-vm.tar.gz'], { env: {}, cwd: tmp });
    t.equal(r.status, 0, r.stderr);
    t.match(r.stdout, H200_GPU);
  });

  // The wrappers read /usr/libexec/gdrgate/<name>.conf: CONFIG points at this test's config, AGENT set per case.
  const tree = path.join(tmp, 'tree');
  cpSync(path.join(REPO, 'examples/h200-vm'), tree, { recursive: true, verbatimSymlinks: true });
  const scontrol = fakeScontrol(tmp);
  const baseline = path.join(tmp, 'baseline.json');
  const log = path.join(tmp, 'gdrgate.log');
  writeFileSync(baseline, run('/usr/sbin/gdrgate', ['baseline', 'capture', '--root', tree, '--class', 'h200', '--match', '*'], { env: {} }).stdout);
  const config = (over: Record<string, unknown> = {}) => {
    const file = path.join(tmp, 'config.json');
    writeFileSync(file, JSON.stringify({ baseline, root: tree, scontrol: scontrol.path, logFile: log, stateDir: path.join(tmp, 'state'), spool: path.join(tmp, 'spool'), ...over }));
    return file;
  };
  const confs = ['prolog', 'health', 'epilog'].map((w) => `/usr/libexec/gdrgate/${w}.conf`);
  const setConf = (extra = '') => confs.forEach((c) => writeFileSync(c, `CONFIG=${config()}\nAGENT=\n${extra}`));
  t.teardown(() => confs.forEach((c) => rmSync(c, { force: true })));
  const lastRun = () => JSON.parse(readFileSync(log, 'utf8').trim().split('\n').filter((l) => l.includes('"gdrgate run"')).pop()!) as Record<string, unknown>;

  await t.test('prolog, health and epilog through the installed wrappers', async (t) => {
    setConf();
    const ok = sh('/usr/libexec/gdrgate/prolog.sh', job(11));
    t.equal(ok.status, 0, ok.stderr);
    t.match(ok.stdout, /result=healthy exit=0/);
    t.match(lastRun(), { mode: /^prolog$/, startup: /^snapshot$/, exitCode: 0 });
    const health = sh('/usr/libexec/gdrgate/health.sh', {});
    t.equal(health.status, 0, health.stderr);
    t.match(lastRun(), { mode: /^health$/, exitCode: 0 });
    t.equal(sh('/usr/libexec/gdrgate/epilog.sh', job(11)).status, 0);
  });

  await t.test('a GPU trained to x8: exit 1, drained with our reason; config errors fail open, or closed', async (t) => {
    trainGpuTo(tree, 8);
    const bad = sh('/usr/libexec/gdrgate/prolog.sh', job(12));
    t.equal(bad.status, 1, bad.stdout);
    t.match(scontrol.drainCalls().join('\n'), /reason=gdrgate: pcie-link 0000:00:06\.0/);
    trainGpuTo(tree, 16);
    config({ baseline: path.join(tmp, 'absent.json') });
    t.equal(sh('/usr/libexec/gdrgate/prolog.sh', job(13)).status, 0, 'fail-open by default');
    config({ baseline: path.join(tmp, 'absent.json'), onConfigError: 'closed' });
    t.equal(sh('/usr/libexec/gdrgate/prolog.sh', job(14)).status, 1, 'onConfigError: closed');
    config();
  });

  await t.test('the agent (/usr/sbin/gdrgate agent) answers the installed prolog', async (t) => {
    const dir = path.join(tmp, 'agent');
    const agent = spawn('/usr/sbin/gdrgate', ['agent', '--config', config(), '--dir', dir], { env: {}, stdio: 'ignore' });
    t.teardown(() => void agent.kill('SIGTERM'));
    // Bounds for a loaded machine, not speeds: the agent's start (60 s), and its answer (30 s: a later one falls back).
    for (const until = performance.now() + 60_000; !existsSync(path.join(dir, 'agent.pid')) && performance.now() < until; ) await sleep(50);
    t.ok(existsSync(path.join(dir, 'agent.pid')), 'the agent is up (its pid file written)');
    setConf(`AGENT=${dir}\nAGENT_TIMEOUT=30\n`);
    const r = sh('/usr/libexec/gdrgate/prolog.sh', job(15));
    t.equal(r.status, 0, r.stderr);
    // The agent writes its run line after its answer (the Prolog may exit first): waited for, 60 s at most.
    const answered = (): boolean => {
      try {
        return lastRun().startup === 'agent';
      } catch {
        return false; // a line still being appended
      }
    };
    for (const until = performance.now() + 60_000; !answered() && performance.now() < until; ) await sleep(20);
    t.match(lastRun(), { mode: /^prolog$/, startup: /^agent$/, job: /^15$/ });
    agent.kill('SIGTERM');
  });

  await t.test('dpkg --purge removes everything the package installed, and nothing else', async (t) => {
    confs.forEach((c) => rmSync(c, { force: true }));
    // The README's `systemctl enable gdrgate-agent`, as systemctl writes it: the purge takes the link too.
    symlinkSync('/usr/lib/systemd/system/gdrgate-agent.service', `${WANTS}/gdrgate-agent.service`);
    const r = dpkg('--purge', 'gdrgate');
    t.equal(r.status, 0, r.stderr);
    t.same(footprint(), before);
  });
}
