// The package's removal (the .deb's prerm, the .rpm's %preun) refuses while this node's Slurm still runs the wrappers:
// a Prolog= that is not there drains the node with Slurm's "Prolog error" on its next job. Run as the maintainer
// script runs it (sh -e), on slurm.conf files named through SLURM_CONF, as slurmd finds its own.
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { scratchDir } from '../helpers/scratch.js';

// (A module of the build's scripts, plain JavaScript: imported by its path as a string, typed here.)
const MAINT: string = '../../scripts/package-maint.mjs';
const { PRERM_IN_USE, PRERM_REMOVE } = (await import(MAINT)) as { PRERM_IN_USE: string; PRERM_REMOVE: string };
const dir = scratchDir('gdrgate-prerm-');
// Hermetic: the places the script looks besides SLURM_CONF (this machine's /etc/slurm and slurmd's conf-cache) moved
// into empty directories of the test's own (each must be in the script exactly once), so what this machine's Slurm
// runs never turns a case into a skip.
const MACHINE = ['/etc/slurm/*.conf', '/var/spool/slurmd/conf-cache/*.conf', '/var/spool/slurm/d/conf-cache/*.conf'];
// The running slurmd processes it asks (by their comm): the test's own stand-in for /proc, empty unless a case fills it.
const PROC = '/proc/[0-9]*/comm';
const proc = path.join(dir, 'proc');
mkdirSync(proc);
const HERMETIC = MACHINE.reduce((script, glob, i) => script.replace(glob, `${dir}/none${i}/*.conf`), PRERM_IN_USE).replace(PROC, `${proc}/[0-9]*/comm`);
const check = (conf: string, env: Record<string, string> = {}) => {
  const file = path.join(dir, 'slurm.conf');
  writeFileSync(file, conf);
  const r = spawnSync('/bin/sh', ['-ec', HERMETIC], { encoding: 'utf8', env: { PATH: '/usr/bin:/bin', SLURM_CONF: file, ...env }, timeout: 30_000 });
  return { code: r.status, stderr: r.stderr };
};
const refused = (uses: string) => ({
  code: 1,
  stderr: `gdrgate: not removed: Slurm on this node still runs its wrappers:${uses}. Without them every job fails (a missing Prolog drains the node: Prolog error). Take them out of slurm.conf and scontrol reconfigure first, or remove with GDRGATE_REMOVE_IN_USE=1.\n`,
});

t.test('the check is the first thing the removal script does; the places it looks, each once', async (t) => {
  t.equal(PRERM_REMOVE.startsWith(PRERM_IN_USE), true);
  t.same([...MACHINE, PROC].map((g) => PRERM_IN_USE.split(g).length - 1), [1, 1, 1, 1]);
});

t.test('a wrapper named by any hook key, in any case and spacing, or through a script of the site that names it: refused', async (t) => {
  const conf = path.join(dir, 'slurm.conf');
  t.same(check('ClusterName=c\nProlog=/usr/libexec/gdrgate/prolog.sh\n'), refused(` ${conf}:/usr/libexec/gdrgate/prolog.sh`));
  t.same(check('  taskprolog = /usr/libexec/gdrgate/taskprolog.sh # gdrgate\n'), refused(` ${conf}:/usr/libexec/gdrgate/taskprolog.sh`));
  t.same(check('HealthCheckProgram=/usr/libexec/gdrgate/health.sh\nEpilog=/usr/libexec/gdrgate/epilog.sh\n'), refused(` ${conf}:/usr/libexec/gdrgate/health.sh ${conf}:/usr/libexec/gdrgate/epilog.sh`));
  const chain = path.join(dir, 'site-prolog.sh');
  writeFileSync(chain, '#!/bin/sh\n/etc/slurm/site.sh && exec /usr/libexec/gdrgate/prolog.sh\n', { mode: 0o755 });
  t.same(check(`Prolog=${chain}\n`), refused(` ${conf}:${chain}`), "the site's chain that runs the wrapper");
  t.same(check('Prolog=/usr/libexec/gdrgate/prolog.sh\n', { GDRGATE_REMOVE_IN_USE: '1' }), { code: 0, stderr: '' }, 'removed anyway when told');
  // SLURM_CONF names a file the other places list too (the H200 said /etc/slurm/slurm.conf twice): each file once.
  const etc = path.join(dir, 'etc');
  mkdirSync(etc);
  writeFileSync(path.join(etc, 'slurm.conf'), 'Prolog=/usr/libexec/gdrgate/prolog.sh\n');
  // Hermetic but for /etc/slurm, moved to `etc` (a slurmd another test runs meanwhile is never asked).
  const script = MACHINE.reduce((sh, glob, i) => sh.replace(glob, i === 0 ? `${etc}/*.conf` : `${dir}/none${i}/*.conf`), PRERM_IN_USE).replace(PROC, `${proc}/[0-9]*/comm`);
  const twice = spawnSync('/bin/sh', ['-ec', script], { encoding: 'utf8', env: { PATH: '/usr/bin:/bin', SLURM_CONF: path.join(etc, 'slurm.conf') }, timeout: 30_000 });
  t.same({ code: twice.status, stderr: twice.stderr }, refused(` ${etc}/slurm.conf:/usr/libexec/gdrgate/prolog.sh`), 'one file, said once');
});

