// The Epilog end to end (the built CLI over a generated node): while the probed adapter's port moves data that no
// process holds a verbs device for (a process of this test advances its counter as IPoIB or Lustre traffic would), the
// Epilog does not probe and says which port moved how much; once the port is quiet it probes again; a port whose
// counters are gone is probed, and the log says it was not told; a dry run beside the traffic probes and says an
// Epilog would not; the skipped Epilog writes no stamp; a capture beside ports not told says so.
import t from 'tap';
import { spawn } from 'node:child_process';
import { readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { cli } from '../helpers/cli.js';
import { healthy, last, lines, probes as config } from './_cli.js';
import { bin } from './_env.js';

const summary = (stdout: string): string => last(stdout).replace(/ \d+ms/, '');
const probes = (stdout: string): string | undefined => / probes=(\S+)/.exec(summary(stdout))?.[1];
/** The `why` the log gave the last Epilog of `job`. */
const logged = (log: string, job: string): string | null | undefined =>
  readFileSync(log, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { msg?: string; job?: string; why?: string | null }).filter((l) => l.msg === 'gdrgate epilog' && l.job === job).pop()?.why;
/** Until the mover has advanced the counter (its Node may start slowly on a loaded machine), at most 20 s. */
async function moving(file: string): Promise<void> {
  const first = readFileSync(file, 'utf8');
  for (let i = 0; i < 400 && readFileSync(file, 'utf8') === first; i++) await new Promise((r) => setTimeout(r, 50));
}

t.test('traffic on the probed port: not probed, said; quiet: probed; no counters: probed, said in the log', async (t) => {
  // A window of 1 s: on a loaded machine the mover below still moves well over 1 Gb/s in it.
  const e = await healthy(1, { quiet: { windowMs: 1000 } });
  const counters = path.join(e.tree, 'sys/class/infiniband/mlx5_0/ports/1/counters');
  const rcv = path.join(counters, 'port_rcv_data');
  // 12,500,000 units (50 MB) every 10 ms: ~40 Gb/s received, as long as the Epilog runs.
  const mover = spawn(process.execPath, ['-e', `const fs=require('fs');let n=BigInt(fs.readFileSync(${JSON.stringify(rcv)},'utf8'));setInterval(()=>{n+=12500000n;fs.writeFileSync(${JSON.stringify(`${rcv}.new`)},n+'\\n');fs.renameSync(${JSON.stringify(`${rcv}.new`)},${JSON.stringify(rcv)})},10)`], { stdio: 'ignore' });
  t.teardown(() => mover.kill('SIGKILL'));
  await moving(rcv);
  const sampled = lines(e).length;
  const stamp = path.join(e.spool, 'probe-stamp.json');
  const stamped = readFileSync(stamp, 'utf8');
  const r = e.epilog('2');
  // By hand beside the same traffic: probes, and says that an Epilog would not.
  const dry = e.epilog('20', ['--dry-run']);
  mover.kill('SIGKILL');
  t.equal(readFileSync(stamp, 'utf8'), stamped, 'no stamp written: the next Epilog the policy allows tries again');
  t.equal(probes(dry.stdout), 'ran', 'a dry run probes what it is asked to');
  const dryWhy = logged(e.log, '20')?.split('; ').pop();
  t.equal(dryWhy?.replace(/moved [\d.]+ Gb\/s \(0\.00 sent, [\d.]+ received\)/, 'moved R'), "mlx5_0 port 1 moved R in the 1000 ms before probing, traffic no process here holds a verbs device for (IPoIB, NFS over RDMA, Lustre, a peer's RDMA): an Epilog would not probe");
  t.equal(r.code, 0);
  const s = summary(r.stdout);
  // The whole line, its two rates (timing's) aside; they are checked apart.
  const rates = /moved ([\d.]+) Gb\/s \(0\.00 sent, ([\d.]+) received\)/.exec(s);
  t.equal(s.replace(rates?.[0] ?? '', 'moved R Gb/s (0.00 sent, R received)'), "gdrgate epilog node=gpu001 job=2 view=none removed=false probes=skipped (mlx5_0 port 1 moved R Gb/s (0.00 sent, R received) in the 1000 ms before probing, traffic no process here holds a verbs device for (IPoIB, NFS over RDMA, Lustre, a peer's RDMA): not probed, it would read as a slow path) result=healthy exit=0 action=none");
  t.equal(rates?.[1], rates?.[2], 'all of it received');
  // The mover's interval slips on a loaded machine; the rate is far above 1 Gb/s all the same, and at most its ~40.
  const rate = Number(rates?.[1]);
  t.equal(rate > 1 && rate < 80, true, `rate ${rate}`);
  t.equal(lines(e).length, sampled, 'no sample taken');

  t.equal(probes(e.epilog('3').stdout), 'ran', 'the port quiet again: probed');
  t.ok(lines(e).length > sampled, 'sampled');

  rmSync(counters, { recursive: true });
  t.equal(probes(e.epilog('4').stdout), 'ran', 'no counters: probed as before');
  t.equal(logged(e.log, '4')?.split('; ').pop(), 'traffic not told on mlx5_0 port 1 (port_xmit_data: no such file (the driver keeps no counters for this port)): probed as without the look');
});

t.test('baseline capture --with-probes beside traffic: no bands, nothing written, said', async (t) => {
  const e = await healthy(0, { quiet: { windowMs: 1000 } });
  const rcv = path.join(e.tree, 'sys/class/infiniband/mlx5_0/ports/1/counters/port_rcv_data');
  const mover = spawn(process.execPath, ['-e', `const fs=require('fs');let n=BigInt(fs.readFileSync(${JSON.stringify(rcv)},'utf8'));setInterval(()=>{n+=12500000n;fs.writeFileSync(${JSON.stringify(`${rcv}.new`)},n+'\\n');fs.renameSync(${JSON.stringify(`${rcv}.new`)},${JSON.stringify(rcv)})},10)`], { stdio: 'ignore' });
  t.teardown(() => mover.kill('SIGKILL'));
  await moving(rcv);
  const r = cli(['baseline', 'capture', '--root', e.tree, '--class', 'rail', '--match', '*', '--with-probes', '--config', e.config]);
  // The look comes before any probe: a stand-in that writes down each start (the hang variant, cut at 1 s) starts none.
  const tool = path.join(e.dir, 'ib_write_bw-hang');
  symlinkSync(bin('ib_write_bw'), tool);
  const pids = path.join(e.dir, 'pids');
  writeFileSync(pids, '');
  e.writeConfig(config('hang', { quiet: { windowMs: 1000 }, tools: { ibWriteBw: tool, nvbandwidth: null }, ibWriteBw: { timeoutMs: 1000 } }));
  t.equal(cli(['baseline', 'capture', '--root', e.tree, '--class', 'rail', '--match', '*', '--with-probes', '--config', e.config]).code, 2);
  mover.kill('SIGKILL');
  t.equal(readFileSync(pids, 'utf8'), '', 'no probe started beside the traffic');
  e.writeConfig(config('healthy', { quiet: { windowMs: 1000 } }));
  t.equal(r.code, 2);
  t.equal(r.stdout, '', 'nothing written');
  t.equal(r.stderr.replace(/\d+(\.\d+)? Gb\/s \(0\.00 sent, \d+(\.\d+)? received\)/, 'N Gb/s (0.00 sent, N received)'), "gdrgate: --with-probes: mlx5_0 port 1 moved N Gb/s (0.00 sent, N received) in the 1000 ms before probing, traffic no process here holds a verbs device for (IPoIB, NFS over RDMA, Lustre, a peer's RDMA): bands measured now would be too low; nothing written. Capture when the adapters are quiet (probes.quiet.windowMs 0 skips this look)\n");
  const quiet = cli(['baseline', 'capture', '--root', e.tree, '--class', 'rail', '--match', '*', '--with-probes', '--config', e.config]);
  t.equal(quiet.code, 0, 'quiet again: captured');
  rmSync(path.dirname(rcv), { recursive: true });
  const untold = cli(['baseline', 'capture', '--root', e.tree, '--class', 'rail', '--match', '*', '--with-probes', '--config', e.config]);
  t.equal(untold.code, 0, 'no counters: captured as before the look');
  t.same(untold.stderr.split('\n').filter((l) => l.startsWith('gdrgate: note: --with-probes')), ['gdrgate: note: --with-probes: traffic not told on mlx5_0 port 1 (port_xmit_data: no such file (the driver keeps no counters for this port)): probed as without the look']);
});
