// Only the Host reads under a root: every module outside src/host/ is parsed, and one that joins a path under a root, or gives a node's path (/sys, /proc, /dev, /run) to a src/host helper that acts on this machine's paths, fails (the rule's own cases first, the Epilog's old cgroup look among them).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { REPO } from '../helpers/paths.js';
import { exportedHelpers, kernelConsts, machineExports, rootReads, type RootRead, type RuleContext } from './_kernel-paths.js';

const SRC = path.join(REPO, 'src');
/**
 * Modules outside src/host/ allowed a finding, each with its reason. None: the gate's own files (config, state,
 * spool) are no kernel paths and go through src/host's helpers by their own names; a node's files go through its Host.
 */
const ALLOWED: Readonly<Record<string, string>> = {};

const show = (f: RootRead): string => `${f.line}: ${f.rule} ${f.text}`;

/** The rule's cases: src/host's machine helpers as they are named there, one kernel constant imported from elsewhere. */
const CASES: RuleContext = {
  machineHelper: (spec, name) => (/(^|\/)host\/[\w-]+\.js$/.test(spec) && ['someNames', 'listNames', 'readSmall', 'lstatOrNull', 'exists'].includes(name)) || (spec === './files.js' && name === 'readStamp'),
  kernelConst: (spec, name) => spec === './busy.js' && name === 'SLURM_CGROUP_V2',
};

t.test('the rule: invalid', async (t) => {
  const invalid: [string, string[]][] = [
    // The Epilog's look at Slurm's cgroup tree before it went through the Host (src/epilog/busy.ts): a capture's link
    // out of its root was followed onto this machine's /sys/fs/cgroup.
    [
      [
        "import path from 'node:path';",
        "import { someNames } from '../host/dirs.js';",
        "export const SLURM_CGROUP_V2 = '/sys/fs/cgroup/system.slice/slurmstepd.scope';",
        'function slurmJobs(root: string): Set<string> | null {',
        '  const v2 = names(path.join(root, SLURM_CGROUP_V2));',
        '  return v2 === null ? null : new Set(v2);',
        '}',
        'function names(dir: string): string[] | null {',
        '  try {',
        '    return someNames(dir, 4096);',
        '  } catch {',
        '    return null;',
        '  }',
        '}',
      ].join('\n'),
      ['5: kernel-path names(path.join(root, SLURM_CGROUP_V2))', '5: root-join path.join(root, SLURM_CGROUP_V2)'],
    ],
    ["import { readSmall } from '../host/files.js';\nreadSmall('/proc/self/status', { max: 4096 });", ["2: kernel-path readSmall('/proc/self/status', { max: 4096 })"]],
    ["import { lstatOrNull } from '../../host/files.js';\nconst st = lstatOrNull(`/proc/${pid}/status`);", ['2: kernel-path lstatOrNull(`/proc/${pid}/status`)']],
    ["import { exists } from '../host/entries.js';\nexists(cfg.root + '/sys/class/infiniband');", ["2: kernel-path exists(cfg.root + '/sys/class/infiniband')", "2: root-join cfg.root + '/sys/class/infiniband'"]],
    ["import { listNames as ls } from '../host/dirs.js';\nconst SYS = '/sys/module';\nls(SYS);", ['3: kernel-path ls(SYS)']],
    ["import { someNames } from '../host/dirs.js';\nconst CG = '/sys/fs/cgroup/freezer/slurm';\nfor (const u of us) someNames(path.join(CG, u), 4);", ['3: kernel-path someNames(path.join(CG, u), 4)']],
    ["import { someNames } from '../host/dirs.js';\nimport { SLURM_CGROUP_V2 } from './busy.js';\nsomeNames(SLURM_CGROUP_V2, 1);", ['3: kernel-path someNames(SLURM_CGROUP_V2, 1)']],
    ["import { readSmall } from '../host/files.js';\nreadSmall('/run/slurmd.pid', { max: 64 });", ["2: kernel-path readSmall('/run/slurmd.pid', { max: 64 })"]],
    ["import { readStamp } from './files.js';\nreadStamp('/sys/fs/cgroup');", ["2: kernel-path readStamp('/sys/fs/cgroup')"]],
    ["import { join } from 'node:path';\nconst p = join(treeRoot, 'proc', 'modules');", ["2: root-join join(treeRoot, 'proc', 'modules')"]],
    ['const p = `${root}/sys/bus/pci/devices`;', ['1: root-join `${root}/sys/bus/pci/devices`']],
    ["const p = path.resolve(i.cfg.root, 'dev') + '/nvidia0';", ["1: root-join path.resolve(i.cfg.root, 'dev') + '/nvidia0'"]],
    ["import { readSmall } from '../host/files.js';\nconst f = (p: string) => readSmall(p).ok;\nconst g = (q: string) => f(q);\ng('/dev/nvidiactl');", ["4: kernel-path g('/dev/nvidiactl')"]],
  ];
  for (const [code, want] of invalid) t.same(rootReads(code, CASES).map(show), want, code);
});

