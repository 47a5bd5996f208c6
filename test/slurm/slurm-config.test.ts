// slurm-config's merge, table-driven on slurm.conf files of the shapes sites run (Include lines, an existing Prolog,
// PrologFlags=Contain,X11, a TaskProlog, odd case and spacing, NHC), per Slurm release; exact changes and wrappers.
import t, { type Test } from 'tap';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { FsHost } from '../../src/host/fs-host.js';
import { loadConf } from '../../src/slurm/conf-load.js';
import { mergePlan, type Plan } from '../../src/slurm/conf-merge.js';
import type { Release } from '../../src/slurm/versions.js';

const CONF = '/etc/slurm/slurm.conf';
const S = '/usr/libexec/gdrgate';
const scripts = { prolog: `${S}/prolog.sh`, epilog: `${S}/epilog.sh`, taskprolog: `${S}/taskprolog.sh`, health: `${S}/health.sh` };

/** The files under a fresh root, the plan for `release`, each change as one line. */
async function plan(t: Test, files: Record<string, string>, release: Release): Promise<{ lines: string[]; plan: Plan; files: readonly string[]; problems: readonly string[] }> {
  const root = t.testdir();
  for (const [f, text] of Object.entries(files)) {
    mkdirSync(path.join(root, path.dirname(f)), { recursive: true });
    writeFileSync(path.join(root, f), text);
  }
  const loaded = await loadConf(new FsHost(root), CONF);
  const p = mergePlan({ entries: loaded.entries, mainFile: CONF, release, scripts, wrapperDir: '/etc/slurm' });
  const lines = p.changes.map((c) => `${c.key} ${c.action}${c.line === null ? '' : ` @${path.basename(c.file)}:${c.line}`}${c.set === null ? '' : ` ${c.set}`}`);
  return { lines, plan: p, files: loaded.files, problems: loaded.problems };
}

const NONE = [
  'PrologFlags add PrologFlags=Alloc,DeferBatch',
  `Prolog add Prolog=${S}/prolog.sh`,
  `Epilog add Epilog=${S}/epilog.sh`,
  `TaskProlog add TaskProlog=${S}/taskprolog.sh`,
  `HealthCheckProgram optional HealthCheckProgram=${S}/health.sh`,
  'HealthCheckInterval optional HealthCheckInterval=300',
  'PrologEpilogTimeout add PrologEpilogTimeout=60',
  'PropagateResourceLimitsExcept add PropagateResourceLimitsExcept=MEMLOCK',
];

