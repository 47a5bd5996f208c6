// Files the gate acts on as root besides the kernel's (slurmd's pid files, Slurm's gres.conf and slurm.conf with
// their Includes) are read only when root alone can change them, as the config and baseline are: on this machine's live
// root, real files in a private directory, their modes changed between reads. A copy in a capture is not judged.
import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { FsHost } from '../../src/host/fs-host.js';
import { exactly } from '../helpers/exactly.js';
import { buildInventory } from '../../src/inventory/build.js';
import { readMemlock } from '../../src/inventory/memlock.js';
import { findSlurmd } from '../../src/inventory/slurmd.js';
import { readGres } from '../../src/inventory/placement.js';
import { Notes } from '../../src/inventory/read.js';
import { loadConf } from '../../src/slurm/conf-load.js';

const live = new FsHost('/');
const dir = mkdtempSync(path.join(tmpdir(), 'gdrgate-trusted-'));
t.teardown(() => void spawn('/bin/rm', ['-rf', dir]));

/** A process named slurmd (its comm: the name it was started by) in `where`, not among this test's ancestors. */
async function startSlurmd(t: Test, where: string): Promise<ChildProcess> {
  const slurmd = path.join(where, 'slurmd');
  symlinkSync('/bin/sleep', slurmd);
  const child = spawn(slurmd, ['30'], { stdio: 'ignore' });
  t.teardown(() => void child.kill('SIGKILL'));
  for (let i = 0; i < 200; i++) {
    const comm = await live.readText(`/proc/${child.pid}/comm`);
    if (comm.ok && comm.value === 'slurmd\n') break;
    await new Promise((r) => setTimeout(r, 10));
  }
  return child;
}

t.test("slurmd's pid file: taken only while root alone can change it", async (t) => {
  const child = await startSlurmd(t, dir);
  const pidFile = path.join(dir, 'slurmd.pid');
  writeFileSync(pidFile, `${child.pid}\n`, { mode: 0o644 });
  const found = async (): Promise<unknown> => {
    const notes = new Notes();
    const rows = await readMemlock(live, notes, findSlurmd(live, notes, [pidFile], '/proc/self'));
    const s = rows.find((r) => r.who === 'slurmd');
    return s === undefined ? 'no row' : s.limit.state === 'unknown' ? s.limit.why : s.pid;
  };
  t.equal(await found(), child.pid, '0644: the process it names is judged');
  chmodSync(pidFile, 0o666);
  t.equal(await found(), `slurmd's process could not be looked for: not read: ${pidFile} is writable by anyone (mode 666)`, '0666: not taken, and slurmd\'s limit unknown (never judged on a process anyone could name)');
  chmodSync(pidFile, 0o644);
  chmodSync(dir, 0o775);
  t.equal(await found(), `slurmd's process could not be looked for: not read: ${dir} is writable by its group (mode 775) (on the way to ${pidFile})`, 'its directory group-writable: not taken');
  chmodSync(dir, 0o700);
});

t.test('gres.conf: read only while root alone can change it; a capture\'s copy is not judged', async (t) => {
  const gres = path.join(dir, 'gres.conf');
  writeFileSync(gres, 'Name=gpu File=/dev/nvidia0\n', { mode: 0o644 });
  const state = async (host: FsHost, p: string): Promise<string> => {
    const f = await readGres(host, p);
    return f.state === 'unknown' ? f.why : f.state;
  };
  t.equal(await state(live, gres), 'present', '0644: read');
  chmodSync(gres, 0o664);
  t.equal(await state(live, gres), `${gres}: not read: ${gres} is writable by its group (mode 664)`, '0664: unknown, said');
  // The same file in a capture: whoever unpacked it owns it; it says nothing of the node's own.
  const root = path.join(dir, 'capture');
  mkdirSync(path.join(root, 'etc/slurm'), { recursive: true });
  writeFileSync(path.join(root, 'etc/slurm/gres.conf'), 'Name=gpu File=/dev/nvidia0\n', { mode: 0o666 });
  chmodSync(path.join(root, 'etc/slurm/gres.conf'), 0o666);
  t.equal(await state(new FsHost(root), '/etc/slurm/gres.conf'), 'present', 'in a capture: read');
  t.equal(await state(live, path.join(dir, 'none.conf')), 'absent', 'missing: absent, as before');
});

