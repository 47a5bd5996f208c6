// The usage: bare `gdrgate` prints it (on stderr, exit 2: nothing was asked), `-h` and `--help` print it on stdout
// (exit 0), for the whole command line and for one command.
import t from 'tap';
import { VERSION } from '../../src/version.js';
import { cli } from '../helpers/cli.js';

const COMMANDS = ['check', 'topo', 'prolog', 'agent', 'resume', 'snapshot', 'compare', 'task', 'epilog', 'samples', 'drill', 'baseline', 'startup-snapshot', 'slurm-config'];
const lists = (text: string): string[] => COMMANDS.filter((c) => !new RegExp(`^\\s+gdrgate ${c}\\b`, 'm').test(text));

t.test('bare gdrgate: the usage and why, on stderr; exit 2', async (t) => {
  const r = cli([]);
  t.equal(r.code, 2);
  t.equal(r.stdout, '');
  t.match(r.stderr, /^gdrgate <command>\n/);
  t.same(lists(r.stderr), [], 'every command listed');
  t.match(r.stderr, /-h, --help/);
  t.match(r.stderr, /\ngdrgate: name a command\n$/, 'and what is missing, last');
});

for (const flag of ['-h', '--help']) {
  t.test(`gdrgate ${flag}: the usage on stdout, exit 0`, async (t) => {
    const r = cli([flag]);
    t.equal(r.code, 0);
    t.equal(r.stderr, '');
    t.match(r.stdout, /^gdrgate <command>\n/);
    t.same(lists(r.stdout), [], 'every command listed');
  });
}

t.test('gdrgate check -h: the options of check', async (t) => {
  const r = cli(['check', '-h']);
  t.equal(r.code, 0);
  t.match(r.stdout, /^gdrgate check\n/);
  t.match(r.stdout, /--root/);
  t.match(r.stdout, /--json/);
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
  t.match(r.stderr, /^gdrgate: Unknown argument: chekc\n$/);
});