const cases: { name: string; release: Release; files: Record<string, string>; want: string[]; wrappers?: string[] }[] = [
  { name: 'a conf without any of it', release: '22.05', files: { [CONF]: 'ClusterName=c\n' }, want: NONE },
  {
    name: 'PrologFlags=Contain,X11 and an existing Prolog (22.05: a chain wrapper)',
    release: '22.05',
    files: { [CONF]: 'PrologFlags=Contain,X11\nProlog=/etc/slurm/site-prolog.sh\n' },
    want: ['PrologFlags set @slurm.conf:1 PrologFlags=Contain,X11,DeferBatch', 'Prolog set @slurm.conf:2 Prolog=/etc/slurm/gdrgate-prolog-chain.sh', ...NONE.slice(2)],
    wrappers: ['/etc/slurm/gdrgate-prolog-chain.sh'],
  },
  {
    name: 'the same on 24.05: a second Prolog line, no wrapper',
    release: '24.05',
    files: { [CONF]: 'PrologFlags=Contain,X11\nProlog=/etc/slurm/site-prolog.sh\n' },
    want: ['PrologFlags set @slurm.conf:1 PrologFlags=Contain,X11,DeferBatch', `Prolog add @slurm.conf:2 Prolog=${S}/prolog.sh`, ...NONE.slice(2)],
    wrappers: [],
  },
  {
    name: "Include lines: relative to slurm.conf's directory (23.02 on) or the including file's (22.05), %c, settings in included files",
    release: '23.11',
    files: {
      [CONF]: 'ClusterName=Alpha\nInclude conf.d/scripts.conf\ninclude /etc/slurm/%c-limits.conf\n',
      '/etc/slurm/conf.d/scripts.conf': 'Epilog=/etc/slurm/epilog.d/*\nInclude flags.conf\n',
      '/etc/slurm/conf.d/flags.conf': 'PrologFlags=Alloc\n',
      '/etc/slurm/alpha-limits.conf': 'PropagateResourceLimitsExcept=CORE,NOFILE\nPrologEpilogTimeout=120\n',
    },
    want: [
      'PrologFlags set @flags.conf:1 PrologFlags=Alloc,DeferBatch',
      `Prolog add Prolog=${S}/prolog.sh`,
      'Epilog set @scripts.conf:1 Epilog=/etc/slurm/gdrgate-epilog-chain.sh',
      `TaskProlog add TaskProlog=${S}/taskprolog.sh`,
      `HealthCheckProgram optional HealthCheckProgram=${S}/health.sh`,
      'HealthCheckInterval optional HealthCheckInterval=300',
      'PrologEpilogTimeout keep @alpha-limits.conf:2',
      'PropagateResourceLimitsExcept set @alpha-limits.conf:1 PropagateResourceLimitsExcept=CORE,NOFILE,MEMLOCK',
    ],
    wrappers: ['/etc/slurm/gdrgate-epilog-chain.sh'],
  },
  {
    name: 'an existing TaskProlog: chained in every release (one TaskProlog=)',
    release: '25.11',
    files: { [CONF]: 'TaskProlog=/etc/slurm/site-task.sh\nPrologFlags=RunInJob\n' },
    want: ['PrologFlags set @slurm.conf:2 PrologFlags=RunInJob,DeferBatch', `Prolog add Prolog=${S}/prolog.sh`, `Epilog add Epilog=${S}/epilog.sh`, 'TaskProlog set @slurm.conf:1 TaskProlog=/etc/slurm/gdrgate-taskprolog-chain.sh', ...NONE.slice(4)],
    wrappers: ['/etc/slurm/gdrgate-taskprolog-chain.sh'],
  },
  {
    name: 'odd case and spacing, comments, a repeated key (the last wins), NHC',
    release: '22.05',
    files: {
      [CONF]: [
        '# PrologFlags=X11',
        'prologflags = contain   # for pam_slurm_adopt',
        'PROLOGFLAGS=contain,deferbatch',
        'healthcheckprogram=/usr/sbin/nhc',
        'HealthCheckInterval=300',
        'prologepilogtimeout = 30',
        'propagateresourcelimits=NONE',
        '',
      ].join('\n'),
    },
    want: ['PrologFlags keep @slurm.conf:3', ...NONE.slice(1, 4), 'HealthCheckProgram set @slurm.conf:4 healthcheckprogram=/etc/slurm/gdrgate-health-chain.sh', 'HealthCheckInterval keep @slurm.conf:5', 'PrologEpilogTimeout set @slurm.conf:6 prologepilogtimeout=60', 'PropagateResourceLimits keep @slurm.conf:7'],
    wrappers: ['/etc/slurm/gdrgate-health-chain.sh'],
  },
  {
    name: '25.05: PrologTimeout and EpilogTimeout override PrologEpilogTimeout, each checked',
    release: '25.05',
    files: { [CONF]: 'PrologEpilogTimeout=90\nEpilogTimeout=20\nPropagateResourceLimits=CORE,MEMLOCK\n' },
    want: [...NONE.slice(0, 6), 'PrologTimeout keep @slurm.conf:1', 'EpilogTimeout set @slurm.conf:2 EpilogTimeout=60', 'PropagateResourceLimits set @slurm.conf:3 PropagateResourceLimits=CORE'],
  },
  {
    name: 'DeferBatch alone: Alloc is written beside it (26.05 would imply it; explicit holds in every release)',
    release: '26.05',
    files: { [CONF]: 'PrologFlags=DeferBatch\n' },
    want: ['PrologFlags set @slurm.conf:1 PrologFlags=DeferBatch,Alloc', ...NONE.slice(1)],
  },
  {
    name: 'PropagateResourceLimits=ALL: the line goes, the Except form comes',
    release: '22.05',
    files: { [CONF]: 'PropagateResourceLimits=ALL\n' },
    want: [...NONE.slice(0, 7), 'PropagateResourceLimits remove @slurm.conf:1', 'PropagateResourceLimitsExcept add PropagateResourceLimitsExcept=MEMLOCK'],
  },
  {
    name: 'already set up for gdrgate: all kept',
    release: '24.11',
    files: { [CONF]: `PrologFlags=Alloc,DeferBatch\nProlog=/etc/slurm/site.sh\nProlog=${S}/prolog.sh\nEpilog=${S}/epilog.sh\nTaskProlog=/etc/slurm/gdrgate-taskprolog-chain.sh\nPrologEpilogTimeout=60\nPropagateResourceLimitsExcept=RLIMIT_MEMLOCK\n` },
    want: ['PrologFlags keep @slurm.conf:1', 'Prolog keep @slurm.conf:3', 'Epilog keep @slurm.conf:4', 'TaskProlog keep @slurm.conf:5', NONE[4]!, NONE[5]!, 'PrologEpilogTimeout keep @slurm.conf:6', 'PropagateResourceLimitsExcept keep @slurm.conf:7'],
  },
];

