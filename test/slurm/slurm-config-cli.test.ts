// `gdrgate slurm-config` around the merge: finding the conf (configless: the cached copy, else advice), the Slurm
// release (slurmd -V / sinfo --version as captured on Debian 12), the exact text listing and the JSON against its schema.
import t, { type Test } from 'tap';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Exec, ExecResult } from '../../src/host/exec.js';
import { FsHost } from '../../src/host/fs-host.js';
import { findConf, findRelease } from '../../src/cli/slurm-config.js';
import { loadConf } from '../../src/slurm/conf-load.js';
import { mergePlan } from '../../src/slurm/conf-merge.js';
import { renderJson, renderText } from '../../src/slurm/conf-render.js';
import { cli } from '../helpers/cli.js';
import { REPO } from '../helpers/paths.js';
import { validate } from '../helpers/schema.js';

const FIX = path.join(REPO, 'test/fixtures/slurm-version');
const fixture = (f: string): string => readFileSync(path.join(FIX, f), 'utf8');

/** Answers as Debian 12's Slurm 22.05.8 did, without a slurm.conf: slurmd -V prints, sinfo --version fails. */
function debian12(calls: string[], slurmd = true): Exec {
  const res = (r: Partial<ExecResult>): ExecResult => ({ exitCode: null, stdout: '', stderr: '', timedOut: false, error: null, durationMs: 1, ...r });
  return {
    async run(file, args, opts) {
      calls.push(`${file} ${args.join(' ')} SLURM_CONF=${opts.env?.SLURM_CONF ?? ''}`);
      if (file === '/usr/sbin/slurmd' && slurmd) return res({ exitCode: 0, stdout: fixture('slurmd-V_debian12-slurm-wlm-22.05.8.stdout') });
      if (file === '/usr/bin/sinfo') return res({ exitCode: 1, stderr: fixture('sinfo-version_debian12-no-conf-exit1.stderr') });
      return res({ error: 'ENOENT' });
    },
  };
}

const root = (t: Test, files: Record<string, string>): FsHost => {
  const dir = t.testdir();
  for (const [f, text] of Object.entries(files)) {
    mkdirSync(path.join(dir, path.dirname(f)), { recursive: true });
    writeFileSync(path.join(dir, f), text);
  }
  return new FsHost(dir);
};

t.test('the conf: /etc/slurm/slurm.conf when there is one', async (t) => {
  t.same(await findConf(root(t, { '/etc/slurm/slurm.conf': '', '/run/slurm/conf/slurm.conf': '' }), undefined, undefined), { file: '/etc/slurm/slurm.conf', configless: false });
});

t.test('configless: the cached copy slurmd fetched, said to be one', async (t) => {
  t.same(await findConf(root(t, { '/run/slurm/conf/slurm.conf': '' }), undefined, undefined), { file: '/run/slurm/conf/slurm.conf', configless: true });
  t.same(await findConf(root(t, { '/var/spool/slurmd/conf-cache/slurm.conf': '' }), undefined, undefined), { file: '/var/spool/slurmd/conf-cache/slurm.conf', configless: true });
  t.same(await findConf(root(t, {}), '/var/spool/slurm/d/conf-cache/slurm.conf', undefined), { file: '/var/spool/slurm/d/conf-cache/slurm.conf', configless: true });
});

t.test('$SLURM_CONF before the usual places', async (t) => {
  t.same(await findConf(root(t, { '/etc/slurm/slurm.conf': '' }), undefined, '/opt/slurm/etc/slurm.conf'), { file: '/opt/slurm/etc/slurm.conf', configless: false });
});

t.test('no conf at all: a usage error that says where to get it', async (t) => {
  await t.rejects(findConf(root(t, {}), undefined, undefined), { name: /^UsageError$/, message: /^no slurm\.conf here .* On a configless node the file lives on the slurmctld host: .*conf-cache, linked as \/run\/slurm\/conf\); `scontrol show config` shows the values in force but is not a slurm\.conf$/ });
});

t.test('the release: slurmd -V first, sinfo given the conf, else the oldest assumed', async (t) => {
  const calls: string[] = [];
  t.same(await findRelease(debian12(calls), undefined, '/etc/slurm/slurm.conf'), { release: '22.05', from: '/usr/sbin/slurmd -V: slurm-wlm 22.05.8', note: null });
  t.same(calls, ['/usr/sbin/slurmd -V SLURM_CONF=/etc/slurm/slurm.conf']);
  const none: string[] = [];
  const r = await findRelease(debian12(none, false), undefined, '/c');
  t.equal(r.release, '22.05');
  t.equal(r.from, 'assumed: no sinfo or slurmd answered its version (give --slurm-version); 22.05 is the oldest release gdrgate supports');
  t.equal(none.length, 6, 'every tool tried once');
  t.same(await findRelease(debian12([]), '24.11.3', '/c'), { release: '24.11', from: '--slurm-version 24.11.3', note: null });
  t.same(await findRelease(debian12([]), '26.05.5', '/c'), { release: '26.05', from: '--slurm-version 26.05.5', note: null });
  t.same((await findRelease(debian12([]), '26.11', '/c')).note, 'Slurm 26.11 is newer than the releases gdrgate knows (22.05-26.05): treated as 26.05');
  await t.rejects(findRelease(debian12([]), 'latest', '/c'), { name: /^UsageError$/ });
});