t.test('the rule: valid', async (t) => {
  const valid = [
    "await host.list('/sys/bus/pci/devices');",
    "import { someNamesOn } from '../host/dirs.js';\nawait someNamesOn(host, '/proc', 4097);",
    "import { readSmall } from '../host/files.js';\nreadSmall(path.join(stateDir, 'job-5', 'prolog.json'));",
    "import { someNames } from '../host/dirs.js';\nsomeNames(stateDir, 4096);",
    "export const SLURM_CGROUP_V2 = '/sys/fs/cgroup/system.slice/slurmstepd.scope';\nlog(SLURM_CGROUP_V2);",
    "const live = path.resolve(a.root) === '/';",
    'const cmd = `baseline capture --root ${root}`;',
    'const host = new FsHost(root);',
    "import { readSmall } from './files.js';\nreadSmall('/proc/self/status');",
    "import { exists } from '../host/entries.js';\nexists('/usr/sbin/slurmd');",
    "const p = `${dir}/${name}`;",
    "const u = url + '/api/v1/query';",
    "import { readSmall } from '../host/files.js';\nreadSmall('/runtime/x');",
  ];
  for (const code of valid) t.same(rootReads(code, CASES).map(show), [], code);
});

t.test('the rule: what a module hands on to other modules as a machine helper', async (t) => {
  const cases: [string, string[]][] = [
    ["import { readSmall } from '../host/files.js';\nexport function readStamp(dir: string) {\n  return readSmall(join(dir, 'stamp'));\n}\nexport const STAMP = 'stamp';", ['readStamp']],
    ["import { lstatOrNull } from '../host/files.js';\nexport const owner = (p: string) => lstatOrNull(p)?.uid;\nconst mine = (q: string) => owner(q) === 0;\nexport { mine };", ['owner', 'mine']],
    ["export { readSmall as readFile } from '../host/files.js';\nexport { someNamesOn } from '../host/dirs.js';", ['readFile']],
    ["import { someNamesOn } from '../host/dirs.js';\nexport const procs = (host: Host) => someNamesOn(host, '/proc', 10);", []],
  ];
  for (const [code, want] of cases) t.same(exportedHelpers(code, CASES), want, code);
});

function modules(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? modules(path.join(dir, e.name)) : /\.ts$/.test(e.name) ? [path.join(dir, e.name)] : []));
}

const all = modules(SRC).map((f) => path.relative(SRC, f).split(path.sep).join('/'));
const text = new Map(all.map((m) => [m, readFileSync(path.join(SRC, m), 'utf8')]));
const hostModules = all.filter((m) => m.startsWith('host/') && m !== 'host/host.ts');
const sorted = new Map(hostModules.map((m) => [m, machineExports(text.get(m)!, m)]));
const consts = new Map(all.map((m) => [m, new Set(kernelConsts(text.get(m)!, m))]));

/** The module `spec` names from `from` (both relative to src/), as tsc resolves `./x.js` to ./x.ts. */
const target = (from: string, spec: string): string => path.posix.normalize(path.posix.join(path.posix.dirname(from), spec)).replace(/\.js$/, '.ts');
const helpers = new Map<string, ReadonlySet<string>>(all.map((m) => [m, new Set(sorted.get(m)?.machine ?? [])]));
const context = (from: string): RuleContext => ({
  machineHelper: (spec, name) => helpers.get(target(from, spec))?.has(name) ?? false,
  kernelConst: (spec, name) => consts.get(target(from, spec))?.has(name) ?? false,
});
// A module's functions that hand a path on to a helper of another module are helpers to their importers, and so on.
for (let grew = true; grew; ) {
  grew = false;
  for (const m of all.filter((x) => !x.startsWith('host/'))) {
    const now = new Set(exportedHelpers(text.get(m)!, context(m), m));
    if (now.size === helpers.get(m)!.size) continue;
    helpers.set(m, now);
    grew = true;
  }
}

const outside = all.filter((m) => !m.startsWith('host/'));
const offenders = outside.flatMap((m) => rootReads(text.get(m)!, context(m), m).map((f) => `src/${m}:${show(f)}`));

t.test('no module outside src/host/ reads a kernel path or a root around the Host', async (t) => {
  const bad = offenders.filter((o) => ALLOWED[o.slice('src/'.length, o.indexOf(':'))] === undefined);
  t.same(bad, [], `read these through the node's Host (src/host/host.ts):\n${bad.join('\n')}`);
});

t.test('every allow-list entry names a module that still needs it, with its reason', async (t) => {
  for (const [m, why] of Object.entries(ALLOWED)) {
    t.ok(why.trim().length > 0, `${m}: a reason`);
    t.ok(offenders.some((o) => o.startsWith(`src/${m}:`)), `${m}: still has a finding (else drop the entry)`);
  }
});

t.test('the guard reads the tree: src/host/ helpers sorted by whether they take a Host, kernel constants found', async (t) => {
  t.ok(outside.length > 200, `modules outside src/host/: ${outside.length}`);
  t.same(sorted.get('host/dirs.ts'), { machine: ['makeDir', 'makeDirs', 'removeDir', 'removeTree', 'listNames', 'listEntries', 'makeTempDir', 'someNames'], viaHost: ['someNamesOn'] });
  t.same(sorted.get('host/files.ts')?.machine.filter((n) => ['readSmall', 'lstatOrNull', 'writeAtomic'].includes(n)).sort(), ['lstatOrNull', 'readSmall', 'writeAtomic']);
  t.same([...consts.get('epilog/busy.ts')!], ['SLURM_CGROUP_V2', 'SLURM_CGROUP_V1']);
  t.same(context('epilog/busy.ts').machineHelper('../host/dirs.js', 'someNames'), true);
  t.same(context('epilog/busy.ts').machineHelper('../host/dirs.js', 'someNamesOn'), false);
  t.same(['writeAtomic', 'readStamp', 'readWindowFrom'].map((n) => context('epilog/run.ts').machineHelper('./files.js', n)), [true, true, true]);
});
