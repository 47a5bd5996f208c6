// The chain wrappers slurm-config writes, run by /bin/sh as Slurm would (no arguments, no PATH): order, exit codes,
// a glob in Slurm's reverse order, a path that needs quoting.
import t, { type Test } from 'tap';
import { spawnSync } from 'node:child_process';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { chainText, unchainable, type Hook } from '../../src/slurm/chain.js';

/** A script at `file` that appends its name to LOG, prints a TaskProlog line, and exits `code`. */
function script(file: string, log: string, code: number): string {
  writeFileSync(file, `#!/bin/sh\necho "\${0##*/}" >> ${log}\necho "print \${0##*/}"\nexit ${code}\n`);
  chmodSync(file, 0o755);
  return file;
}

function runChain(t: Test, hook: Hook, sites: (dir: string, log: string) => string[], ours: number): { code: number | null; ran: string[]; stdout: string } {
  const dir = t.testdir();
  const log = path.join(dir, 'log');
  writeFileSync(log, '');
  const wrapper = path.join(dir, 'chain.sh');
  writeFileSync(wrapper, chainText(hook, sites(dir, log), script(path.join(dir, 'ours.sh'), log, ours), '22.05'));
  chmodSync(wrapper, 0o755);
  const r = spawnSync(wrapper, [], { env: {}, encoding: 'utf8', cwd: '/', timeout: 30_000 });
  return { code: r.status, ran: readFileSync(log, 'utf8').split('\n').filter(Boolean), stdout: r.stdout };
}

t.test('prolog: the site first, then ours, whose code is the result', async (t) => {
  const r = runChain(t, 'prolog', (d, l) => [script(path.join(d, 'site.sh'), l, 0)], 1);
  t.same(r.ran, ['site.sh', 'ours.sh']);
  t.equal(r.code, 1);
});

t.test('prolog: a failing site prolog ends the chain with its code', async (t) => {
  const r = runChain(t, 'prolog', (d, l) => [script(path.join(d, 'site.sh'), l, 3)], 0);
  t.same(r.ran, ['site.sh']);
  t.equal(r.code, 3);
});

t.test('prolog: a glob runs as Slurm runs it, z to a, the first failure ends it', async (t) => {
  const r = runChain(
    t,
    'prolog',
    (d, l) => {
      const pd = path.join(d, 'prolog.d');
      spawnSync('/bin/mkdir', [pd]);
      script(path.join(pd, '10-a.sh'), l, 0);
      script(path.join(pd, '20-b.sh'), l, 0);
      script(path.join(pd, '30-c.sh'), l, 0);
      return [`${pd}/*`];
    },
    0,
  );
  t.same(r.ran, ['30-c.sh', '20-b.sh', '10-a.sh', 'ours.sh']);
  t.equal(r.code, 0);
  const f = runChain(
    t,
    'prolog',
    (d, l) => {
      const pd = path.join(d, 'prolog.d');
      spawnSync('/bin/mkdir', [pd]);
      script(path.join(pd, '10-a.sh'), l, 0);
      script(path.join(pd, '20-b.sh'), l, 4);
      return [`${pd}/*`];
    },
    0,
  );
  t.same(f.ran, ['20-b.sh']);
  t.equal(f.code, 4);
});

t.test('epilog: ours runs even after a failing site epilog; the site\'s code wins', async (t) => {
  const r = runChain(t, 'epilog', (d, l) => [script(path.join(d, 'site.sh'), l, 5)], 1);
  t.same(r.ran, ['site.sh', 'ours.sh']);
  t.equal(r.code, 5);
  const ok = runChain(t, 'epilog', (d, l) => [script(path.join(d, 'site.sh'), l, 0)], 1);
  t.equal(ok.code, 1, 'else ours');
});

t.test('taskprolog: both scripts\' TaskProlog lines reach stdout, in order', async (t) => {
  const r = runChain(t, 'taskprolog', (d, l) => [script(path.join(d, 'site.sh'), l, 0)], 0);
  t.equal(r.stdout, 'print site.sh\nprint ours.sh\n');
  t.equal(r.code, 0);
});

t.test('health: both run, the first non-zero code is kept', async (t) => {
  const r = runChain(t, 'health', (d, l) => [script(path.join(d, 'nhc'), l, 0)], 1);
  t.same(r.ran, ['nhc', 'ours.sh']);
  t.equal(r.code, 1);
});

t.test('a site path with a space and a quote is quoted', async (t) => {
  const r = runChain(t, 'prolog', (d, l) => [script(path.join(d, "site's prolog.sh"), l, 0)], 0);
  t.same(r.ran, ["site's prolog.sh", 'ours.sh']);
  t.equal(r.code, 0);
});

t.test('what cannot be chained', async (t) => {
  t.equal(unchainable('prolog.sh'), 'prolog.sh is not an absolute path (the wrapper needs one)');
  t.equal(unchainable('/etc/slurm/a\nb'), '"/etc/slurm/a\\nb" holds control characters');
  t.equal(unchainable('/etc/slurm/pro log.d/*'), 'the glob /etc/slurm/pro log.d/* holds characters other than letters, digits and ./_+,:@%=-*?[] (it must stay unquoted)');
  t.equal(unchainable('/etc/slurm/prolog.d/*'), null);
});
