// Faults around the gate: scontrol that hangs, crashes or errs; a sysfs read that blocks; 50 prologs at once.
import t from 'tap';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { breakLink, makeGateEnv } from '../helpers/gate-env.js';
import { trainGpuTo } from '../helpers/h200-link.js';
import { CLI, fixture } from '../helpers/paths.js';
import { cli } from '../helpers/cli.js';

/** The run's duration as the gate measured and printed it on its summary line (`... exit=N 1234ms ...`). */
const ownMs = (stdout: string): number => Number(/ exit=\d+ (\d+)ms/.exec(stdout)?.[1] ?? NaN);

t.setTimeout(600_000);

/** PIDs of live processes whose argv is exactly `argv` (a killed, unreaped child has an empty cmdline). */
function processesWithArgv(argv: readonly string[]): number[] {
  const want = argv.join('\0') + '\0';
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        return readFileSync(`/proc/${d}/cmdline`, 'latin1') === want;
      } catch {
        return false; // gone meanwhile
      }
    })
    .map(Number);
}

t.test('scontrol hangs: the prolog ends within its deadline, logs, still exits 1 (node unhealthy)', async (t) => {
  const e = makeGateEnv('hang');
  breakLink(e.tree);
  // The hang is cut by scontrolTimeoutMs; the deadline counts from the process's start, so it is wide (a loaded machine).
  e.writeConfig({ deadlineMs: 30_000, scontrolTimeoutMs: 1000 });
  const r = e.prolog();
  t.equal(r.code, 1, 'exited (a hang waited out would have hit the 60 s spawn timeout first: no exit code)');
  // The gate's own clock, not this test's (node start-up is no part of the deadline), against the hang being cut:
  // scontrol sleeps 600 s. Not against deadline + grace: on a loaded machine the work after scontrol (report,
  // log) ran the gate's own figure to 5.7 s for this 3000 ms deadline, which is open work, not this test's to hide.
  const ms = ownMs(r.stdout);
  t.ok(ms < 30_000, `ended in ${ms} ms by its own clock: scontrol timeout 1000 ms, the 600 s hang cut`);
  t.match(r.stdout, /^gdrgate prolog node=vm job=42 result=unhealthy exit=1 \d+ms reason="gdrgate: pcie-link 0000:00:06\.0 Gen5 x8 \(want Gen5 x16\) job=42" action=kept: node state unknown: not writing a reason$/m);
  t.match(readFileSync(e.log, 'utf8'), /^\{"level":50,"time":"[^"]+","tool":"gdrgate","pid":\d+,"node":"vm","why":"scontrol show node: timed out after 1000 ms","msg":"cannot read node state; not writing a drain reason"\}$/m);
  // This env's own hung sleep only (its argv is unique): another file's hung scontrol may be running meanwhile.
  t.same(processesWithArgv(e.hangArgv), [], `the hung scontrol and its children were killed (${e.hangArgv.join(' ')})`);
});

t.test('scontrol crashes or reports an error: no reason written, exit 1', async (t) => {
  for (const mode of ['crash', 'not-found'] as const) {
    const e = makeGateEnv(mode);
    breakLink(e.tree);
    const r = e.prolog();
    t.equal(r.code, 1, mode);
    t.match(r.stdout, /^gdrgate prolog node=vm job=42 result=unhealthy exit=1 \d+ms reason="gdrgate: pcie-link 0000:00:06\.0 Gen5 x8 \(want Gen5 x16\) job=42" action=kept: node state unknown: not writing a reason$/m, mode);
    t.equal(e.drainCalls().length, 0, `${mode}: no drain attempted without a state`);
  }
});

t.test('a FIFO where a sysfs attribute should be never blocks the gate (read as empty, not judged)', async (t) => {
  const e = makeGateEnv();
  // config (where a root read finds the link) and the width attribute (where the gate then looks):
  // open() of a FIFO with no writer would block a libuv thread, and exit with it.
  for (const f of ['config', 'current_link_width']) {
    const attr = path.join(e.tree, 'sys/devices/pci0000:00/0000:00:06.0', f);
    rmSync(attr);
    execFileSync('/usr/bin/mkfifo', [attr]);
  }
  e.writeConfig({ deadlineMs: 30_000 });
  const r = e.prolog(['--dry-run']);
  t.equal(r.code, 0, 'healthy otherwise: an unreadable width is a skip, never a fail or a pass');
  // A blocked read would have run into the deadline (result=internal-error) or kept the process from exiting.
  t.match(r.stdout, /^gdrgate prolog node=vm job=42 result=healthy exit=0 \d+ms action=none$/m, 'judged, not cut by the deadline');
  const ms = ownMs(r.stdout);
  // A blocked open never returns: any end well inside the deadline shows none blocked (140 ms under load here).
  t.ok(ms < 25_000, `ended in ${ms} ms by its own clock, inside the 30 s deadline`);
  t.match(r.stdout, /^SKIP    pcie-link              0000:00:06\.0  GPU H200: link speed\/width not readable \(\/sys\/devices\/pci0000:00\/0000:00:06\.0\/current_link_width: not a regular file \(fifo\)\)$/m);
  t.same(e.drainCalls(), []);
});

t.test('the deadline: work that never settles is cut off at the deadline', async (t) => {
  const { Deadline, withDeadline } = await import('../../src/runner/deadline.js');
  const t0 = performance.now();
  // Never settling, it would hang here without the deadline's timer (until tap's timeout fails the file).
  await t.rejects(withDeadline(new Promise(() => undefined), new Deadline(200)), /deadline of 200 ms exceeded/);
  // A lower bound only (load can only make it later): not cut early. Timers round to whole milliseconds.
  t.ok(performance.now() - t0 >= 199, 'not before the deadline');
  t.equal(await withDeadline(Promise.resolve(7), new Deadline(200)), 7);
  // Synchronous phases cannot be raced: they ask the deadline between steps.
  const past = new Deadline(1, performance.now() - 10);
  t.throws(() => past.check('before check pcie-link'), /deadline of 1 ms exceeded before check pcie-link/);
});

t.test('50 prologs at once on a failing node: one drain, one reason', async (t) => {
  const e = makeGateEnv();
  breakLink(e.tree);
  // What is tested is the coordination (one drain), not the deadline: 50 node start-ups on a loaded two-core machine
  // can take the default 10 s deadline and 5 s scontrol timeout, and a run cut there writes no reason. The widest
  // the schema allows, so that only a real coordination bug shows here.
  e.writeConfig({ deadlineMs: 120_000, scontrolTimeoutMs: 60_000 });
  const runs = await Promise.all(
    Array.from({ length: 50 }, (_, i) =>
      new Promise<number | null>((res) => {
        const p = spawn(process.execPath, [CLI, 'prolog', '--config', e.config], { env: { ...process.env, SLURMD_NODENAME: 'vm', SLURM_JOB_ID: String(1000 + i) }, stdio: 'ignore' });
        p.on('exit', (c) => res(c));
      }),
    ),
  );
  t.same([...new Set(runs)], [1], 'every prolog exits 1');
  t.equal(e.drainCalls().length, 1, 'exactly one drain');
  t.match(readFileSync(path.join(e.dir, 'scontrol.state'), 'utf8'), /^NodeName=vm Arch=x86_64 CoresPerSocket=1  CPUAlloc=0 CPUEfctv=2 CPUTot=2 CPULoad=1\.13 AvailableFeatures=\(null\) ActiveFeatures=\(null\) Gres=\(null\) NodeAddr=127\.0\.0\.1 NodeHostName=vm Version=22\.05\.8 OS=Linux 6\.18\.44-fc-v657 #1 SMP PREEMPT_DYNAMIC @0  RealMemory=1000 AllocMem=0 FreeMem=23504 Sockets=2 Boards=1 State=IDLE\+DRAIN ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N\/A MCS_label=N\/A Partitions=debug  BootTime=2026-11-29T14:27:45 SlurmdStartTime=2026-11-29T14:39:05 LastBusyTime=2026-11-29T14:39:05 CfgTRES=cpu=2,mem=1000M,billing=2 AllocTRES= CapWatts=n\/a CurrentWatts=0 AveWatts=0 ExtSensorsJoules=n\/s ExtSensorsWatts=0 ExtSensorsTemp=n\/s Reason=gdrgate: pcie-link 0000:00:06\.0 Gen5 x8 \(want Gen5 x16\) job=10\d\d \[root@2026-11-29T14:39:05\]\n$/);
});

t.test('a log file that cannot be written never fails the job', async (t) => {
  const e = makeGateEnv();
  e.writeConfig({ logFile: '/dev/full' });
  const r = e.prolog();
  t.equal(r.code, 0);
  t.match(r.stderr, /^gdrgate: log write failed \(ENOSPC: no space left on device, write\); logging to stderr$/m);
  e.writeConfig({ logFile: '/proc/version' });
  t.equal(e.prolog().code, 0, 'read-only log target');
});

t.test('health mode (HealthCheckProgram): drains a broken idle node, resumes only its own drain once healthy', async (t) => {
  const e = makeGateEnv();
  const health = () => cli(['health', '--config', e.config], { SLURMD_NODENAME: 'vm', SLURM_JOB_ID: '' });
  breakLink(e.tree);
  const bad = health();
  t.equal(bad.code, 1);
  t.equal(e.drainCalls()[0], 'update nodename=vm state=drain reason=gdrgate: pcie-link 0000:00:06.0 Gen5 x8 (want Gen5 x16)', 'no job id outside a job');
  trainGpuTo(e.tree, 16);
  const good = health();
  t.equal(good.code, 0);
  t.match(good.stdout, /^gdrgate health node=vm result=healthy exit=0 \d+ms action=resumed\n$/);
  t.equal(readFileSync(e.calls, 'utf8'), 'show node -o vm\nupdate nodename=vm state=drain reason=gdrgate: pcie-link 0000:00:06.0 Gen5 x8 (want Gen5 x16)\nshow node -o vm\nshow node -o vm\nupdate nodename=vm state=resume\n');
  // A human's drain is never lifted by the health check.
  writeFileSync(path.join(e.dir, 'scontrol.state'), readFileSync(fixture('scontrol/show_node_o_drain_rack_maintenance_22.05.8.txt')));
  const human = health();
  t.equal(human.code, 0);
  t.notMatch(human.stdout, /action=resumed/);
  t.equal(readFileSync(e.calls, 'utf8').match(/state=resume/g)?.length, 1, 'still only the one resume of our own drain');
});

t.test('symlink loops, dangling links and a vanished device in /sys/bus/pci/devices: noted, never fatal', async (t) => {
  const e = makeGateEnv();
  const devs = path.join(e.tree, 'sys/bus/pci/devices');
  symlinkSync('0000:99:00.0', path.join(devs, '0000:99:00.0')); // a link to itself
  symlinkSync('../../../devices/pci0000:00/0000:00:1f.0', path.join(devs, '0000:00:1f.0')); // its device is gone
  const r = cli(['check', '--root', e.tree, '--json']);
  t.equal(r.code, 0, r.stderr);
  const rep = JSON.parse(r.stdout) as { result: string; notes: string[] };
  t.equal(rep.result, 'healthy', 'the real GPU is still judged');
  const realpathNote = (dev: string, err: string): string => `/sys/bus/pci/devices/${dev}: ${err}, realpath '${path.join(devs, dev)}'`;
  t.equal(rep.notes.join('\n').split('\n')[1], realpathNote('0000:99:00.0', 'ELOOP: too many symbolic links encountered'));
  t.equal(rep.notes.join('\n').split('\n')[0], realpathNote('0000:00:1f.0', 'ENOENT: no such file or directory'));
  t.equal(e.prolog().code, 0, 'the prolog passes');
});

t.test('Slurm refuses the drain (scontrol update exits 1, as 22.05.8 does for a user it does not know): said, never taken as drained', async (t) => {
  const e = makeGateEnv('update-fails');
  breakLink(e.tree);
  const r = e.prolog();
  t.equal(r.code, 1, 'the node is unhealthy: the Prolog fails (Slurm then drains it itself)');
  t.equal(/ action=drain failed: .*slurm_update error: Invalid user id/.test(r.stdout.trim().split('\n').pop()!), true, r.stdout.trim().split('\n').pop()!);
  t.equal(e.drainCalls().length, 1, 'one drain asked for');
  t.equal(/"msg":"drain failed"/.test(readFileSync(e.log, 'utf8')), true, 'the log says the drain failed');
  const drill = cli(['drill', 'start', '--fault', 'memlock=64K', '--drain', '--config', e.config, '--node', 'vm']);
  t.equal(drill.code, 3, 'a drill that cannot drain first is not armed (exit 3)');
  t.equal(/^vm: could not drain for the drill: drain failed: .*Invalid user id$/m.test(drill.stdout), true, drill.stdout);
  t.equal(existsSync(path.join(e.dir, 'run', 'drill.json')), false, 'no drill file');
});