t.test('a file gres.conf includes: read only while root alone can change it, as gres.conf itself', async (t) => {
  const gres = path.join(dir, 'gres-inc.conf');
  const inc = path.join(dir, 'gres-gpus.conf');
  writeFileSync(gres, `AutoDetect=off\nInclude ${inc}\n`, { mode: 0o644 });
  writeFileSync(inc, 'Name=gpu File=/dev/nvidia0\n', { mode: 0o644 });
  const seen = async (): Promise<string> => {
    const f = await readGres(live, gres);
    return f.state === 'present' ? f.value.lines.map((l) => `${l.file} line ${l.line}: ${l.files.join(',')}`).join('; ') : f.state === 'unknown' ? f.why : f.state;
  };
  t.equal(await seen(), `${inc} line 1: /dev/nvidia0`, 'both 0644: the included line, with its file');
  chmodSync(inc, 0o646);
  t.equal(await seen(), `${gres}:2: Include ${inc}: not read: ${inc} is writable by anyone (mode 646)`, 'the included file writable by anyone: unknown, said');
});

t.test('slurm.conf and its Includes, for the numbering the Prolog gives the job: each root\'s alone', async (t) => {
  const conf = path.join(dir, 'slurm.conf');
  const inc = path.join(dir, 'nodes.conf');
  writeFileSync(conf, `ClusterName=c\nInclude ${inc}\n`, { mode: 0o644 });
  writeFileSync(inc, 'NodeName=n1 Gres=gpu:8\n', { mode: 0o644 });
  const loaded = async (trusted: boolean): Promise<string[]> => {
    const c = await loadConf(live, conf, { trusted });
    return [...c.problems, ...c.entries.map((e) => `${e.name}=${e.value}`)];
  };
  t.same(await loaded(true), ['clustername=c', 'nodename=n1 Gres=gpu:8'], 'both 0644: read');
  chmodSync(inc, 0o666);
  t.same(await loaded(true), [`${conf}:2: Include ${inc}: not read: ${inc} is writable by anyone (mode 666)`, 'clustername=c'], 'an Include anyone may write: a problem, its lines not taken');
  t.same(await loaded(false), ['clustername=c', 'nodename=n1 Gres=gpu:8'], 'by hand (slurm-config prints what it read): read');
  chmodSync(conf, 0o666);
  await t.rejects(loadConf(live, conf, { trusted: true }), { message: exactly(`${conf}: not read: ${conf} is writable by anyone (mode 666)`) }, 'slurm.conf itself: refused whole');
});

t.test('through the inventory every run builds (its reads paced by a wrapping Host): the same refusals', async (t) => {
  const slurmd = path.join(dir, 'inv-slurmd');
  mkdirSync(slurmd, { mode: 0o700 });
  const child = await startSlurmd(t, slurmd);
  const pidFile = path.join(slurmd, 'slurmd.pid');
  const gres = path.join(slurmd, 'gres.conf');
  writeFileSync(pidFile, `${child.pid}\n`, { mode: 0o644 });
  writeFileSync(gres, 'Name=gpu File=/dev/nvidia0\n', { mode: 0o644 });
  const seen = async (): Promise<[unknown, string]> => {
    const inv = await buildInventory(live, { slurmdPidFiles: [pidFile], gresConf: gres });
    const s = inv.memlock.find((r) => r.who === 'slurmd');
    const g = inv.placement.gres;
    return [s === undefined ? 'no row' : s.limit.state === 'unknown' ? s.limit.why : s.pid, g.state === 'unknown' ? g.why : g.state];
  };
  t.same(await seen(), [child.pid, 'present'], 'both 0644: the pid file\'s slurmd judged, gres.conf read');
  chmodSync(pidFile, 0o666);
  chmodSync(gres, 0o666);
  t.same(await seen(), [`slurmd's process could not be looked for: not read: ${pidFile} is writable by anyone (mode 666)`, `${gres}: not read: ${gres} is writable by anyone (mode 666)`], 'both 0666: neither taken');
});

t.test('a missing file in a directory someone else may write: could not tell, never absent (they could have removed it)', async (t) => {
  const open = path.join(dir, 'open');
  mkdirSync(open, { mode: 0o777 });
  chmodSync(open, 0o777);
  const gres = path.join(open, 'gres.conf');
  const f = await readGres(live, gres);
  t.same(f, { state: 'unknown', why: `${gres}: not read: ${open} is writable by anyone (mode 777) (on the way to ${gres})` });
  chmodSync(open, 0o755);
  t.same(await readGres(live, gres), { state: 'absent' }, 'its directory root\'s alone: absent');
  t.same(await readGres(live, path.join(dir, 'no-such-dir', 'gres.conf')), { state: 'absent' }, 'a directory missing on the way, below one judged: absent');
});