for (const c of cases)
  t.test(`${c.name} [${c.release}]`, async (t) => {
    const p = await plan(t, c.files, c.release);
    t.same(p.lines, c.want);
    t.same(p.problems, []);
    if (c.wrappers) t.same(p.plan.wrappers.map((w) => w.path), c.wrappers);
  });

t.test('Include: the files in the order read', async (t) => {
  const p = await plan(t, cases[3]!.files, '23.11');
  t.same(p.files, [CONF, '/etc/slurm/conf.d/scripts.conf', '/etc/slurm/conf.d/flags.conf', '/etc/slurm/alpha-limits.conf']);
});

t.test('a missing Include file and an unknown flag are said', async (t) => {
  const p = await plan(t, { [CONF]: 'Include nope.conf\nPrologFlags=RunInJob\n' }, '23.11');
  t.same(p.problems, ['/etc/slurm/slurm.conf:1: Include /etc/slurm/nope.conf: no such file (slurmctld would not start)']);
  t.same(p.plan.warnings, ['PrologFlags RunInJob is not a flag Slurm 23.11 knows: slurmctld will refuse the file']);
});

t.test('an Include with a glob: said as Slurm says it (no glob expanded), never read as a file named *', async (t) => {
  const p = await plan(t, { [CONF]: 'ClusterName=c\nInclude conf.d/*.conf\n', '/etc/slurm/conf.d/a.conf': 'PrologFlags=Alloc\n' }, '23.11');
  t.same(p.problems, ['/etc/slurm/slurm.conf:2: Include conf.d/*.conf: Slurm does not expand a glob (it skips the line or refuses the file)']);
});

t.test('a repeated one-value key is said, with every place', async (t) => {
  const p = await plan(t, cases[5]!.files, '22.05');
  t.same(p.plan.warnings, ['PrologFlags is set 2 times (/etc/slurm/slurm.conf:2, /etc/slurm/slurm.conf:3): Slurm 22.05 uses the last one only']);
});

t.test('NoHold with Contain, or with RunInJob (which sets Contain), is said (slurmctld refuses it); RunInJob with Serial too', async (t) => {
  const noHold = 'PrologFlags NoHold does not combine with Contain, X11 or RunInJob (both set Contain): slurmctld refuses the file (read_config.c)';
  t.same((await plan(t, { [CONF]: 'PrologFlags=NoHold,Contain\n' }, '22.05')).plan.warnings, [noHold]);
  t.same((await plan(t, { [CONF]: 'PrologFlags=NoHold,RunInJob\n' }, '24.05')).plan.warnings, [noHold]);
  t.same((await plan(t, { [CONF]: 'PrologFlags=RunInJob,Serial\n' }, '24.05')).plan.warnings, ['PrologFlags RunInJob and Serial do not combine (Slurm 24.05+ says so at start)']);
});
