// slurm-config's lines are read back as Slurm reads them (parse_config.c: `#` starts a comment, `\` escapes, a value
// with a blank is "quoted"): every `set` line of the plan gives back the one key and the value meant, whatever the
// directories (a space, a `#`, a backslash); a path Slurm cannot be given is refused, not printed.
import t from 'tap';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseConf } from '../../src/slurm/conf-parse.js';
import { cli, type CliRun } from '../helpers/cli.js';

/** `gdrgate slurm-config --json` (the built CLI) on `conf` in a fresh directory. */
function run(conf: string, scripts: string, wrapperDir: string, release: string): CliRun {
  const dir = t.testdir();
  writeFileSync(path.join(dir, 'slurm.conf'), conf);
  return cli(['slurm-config', '--conf', path.join(dir, 'slurm.conf'), '--slurm-version', release, '--scripts', scripts, '--wrapper-dir', wrapperDir, '--json']);
}

function planFor(conf: string, scripts: string, wrapperDir: string, release: string): { changes: { key: string; set: string | null }[] } {
  const r = run(conf, scripts, wrapperDir, release);
  return JSON.parse(r.stdout) as { changes: { key: string; set: string | null }[] };
}

const SITE = 'Prolog=/etc/slurm/site-prolog.sh\nTaskProlog=/etc/slurm/site-task.sh\nHealthCheckProgram=/usr/sbin/nhc\n';

for (const dir of ['/opt/gdr gate', '/opt/gdrgate#2', '/opt/gdr\\gate', '/opt/a b#c\\d']) {
  t.test(`scripts and wrappers in ${JSON.stringify(dir)}: each line reads back as meant`, async (t) => {
    for (const release of ['22.05', '24.05']) {
      const p = planFor(SITE, dir, dir, release);
      const wrapper = (hook: string): string => `${dir}/gdrgate-${hook}-chain.sh`;
      const meant: Record<string, string> =
        release === '22.05'
          ? { Prolog: wrapper('prolog'), Epilog: `${dir}/epilog.sh`, TaskProlog: wrapper('taskprolog'), HealthCheckProgram: wrapper('health') }
          : { Prolog: `${dir}/prolog.sh`, Epilog: `${dir}/epilog.sh`, TaskProlog: wrapper('taskprolog'), HealthCheckProgram: wrapper('health') };
      for (const [key, value] of Object.entries(meant)) {
        const line = p.changes.find((c) => c.key === key)!.set!;
        const read = parseConf(line + '\n', 'x');
        t.same(read.problems, [], `${release} ${line}`);
        t.same(
          read.order.map((o) => (o.kind === 'entry' ? [o.entry.key, o.entry.value] : null)),
          [[key, value]],
          `${release} ${line}`,
        );
      }
    }
  });
}

t.test('a path no slurm.conf line can hold (a double quote with a blank, a newline) is refused, nothing printed', async (t) => {
  for (const dir of ['/opt/"gdr gate"', '/opt/gdr\ngate']) {
    const scripts = run(SITE, dir, '/etc/slurm', '24.05');
    t.same([scripts.code, scripts.stdout], [2, ''], `--scripts ${JSON.stringify(dir)}`);
    const wrappers = run(SITE, '/usr/libexec/gdrgate', dir, '22.05');
    t.same([wrappers.code, wrappers.stdout], [2, ''], `--wrapper-dir ${JSON.stringify(dir)}`);
  }
});
