// The usage: bare `gdrgate` prints it (on stderr, exit 2: nothing was asked), `-h` and `--help` print it on stdout
// (exit 0), for the whole command line and for one command.
import t from 'tap';
import { VERSION } from '../../src/version.js';
import { cli } from '../helpers/cli.js';

const COMMANDS = ['check', 'topo', 'prolog', 'agent', 'resume', 'snapshot', 'compare', 'task', 'epilog', 'samples', 'drill', 'baseline', 'startup-snapshot', 'slurm-config'];
// The whole usage as yargs prints it to a pipe (80 columns).
const USAGE = [
  'gdrgate <command>',
  '',
  'Commands:',
  '  gdrgate check             check the GPU↔RDMA path of this node (or of --root)',
  '                            and print a report; never drains',
  '  gdrgate topo              print the GPU↔NIC PCIe matrix computed from sysfs,',
  '                            in nvidia-smi topo -m layout',
  '  gdrgate prolog            the Slurm gate: Prolog (before each job) or',
  '                            HealthCheckProgram; drains with a gdrgate: reason on',
  '                            failure                            [aliases: health]',
  '  gdrgate agent             resident gate the Slurm Prolog asks first',
  '                            (slurm/prolog.sh AGENT=): answers only \'healthy\',',
  '                            never drains; run it under a service manager as root',
  '  gdrgate resume            resume this node if the checks pass and its drain',
  '                            reason is ours',
  '  gdrgate snapshot          write one tar.gz with everything the checks read',
  '                            (replay it with --root FILE)',
  '  gdrgate compare <a> <b>   compare a suspect node (A) with a known-good one (B:',
  '                            snapshot, directory or baseline JSON), worst',
  '                            difference first',
  '  gdrgate task              Slurm TaskProlog: memlock and RDMA/GPU device',
  '                            visibility as the job sees them, against the',
  '                            Prolog\'s record; prints TaskProlog lines',
  '  gdrgate startup-snapshot  make the gate\'s V8 startup snapshot on this node',
  '                            (the Slurm wrappers\' fast path; the package makes it',
  '                            at install, the agent at its start), proven before',
  '                            it replaces the old one',
  '  gdrgate epilog            Slurm Epilog: remove the job\'s state directory; with',
  '                            `probes` configured, bandwidth probes under a budget',
  '                            and sampling policy, judged against the baseline',
  '                            (drains with gdrgate: bw-… only on a sustained fail)',
  '  gdrgate samples           per probe path and recipe: count, min, p50, p95,',
  '                            p99, last, whole history against the recent window,',
  '                            from the epilog\'s spool',
  '  gdrgate slurm-config      print the slurm.conf lines to change for gdrgate,',
  '                            merged with the site\'s (flags kept, scripts',
  '                            chained); never writes slurm.conf',
  '  gdrgate drill             failure drills: stage one bounded fault on a node,',
  '                            prove drain → requeue → resume → a job runs, every',
  '                            step timed',
  '  gdrgate fleet             the fleet view: every node of a class against the',
  '                            others (snapshots and sample spools of many nodes)',
  '  gdrgate baseline          capture or validate a baseline',
  '',
  'Options:',
  '      --version  Show version number                                   [boolean]',
  '  -h, --help     Show help                                             [boolean]',
  '',
].join('\n');
const CHECK_USAGE = [
  'gdrgate check',
  '',
  'check the GPU↔RDMA path of this node (or of --root) and print a report; never',
  'drains',
  '',
  'Options:',
  '      --version   Show version number                                  [boolean]',
  '      --root      read the node under this directory (a capture) instead of /',
  '                                                         [string] [default: "/"]',
  '      --json      print the JSON report (schemas/report.schema.json)',
  '                                                      [boolean] [default: false]',
  '      --baseline  baseline JSON: also check against the class of this node',
  '                                                                        [string]',
  '      --node      node name for class selection (default: SLURMD_NODENAME, then',
  '                  hostname)                                             [string]',
  '      --only      check ids, comma or space separated                    [array]',
  '  -v, --verbose                                       [boolean] [default: false]',
  '  -h, --help      Show help                                            [boolean]',
  '',
].join('\n');
const lists = (text: string): string[] => COMMANDS.filter((c) => !new RegExp(`^\\s+gdrgate ${c}\\b`, 'm').test(text));

t.test('bare gdrgate: the usage and why, on stderr; exit 2', async (t) => {
  const r = cli([]);
  t.equal(r.code, 2);
  t.equal(r.stdout, '');
  t.equal(r.stderr, `${USAGE}\ngdrgate: name a command\n`);
  t.same(lists(r.stderr), [], 'every command listed');
  t.equal(r.stderr.split('\n').find((l) => l.includes('-h, --help')), '  -h, --help     Show help                                             [boolean]');
  t.same(r.stderr.split('\n').slice(-3), ['', 'gdrgate: name a command', ''], 'and what is missing, last');
});

for (const flag of ['-h', '--help']) {
  t.test(`gdrgate ${flag}: the usage on stdout, exit 0`, async (t) => {
    const r = cli([flag]);
    t.equal(r.code, 0);
    t.equal(r.stderr, '');
    t.equal(r.stdout, USAGE);
    t.same(lists(r.stdout), [], 'every command listed');
  });
}

t.test('gdrgate check -h: the options of check', async (t) => {
  const r = cli(['check', '-h']);
  t.equal(r.code, 0);
  t.equal(r.stdout, CHECK_USAGE);
  t.same(r.stdout.split('\n').filter((l) => l.startsWith('      --root ')), ['      --root      read the node under this directory (a capture) instead of /']);
  t.same(r.stdout.split('\n').filter((l) => l.startsWith('      --json ')), ['      --json      print the JSON report (schemas/report.schema.json)']);
});

t.test("gdrgate --version: gdrgate's version and the runtime's, one line", async (t) => {
  const r = cli(['--version']);
  t.equal(r.code, 0);
  const v = process.versions;
  t.equal(r.stdout, `gdrgate ${VERSION} (Node ${v.node}, OpenSSL ${v.openssl}, V8 ${v.v8}, linux-${process.arch})\n`);
  t.equal(cli(['version']).stdout, r.stdout, '`gdrgate version` says the same (the startup snapshot takes no --version)');
});

t.test('a typo is still a usage error', async (t) => {
  const r = cli(['chekc']);
  t.equal(r.code, 2);
  t.equal(r.stderr, 'gdrgate: Unknown argument: chekc\n');
});
