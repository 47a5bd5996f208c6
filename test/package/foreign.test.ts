// The packages on CPUs other than the build machine's (qemu-user): the x86-64 package's Node and program under
// `qemu-x86_64 -cpu Nehalem` and `-cpu qemu64` (features the build machine's CPU has, absent), the arm64 package's
// under `qemu-aarch64` (a Grace node's architecture): --version, `check` on the bundled capture printing what the
// build machine prints, and on arm64 a Prolog through the package's own wrapper on a generated HGX tree with a GPU
// trained to x8, drained through a recording scontrol. Nothing here needs a startup snapshot made on this machine.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { buildTree } from '../gen/sysfs-tree.js';
import { P0, hgx, train } from '../checks/_trees.js';
import { fakeScontrol } from '../helpers/fake-scontrol.js';
import { REPO } from '../helpers/paths.js';
import { scratchDir } from '../helpers/scratch.js';
import { artifacts, missing, run, unpackDeb } from './_artifacts.js';

t.setTimeout(1_800_000);
const AARCH64_LIBS = '/usr/aarch64-linux-gnu';
const why = missing(['dpkg-deb', 'qemu-x86_64', 'qemu-aarch64']) ?? (run('test', ['-e', `${AARCH64_LIBS}/lib/ld-linux-aarch64.so.1`]).status === 0 ? undefined : `${AARCH64_LIBS} lacks the arm64 C library (apt-get install libc6-arm64-cross libstdc++6-arm64-cross)`);
if (why) {
  if (process.env.CI) throw new Error(`CI lacks what this test needs: ${why}`);
  t.skip(`foreign-CPU tests skipped: ${why}`, () => {});
} else {
  const a = artifacts();
  const tmp = scratchDir('gdrgate-foreign-');
  const x64 = unpackDeb(a.deb, tmp);
  const arm = unpackDeb(a.debArm64, tmp);
  const capture = path.join(REPO, 'examples/h200-vm.tar.gz');
  const bare = { LANG: 'C.UTF-8' };
  // qemu's TCG is slow, more so on a loaded machine: bounds, not speeds.
  const bound = { env: bare, cwd: tmp, timeoutMs: 600_000 };
  const native = run(x64.gdrgate[0]!, [...x64.gdrgate.slice(1), 'check', '--root', capture], bound);
  const version = run(x64.gdrgate[0]!, [...x64.gdrgate.slice(1), '--version'], bound).stdout;

  t.test('the build machine itself: the README report', async (t) => {
    t.equal(native.status, 0, native.stderr);
    t.match(native.stdout, /^result: healthy \(exit 0\) — 0 fail, 0 error, 0 warn, 11 pass, 5 skip$/m);
  });

  for (const cpu of ['Nehalem', 'qemu64'])
    t.test(`x86-64 on -cpu ${cpu}: the same version and report`, async (t) => {
      const q = (args: string[]) => run('qemu-x86_64', ['-cpu', cpu, ...x64.gdrgate, ...args], bound);
      t.equal(q(['--version']).stdout, version);
      const r = q(['check', '--root', capture]);
      t.equal(r.status, 0, r.stderr);
      t.equal(r.stdout, native.stdout);
    });

  const armNode = (args: string[]) => run('qemu-aarch64', ['-L', AARCH64_LIBS, ...arm.gdrgate, ...args], bound);
  t.test('arm64: its own Node, the same report', async (t) => {
    t.equal(armNode(['--version']).stdout, version.replace('linux-x64', 'linux-arm64'));
    const r = armNode(['check', '--root', capture]);
    t.equal(r.status, 0, r.stderr);
    t.equal(r.stdout, native.stdout);
  });

  t.test("arm64: a Prolog through the package's wrapper drains a node whose GPU trained to x8", async (t) => {
    const good = hgx();
    const bad = hgx();
    train(bad, P0.gpu, { width: 8 });
    await buildTree(path.join(tmp, 'good'), good);
    await buildTree(path.join(tmp, 'bad'), bad);
    const baseline = path.join(tmp, 'baseline.json');
    const cap = run(x64.gdrgate[0]!, [...x64.gdrgate.slice(1), 'baseline', 'capture', '--root', path.join(tmp, 'good'), '--class', 'hgx', '--match', '*'], bound);
    t.equal(cap.status, 0, cap.stderr);
    writeFileSync(baseline, cap.stdout);
    const scontrol = fakeScontrol(tmp);
    const config = path.join(tmp, 'config.json');
    writeFileSync(config, JSON.stringify({ baseline, root: path.join(tmp, 'bad'), scontrol: scontrol.path, logFile: path.join(tmp, 'gate.log'), stateDir: path.join(tmp, 'state'), spool: path.join(tmp, 'spool'), deadlineMs: 120_000, scontrolTimeoutMs: 60_000 }));
    // (Under TCG loading the scontrol runner alone takes seconds: the timeouts are bounds for that, not speeds.)
    // The arm64 Node is started through qemu-aarch64 (as binfmt_misc would on a build host): the wrapper is the package's.
    const shim = path.join(tmp, 'node-aarch64');
    writeFileSync(shim, `#!/bin/sh\nexec /usr/bin/qemu-aarch64 -L ${AARCH64_LIBS} ${arm.gdrgate[0]} "$@"\n`, { mode: 0o755 });
    const wrapper = path.join(arm.root, 'usr/libexec/gdrgate/prolog.sh');
    writeFileSync(path.join(arm.root, 'usr/libexec/gdrgate/prolog.conf'), `NODE=${shim}\nCLI=${arm.gdrgate[1]}\nCONFIG=${config}\nAGENT=\nBLOB=\n`);
    // (PATH only for the recording scontrol, a shell script; the wrapper and gdrgate name every program by path.)
    const r = run(wrapper, [], { env: { PATH: '/usr/bin:/bin', SLURMD_NODENAME: 'vm', SLURM_JOB_ID: '7', SLURM_JOB_UID: '0', SLURM_JOB_GID: '0' }, cwd: '/', timeoutMs: 600_000 });
    t.equal(r.status, 1, 'exit 1: the job is requeued');
    t.match(r.stdout, /^gdrgate prolog node=vm job=7 result=unhealthy exit=1 /m);
    t.equal(scontrol.drainCalls().length, 1, `drained once, through scontrol (${r.stdout.trim().split('\n').pop()})`);
    t.match(scontrol.drainCalls()[0], new RegExp(`^update nodename=vm state=drain reason=gdrgate: pcie-link ${P0.gpu.replace(/[.]/g, '\\.')} Gen\\d x8 `));
  });
}
