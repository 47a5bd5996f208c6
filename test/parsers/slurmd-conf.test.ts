// Which slurm.conf a running slurmd reads, from its command line and starting environment, as slurmd's own
// getopt_long and _establish_configuration decide (Slurm 25.05 slurmd.c; the short options the same since 20.11).
// The command lines are those slurmd is started with: SchedMD's slurmd.service (`slurmd --systemd $SLURMD_OPTIONS`,
// SLURMD_OPTIONS from /etc/sysconfig/slurmd or /etc/default/slurmd), Debian's (`slurmd -D -s $SLURMD_OPTIONS`), the
// configless page's (`slurmd --conf-server slurmctl-primary:6817`), this project's e2e clusters (`slurmd -f CONF -N NODE`).
import t from 'tap';
import { nulList, slurmdConf } from '../../src/parsers/slurmd-conf.js';

const UNIT_ENV = ['LANG=C.UTF-8', 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin', 'INVOCATION_ID=5f2c', 'JOURNAL_STREAM=8:23641', 'SYSTEMD_EXEC_PID=1432'];

t.test('no -f, no SLURM_CONF: the default file compiled in', (t) => {
  t.same(slurmdConf(['/usr/sbin/slurmd', '--systemd'], UNIT_ENV), { kind: 'default' });
  t.same(slurmdConf(['/usr/sbin/slurmd', '-D', '-s'], UNIT_ENV), { kind: 'default' });
  t.end();
});

t.test('-f in each form getopt_long takes it; the last one wins', (t) => {
  const file = (argv: string[]): unknown => slurmdConf(argv, UNIT_ENV);
  const want = { kind: 'file', file: '/opt/slurm/etc/slurm.conf', from: '-f' };
  t.same(file(['/usr/sbin/slurmd', '--systemd', '-f', '/opt/slurm/etc/slurm.conf']), want, 'SLURMD_OPTIONS="-f /opt/slurm/etc/slurm.conf"');
  t.same(file(['/usr/sbin/slurmd', '-f/opt/slurm/etc/slurm.conf']), want, 'attached');
  t.same(file(['/usr/sbin/slurmd', '-Df', '/opt/slurm/etc/slurm.conf']), want, 'after a flag in one word');
  t.same(file(['slurmd', '-f', '/etc/slurm/slurm.conf', '-N', 'node1', '-f', '/opt/slurm/etc/slurm.conf']), want, 'the last -f');
  t.same(file(['slurmd', '-f', '/opt/slurm/etc/slurm.conf', '-N', '-f']), want, "-N's argument is a node name, whatever it looks like");
  t.same(file(['slurmd', '-N-f', '-f', '/opt/slurm/etc/slurm.conf']), want, "-N's attached argument");
  t.same(file(['slurmd', '-F-f', '-f', '/opt/slurm/etc/slurm.conf']), want, "-F's optional argument is the rest of its word");
  t.same(file(['slurmd', '--extra', '-f', '-f', '/opt/slurm/etc/slurm.conf']), want, "--extra's argument");
  t.same(file(['slurmd', '--conf=-f /x', '-f', '/opt/slurm/etc/slurm.conf']), want, "--conf=... is a node's dynamic definition, not a file");
  t.same(file(['slurmd', 'stray', '-f', '/opt/slurm/etc/slurm.conf']), want, 'an operand is skipped, as getopt_long permutes');
  t.same(file(['slurmd', '--', '-f', '/x/slurm.conf']), { kind: 'default' }, 'after --, nothing is an option');
  t.end();
});

t.test('SLURM_CONF in slurmd\'s starting environment, below -f', (t) => {
  t.same(slurmdConf(['/usr/sbin/slurmd', '--systemd'], [...UNIT_ENV, 'SLURM_CONF=/shared/slurm/slurm.conf']), { kind: 'file', file: '/shared/slurm/slurm.conf', from: 'SLURM_CONF' });
  t.same(slurmdConf(['/usr/sbin/slurmd', '-f', '/opt/slurm/etc/slurm.conf'], [...UNIT_ENV, 'SLURM_CONF=/shared/slurm/slurm.conf']), { kind: 'file', file: '/opt/slurm/etc/slurm.conf', from: '-f' });
  t.same(slurmdConf(['/usr/sbin/slurmd'], ['XSLURM_CONF=/x/slurm.conf']), { kind: 'default' }, 'only the variable of that name');
  t.end();
});

t.test('configless: --conf-server (any unique prefix), above -f and SLURM_CONF', (t) => {
  const want = { kind: 'configless', from: '--conf-server' };
  t.same(slurmdConf(['/usr/sbin/slurmd', '--systemd', '--conf-server', 'slurmctl-primary:6817'], UNIT_ENV), want);
  t.same(slurmdConf(['/usr/sbin/slurmd', '--conf-server=slurmctl-primary:6817,slurmctl-secondary', '-f', '/etc/slurm/slurm.conf'], UNIT_ENV), want);
  t.same(slurmdConf(['/usr/sbin/slurmd', '--conf-s', 'ctl'], UNIT_ENV), want, 'abbreviated');
  t.end();
});

t.test('SLURM_CONF_SERVER is asked only where no file is told: -f and SLURM_CONF stand above it, and alone it is as if unset', (t) => {
  // slurmd.c _establish_configuration reads a file where --conf-server is not given and _slurm_conf_file_exists (-f,
  // SLURM_CONF, the default file when it is there); SLURM_CONF_SERVER is read only by fetch_config (20.11 to 25.11).
  const server = [...UNIT_ENV, 'SLURM_CONF_SERVER=ctl:6817'];
  t.same(slurmdConf(['/usr/sbin/slurmd'], [...server, 'SLURM_CONF=/x/slurm.conf']), { kind: 'file', file: '/x/slurm.conf', from: 'SLURM_CONF' });
  t.same(slurmdConf(['/usr/sbin/slurmd', '-f', '/opt/slurm/etc/slurm.conf'], server), { kind: 'file', file: '/opt/slurm/etc/slurm.conf', from: '-f' });
  t.same(slurmdConf(['/usr/sbin/slurmd', '--systemd'], server), { kind: 'default' }, 'the default file where it is there, else configless: as without it');
  t.end();
});

t.test("every option of slurmd's opt_string and long options: those with an argument take the next word, whatever it looks like", (t) => {
  const file = '/opt/slurm/etc/slurm.conf';
  const want = { kind: 'file', file, from: '-f' };
  // slurmd(8): -d slurmstepd's path, -L the log file, -n the nice value, -N the node name.
  const withArg: [string, string][] = [['-d', '/opt/slurm/sbin/slurmstepd'], ['-L', '/var/log/slurm/slurmd.log'], ['-n', '-5'], ['-N', 'gpu001']];
  t.same(withArg.map(([o, v]) => slurmdConf(['slurmd', o, v, '-f', file], UNIT_ENV)), withArg.map(() => want), withArg.map(([o]) => o).join(' '));
  const flags = ['-b', '-c', '-C', '-D', '-F', '-G', '-h', '-M', '-s', '-v', '-vvv', '-V', '-Z'];
  t.same(flags.map((o) => slurmdConf(['slurmd', o, '-f', file], UNIT_ENV)), flags.map(() => want), flags.join(' '));
  const long = ['--authinfo', '--ca-cert-file', '--conf', '--extra', '--instance-id', '--instance-type', '--parameters'];
  t.same(long.map((o) => slurmdConf(['slurmd', o, '-f', '-f', file], UNIT_ENV)), long.map(() => want), `${long.join(' ')}: '-f' their argument`);
  t.end();
});

t.test("a reconfigure's re-exec names its conf-cache, above everything", (t) => {
  t.same(slurmdConf(['/usr/sbin/slurmd', '--conf-server', 'ctl'], [...UNIT_ENV, 'SLURMD_RECONF_CONF_CACHE=/var/spool/slurmd/conf-cache']), { kind: 'file', file: '/var/spool/slurmd/conf-cache/slurm.conf', from: 'SLURMD_RECONF_CONF_CACHE' });
  t.end();
});

t.test('what this reading does not know is said, never guessed', (t) => {
  t.same(slurmdConf(['slurmd', '-x'], UNIT_ENV), { kind: 'unknown', why: "slurmd's option -x is not one this reading knows" });
  t.same(slurmdConf(['slurmd', '--con', 'x'], UNIT_ENV), { kind: 'unknown', why: 'slurmd\'s option "--con" is not one this reading knows' }, 'ambiguous: conf or conf-server');
  t.same(slurmdConf(['slurmd', '--new-option'], UNIT_ENV), { kind: 'unknown', why: 'slurmd\'s option "--new-option" is not one this reading knows' });
  t.same(slurmdConf(['slurmd', '-f'], UNIT_ENV), { kind: 'unknown', why: "slurmd's option -f has no argument" });
  t.same(slurmdConf(['slurmd', '-f', 'etc/slurm.conf'], UNIT_ENV), { kind: 'unknown', why: 'slurmd\'s -f "etc/slurm.conf" is not an absolute path' });
  t.same(slurmdConf(['slurmd'], ['SLURM_CONF=slurm.conf']), { kind: 'unknown', why: 'slurmd\'s SLURM_CONF "slurm.conf" is not an absolute path' });
  t.same(slurmdConf(['slurmd'], ['SLURMD_RECONF_CONF_CACHE=cache']), { kind: 'unknown', why: 'SLURMD_RECONF_CONF_CACHE "cache" is not an absolute path' });
  t.end();
});

t.test('a cmdline or environ file: its NUL-separated strings', (t) => {
  t.same(nulList(Buffer.from('/usr/sbin/slurmd\0-f\0/a b/slurm.conf\0')), ['/usr/sbin/slurmd', '-f', '/a b/slurm.conf']);
  t.same(nulList(Buffer.from('')), []);
  t.same(nulList(Buffer.from('a\0\0b\0')), ['a', '', 'b'], 'an empty argument kept');
  t.end();
});