t.test("a node whose Slurm runs no wrapper (none at all, another Prolog, a commented one, gdrgate's own settings file): removed", async (t) => {
  const site = path.join(dir, 'site.sh');
  writeFileSync(site, '#!/bin/sh\nexit 0\n', { mode: 0o755 });
  t.same(check(''), { code: 0, stderr: '' });
  t.same(check(`Prolog=${site}\n#Prolog=/usr/libexec/gdrgate/prolog.sh\nPrologFlags=Alloc\n`), { code: 0, stderr: '' });
  t.same(check('NODE=/usr/lib/gdrgate/node\nCLI=/usr/libexec/gdrgate/x\n'), { code: 0, stderr: '' });
});

t.test('a wrapper named in any form Slurm reads: quoted, after another key on its line, continued, a bare name beside a cached slurm.conf: refused', async (t) => {
  const conf = path.join(dir, 'slurm.conf');
  t.same(check('Prolog="/usr/libexec/gdrgate/prolog.sh"\n'), refused(` ${conf}:/usr/libexec/gdrgate/prolog.sh`), 'a quoted value (parse_config.c keyvalue_pattern)');
  t.same(check('PrologFlags=Alloc,DeferBatch Prolog=/usr/libexec/gdrgate/prolog.sh\n'), refused(` ${conf}:/usr/libexec/gdrgate/prolog.sh`), 'the second key=value of a line');
  t.same(check('Epilog=\\\n/usr/libexec/gdrgate/epilog.sh\n'), refused(` ${conf}:/usr/libexec/gdrgate/epilog.sh`), 'a line continued with a backslash');
  // Configless (23.11+): `Prolog=<bare name>` is fetched into conf-cache beside slurm.conf and run from there.
  const cache = path.join(dir, 'conf-cache');
  mkdirSync(cache);
  writeFileSync(path.join(cache, 'site-prolog.sh'), '#!/bin/sh\nexec /usr/libexec/gdrgate/prolog.sh\n', { mode: 0o755 });
  const cached = path.join(cache, 'slurm.conf');
  writeFileSync(cached, 'Prolog=site-prolog.sh\n');
  const r = spawnSync('/bin/sh', ['-ec', HERMETIC], { encoding: 'utf8', cwd: '/', env: { PATH: '/usr/bin:/bin', SLURM_CONF: cached }, timeout: 30_000 });
  t.same({ code: r.status, stderr: r.stderr }, refused(` ${cached}:site-prolog.sh`), "a bare name: the script beside the cached slurm.conf, which runs the wrapper");
  t.same(check('PrologFlags=Alloc Prolog="/etc/slurm/site.sh"\nEpilogMsgTime=2000\n'), { code: 0, stderr: '' }, 'none of them gdrgate: removed');
});