const SITE = 'ClusterName=site\nInclude scripts.conf\nPrologFlags=Contain,X11\n';
const SCRIPTS = 'Prolog=/etc/slurm/site-prolog.sh\nPrologEpilogTimeout=300\n';

async function sitePlan(t: Test) {
  const host = root(t, { '/etc/slurm/slurm.conf': SITE, '/etc/slurm/scripts.conf': SCRIPTS });
  const loaded = await loadConf(host, '/etc/slurm/slurm.conf');
  const S = '/usr/libexec/gdrgate';
  const plan = mergePlan({ entries: loaded.entries, mainFile: '/etc/slurm/slurm.conf', release: '22.05', scripts: { prolog: `${S}/prolog.sh`, epilog: `${S}/epilog.sh`, taskprolog: `${S}/taskprolog.sh`, health: `${S}/health.sh` }, wrapperDir: '/etc/slurm' });
  const ctx = { conf: '/etc/slurm/slurm.conf', files: loaded.files, configless: false, release: '22.05', releaseFrom: '/usr/sbin/slurmd -V: slurm-wlm 22.05.8', problems: loaded.problems };
  return { ctx, plan };
}

t.test('the text listing, exactly', async (t) => {
  const { ctx, plan } = await sitePlan(t);
  t.equal(renderText(ctx, plan), readFileSync(path.join(REPO, 'test/fixtures/golden/slurm-config-contain-x11-prolog-22.05.txt'), 'utf8'));
});

t.test('the JSON follows schemas/slurm-config.schema.json', async (t) => {
  const { ctx, plan } = await sitePlan(t);
  const data = renderJson(ctx, plan, '0.0.0') as { changes: { key: string; action: string }[]; wrappers: { path: string }[] };
  t.same(validate('slurm-config', data), []);
  t.same(data.wrappers.map((w) => w.path), ['/etc/slurm/gdrgate-prolog-chain.sh']);
  t.same(data.changes.map((c) => `${c.key} ${c.action}`), ['PrologFlags set', 'Prolog set', 'Epilog add', 'TaskProlog add', 'HealthCheckProgram optional', 'HealthCheckInterval optional', 'PrologEpilogTimeout keep', 'PropagateResourceLimitsExcept add']);
});

t.test('the built command: --conf, --slurm-version, --json; --help names the schema', async (t) => {
  const dir = t.testdir({ 'slurm.conf': 'PrologFlags=Alloc\n' });
  const r = cli(['slurm-config', '--conf', path.join(dir, 'slurm.conf'), '--slurm-version', '24.05', '--json']);
  t.equal(r.code, 0, r.stderr);
  const data = JSON.parse(r.stdout) as { slurm: unknown; changes: { key: string; set: string | null }[] };
  t.same(validate('slurm-config', data), []);
  t.same(data.slurm, { release: '24.05', from: '--slurm-version 24.05' });
  t.equal(data.changes[0]!.set, 'PrologFlags=Alloc,DeferBatch');
  t.equal(cli(['slurm-config', '--help']).stdout, [
    'gdrgate slurm-config',
    '',
    'print the slurm.conf lines to change for gdrgate, merged with the site\'s (flags',
    'kept, scripts chained); never writes slurm.conf',
    '',
    'Options:',
    '      --version        Show version number                             [boolean]',
    '      --conf           slurm.conf to read (default $SLURM_CONF,',
    '                       /etc/slurm/slurm.conf, ..., a configless node\'s cached',
    '                       copy)                                            [string]',
    '      --slurm-version  target Slurm release, e.g. 23.11 (default: sinfo',
    '                       --version / slurmd -V, else 22.05)               [string]',
    '      --scripts        directory of gdrgate\'s prolog.sh, epilog.sh,',
    '                       taskprolog.sh, health.sh on the nodes',
    '                                      [string] [default: "/usr/libexec/gdrgate"]',
    '      --wrapper-dir    where the chain wrappers go (default: the conf\'s',
    '                       directory; /etc/slurm when configless)           [string]',
    '      --json           print JSON (schemas/slurm-config.schema.json)',
    '                                                      [boolean] [default: false]',
    '  -h, --help           Show help                                       [boolean]',
    '',
  ].join('\n'));
  const missing = cli(['slurm-config', '--conf', path.join(dir, 'nope.conf')]);
  t.equal(missing.code, 2);
  t.equal(missing.stdout, '');
});
