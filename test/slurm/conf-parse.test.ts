// slurm.conf text as Slurm's parser reads it (parse_config.c): comments, continuations, escapes, quotes, case, spacing.
import t from 'tap';
import { parseConf } from '../../src/slurm/conf-parse.js';

const entries = (text: string): string[] =>
  parseConf(text, '/etc/slurm/slurm.conf').order.map((o) => (o.kind === 'entry' ? `${o.entry.line}:${o.entry.name}${o.entry.op}=${o.entry.value}` : `${o.include.line}:include ${o.include.target}`));

const cases: [string, string, string[]][] = [
  ['plain', 'Prolog=/etc/slurm/prolog.sh\n', ['1:prolog=/etc/slurm/prolog.sh']],
  ['case and spaces around =', '  PROLOGFLAGS = Contain,X11\n', ['1:prologflags=Contain,X11']],
  ['comment after a value', 'Epilog=/e.sh   # the site epilog\n', ['1:epilog=/e.sh']],
  ['whole-line comment, blank lines', '# Prolog=/no.sh\n\n\t\nEpilog=/e.sh\n', ['4:epilog=/e.sh']],
  ['escaped #', 'Prolog=/opt/a\\#b.sh\n', ['1:prolog=/opt/a#b.sh']],
  ['quoted value with a space', 'TaskProlog="/etc/slurm/site task.sh" Epilog=/e.sh\n', ['1:taskprolog=/etc/slurm/site task.sh', '1:epilog=/e.sh']],
  ['several keys on one line', 'PrologFlags=Alloc PrologEpilogTimeout=30\n', ['1:prologflags=Alloc', '1:prologepilogtimeout=30']],
  ['continuation line', 'PrologFlags=Contain \\\n  Prolog=/p.sh\nEpilog=/e.sh\n', ['1:prologflags=Contain', '1:prolog=/p.sh', '3:epilog=/e.sh']],
  ['CRLF', 'Prolog=/p.sh\r\nEpilog=/e.sh\r\n', ['1:prolog=/p.sh', '2:epilog=/e.sh']],
  ['Include, any case', 'include prolog.conf\nINCLUDE /etc/slurm/%c.conf\n', ['1:include prolog.conf', '2:include /etc/slurm/%c.conf']],
  ['a key named like Include', 'IncludeX=1\n', ['1:includex=1']],
  ['NodeName takes the rest of its line', 'NodeName=gpu[1-4] CPUs=64 Prolog=no\nProlog=/p.sh\n', ['1:nodename=gpu[1-4] CPUs=64 Prolog=no', '2:prolog=/p.sh']],
  ['operators', 'SlurmctldParameters+=enable_configless\n', ['1:slurmctldparameters+=enable_configless']],
];

for (const [name, text, want] of cases) t.test(name, async (t) => t.same(entries(text), want));

t.test('a line that is not key=value is a problem, with its place', async (t) => {
  const p = parseConf('Prolog=/p.sh\nthis is not\n', '/etc/slurm/slurm.conf');
  t.same(p.problems, ['/etc/slurm/slurm.conf:2: not key=value: "this is not"']);
  t.equal(p.order.length, 1);
});