t.test('a wrapper named in a file slurm.conf includes (relative to its directory or absolute, any case; a loop read once): refused', async (t) => {
  const inc = path.join(dir, 'inc');
  mkdirSync(path.join(inc, 'conf.d'), { recursive: true });
  const hooks = path.join(inc, 'conf.d/hooks.conf');
  writeFileSync(hooks, `Prolog=/usr/libexec/gdrgate/prolog.sh\ninclude ${path.join(inc, 'slurm.conf')}\n`);
  writeFileSync(path.join(inc, 'slurm.conf'), 'ClusterName=c\nInclude conf.d/hooks.conf\n');
  const run = (conf: string) => {
    const r = spawnSync('/bin/sh', ['-ec', HERMETIC], { encoding: 'utf8', cwd: '/', env: { PATH: '/usr/bin:/bin', SLURM_CONF: conf }, timeout: 30_000 });
    return { code: r.status, stderr: r.stderr };
  };
  t.same(run(path.join(inc, 'slurm.conf')), refused(` ${hooks}:/usr/libexec/gdrgate/prolog.sh`), 'Include conf.d/hooks.conf, which includes slurm.conf back');
  writeFileSync(path.join(inc, 'top.conf'), `INCLUDE   ${hooks} # the site's hooks\n`);
  t.same(run(path.join(inc, 'top.conf')), refused(` ${hooks}:/usr/libexec/gdrgate/prolog.sh`), 'an absolute INCLUDE with a comment after it');
  writeFileSync(path.join(inc, 'none.conf'), 'Include conf.d/missing.conf\nIncludeX conf.d/hooks.conf\n');
  t.same(run(path.join(inc, 'none.conf')), { code: 0, stderr: '' }, 'a missing include, and a key that only begins with Include: removed');
});

t.test("the files a running slurmd was started with (its -f in each form getopt takes, its SLURM_CONF, its -d's conf-cache): refused", async (t) => {
  const at = path.join(dir, 'slurmd');
  mkdirSync(path.join(at, 'spool/conf-cache'), { recursive: true });
  const hooks = 'Prolog=/usr/libexec/gdrgate/prolog.sh\n';
  const files = { f: path.join(at, 'f.conf'), env: path.join(at, 'env.conf'), cache: path.join(at, 'spool/conf-cache/slurm.conf') };
  for (const file of Object.values(files)) writeFileSync(file, hooks);
  // A process per case (comm, NUL-separated cmdline and environ, as /proc/PID has them); SLURM_CONF names an empty file.
  const slurmd = (pid: number, argv: string[], env: string[] = [], comm = 'slurmd') => {
    mkdirSync(path.join(proc, String(pid)));
    writeFileSync(path.join(proc, String(pid), 'comm'), `${comm}\n`);
    writeFileSync(path.join(proc, String(pid), 'cmdline'), argv.map((a) => `${a}\0`).join(''));
    writeFileSync(path.join(proc, String(pid), 'environ'), env.map((a) => `${a}\0`).join(''));
  };
  const cases: [string, string[], string[], string][] = [
    ['-f FILE', ['/usr/sbin/slurmd', '-D', '-f', files.f], [], files.f],
    ['-Dvf FILE', ['/usr/sbin/slurmd', '-Dvf', files.f], [], files.f],
    ['-fFILE', ['/usr/sbin/slurmd', `-f${files.f}`], [], files.f],
    ['SLURM_CONF in its environment', ['/usr/sbin/slurmd'], ['PATH=/bin', `SLURM_CONF=${files.env}`], files.env],
    ['-d DIR (configless)', ['/usr/sbin/slurmd', '-d', path.join(at, 'spool'), '--conf-server', 'ctl'], [], files.cache],
  ];
  let pid = 100;
  for (const [name, argv, env, file] of cases) {
    rmSync(proc, { recursive: true });
    mkdirSync(proc);
    slurmd(++pid, argv, env);
    slurmd(++pid, ['/usr/sbin/slurmstepd', '-f', path.join(at, 'never.conf')], [], 'slurmstepd');
    t.same(check(''), refused(` ${file}:/usr/libexec/gdrgate/prolog.sh`), name);
  }
  rmSync(proc, { recursive: true });
  mkdirSync(proc);
  slurmd(200, ['/usr/sbin/slurmd', '-L', '-f', '-n', '5'], ['SLURM_CONFX=/x']);
  t.same(check(''), { code: 0, stderr: '' }, 'a slurmd whose files run no wrapper (-L takes an argument; no -f FILE): removed');
  rmSync(proc, { recursive: true });
  mkdirSync(proc);
});
