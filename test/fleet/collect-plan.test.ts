// fleet collect's pure parts: the hostlist expander (table; the cluster test checks it against the real
// `scontrol show hostnames`), the preflight on real `scontrol show node -o` captures, the srun line.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { expandHostlist, MAX_HOSTS } from '../../src/fleet/hostlist-expand.js';
import { parseNodeLines, preflight, srunArgs, srunWordsFor, unavailable } from '../../src/fleet/collect-plan.js';
import { fixture } from '../helpers/paths.js';
import { stepFile } from '../../src/cli/snapshot.js';
import { seeded } from '../helpers/seeded.js';

t.test('hostlists expand as scontrol show hostnames prints them', async (t) => {
  const ok: [string, string[]][] = [
    ['node1', ['node1']],
    ['node[1-4,7]', ['node1', 'node2', 'node3', 'node4', 'node7']],
    ['gpu[001-003],login1', ['gpu001', 'gpu002', 'gpu003', 'login1']],
    ['gpu[8-11]', ['gpu8', 'gpu9', 'gpu10', 'gpu11']],
    ['gpu[08-11]', ['gpu08', 'gpu09', 'gpu10', 'gpu11']],
    ['a[1-2]b[3-4]', ['a1b3', 'a1b4', 'a2b3', 'a2b4']],
    ['rack[1-2]-n[1-2].ib', ['rack1-n1.ib', 'rack1-n2.ib', 'rack2-n1.ib', 'rack2-n2.ib']],
    ['node[1-2],node1,node[2]', ['node1', 'node2']],
    ['[1-2]x', ['1x', '2x']],
  ];
  for (const [list, want] of ok) t.same(expandHostlist(list), { ok: true, hosts: want }, list);
  const bad: [string, string][] = [
    ['', 'empty'],
    ['node[1-4', 'unclosed ['],
    ['node]1', '] without [ at column 5'],
    ['node[1-[2]]', 'nested [ at column 8'],
    ['node[4-1]', '[4-1]: empty range 4-1'],
    ['node[a-b]', '[a-b]: "a-b" is not N or N-M'],
    ['node[]', '[]: "" is not N or N-M'],
    ['node1,,node2', 'an empty name between commas'],
    ['node[1-1000000]', `more than ${MAX_HOSTS} names`],
    ['a[1-400]b[1-400]', `more than ${MAX_HOSTS} names`],
    ['node[1234567890-1234567891]', '[1234567890-1234567891]: a bound of more than 9 digits'],
    ['no de1', 'node name "no de1" has characters other than letters, digits, . _ -'],
    ['-node1', 'node name "-node1" has characters other than letters, digits, . _ -'],
  ];
  for (const [list, why] of bad) {
    const r = expandHostlist(list);
    t.equal(r.ok, false, list);
    t.equal(!r.ok && r.error, `hostlist "${list}": ${why}`, list);
  }
  // Seeded junk: an answer or an error, and every answer made of valid names.
  const rnd = seeded(77);
  for (let i = 0; i < 2000; i++) {
    const s = rnd.join(['n', 'gpu', '[', ']', '1', '0', '9', '-', ',', '.', ' ', '05'], 1 + rnd.int(12));
    const r = expandHostlist(s);
    if (r.ok) t.ok(r.hosts.length > 0 && r.hosts.every((h) => /^[A-Za-z0-9_.][A-Za-z0-9_.-]*$/.test(h)), s);
  }
});

t.test('preflight: what slurmctld says of each node, on real scontrol captures', async (t) => {
  // Both captures are of one node (vm), idle and then drained by a human.
  const read = (f: string) => [...parseNodeLines(readFileSync(fixture('scontrol', f), 'utf8')).values()];
  const [idle] = read('show_node_o_idle_22.05.8.txt');
  const [drained] = read('show_node_o_drain_rack_maintenance_22.05.8.txt');
  t.ok(idle && drained, 'each capture parsed');
  if (!idle || !drained) return;
  t.notOk(unavailable(idle.state), `idle: ${idle.state}`);
  t.ok(unavailable(drained.state), `drained: ${drained.state}`);
  const states = new Map([[idle.name, idle]]);
  const p = preflight([idle.name, 'ghost1'], states);
  t.same(p.run, [idle.name]);
  t.same(p.missing, [{ node: 'ghost1', why: 'slurmctld does not know this node' }]);
  const d = preflight([drained.name], new Map([[drained.name, drained]])).missing[0];
  t.equal(d?.why, `slurmctld: State=${drained.state} Reason=rack maintenance`);
  // An admin's note after a stamp inside the reason, and a further line: the whole reason (as a drain's is read).
  const noted = readFileSync(fixture('scontrol', 'show_node_o_drain_rack_maintenance_22.05.8.txt'), 'utf8').replace('Reason=rack maintenance [root@2026-11-29T14:39:05]', 'Reason=rack maintenance [ops@ticket-42] RMA open [root@2026-11-29T14:39:05]        DO NOT RESUME');
  t.equal(preflight([drained.name], parseNodeLines(noted)).missing[0]?.why, `slurmctld: State=${drained.state} Reason=rack maintenance [ops@ticket-42] RMA open / DO NOT RESUME`);
  for (const s of ['IDLE', 'MIXED', 'ALLOCATED', 'IDLE+COMPLETING', 'MIXED+PLANNED']) t.notOk(unavailable(s), s);
  for (const s of ['DOWN', 'DOWN*', 'IDLE+DRAIN', 'IDLE*', 'IDLE+NOT_RESPONDING', 'ALLOCATED+DRAIN', 'FUTURE', 'IDLE+POWERED_DOWN', 'DOWN+REBOOT_ISSUED', 'UNKNOWN']) t.ok(unavailable(s), s);
});

t.test('the srun line: one step, a task per node, bounded, no environment, each task its own file', async (t) => {
  const a = srunArgs({ nodes: ['n1', 'n2', 'n3'], timeoutS: 90, self: ['/usr/sbin/gdrgate'], outDir: '/shared/fleet', root: '/', commands: true });
  t.same(a, [
    '--nodelist=n[1-3]', '--nodes=3', '--ntasks=3', '--ntasks-per-node=1', '--immediate=45', '--time=2', '--job-name=gdrgate-collect',
    '--kill-on-bad-exit=0', '--export=NONE', '--chdir=/', '--', '/usr/sbin/gdrgate', 'snapshot', '--out-dir', '/shared/fleet', '--root', '/',
  ]);
  t.same(srunArgs({ nodes: ['n1'], timeoutS: 5, self: ['/usr/bin/node', '/opt/gdrgate/dist/cli.js'], outDir: '/d', root: '/r', commands: false }).slice(4, 6), ['--immediate=2', '--time=1']);
  t.ok(srunArgs({ nodes: ['n1'], timeoutS: 5, self: ['/x'], outDir: '/d', root: '/r', commands: false }).includes('--no-commands'));
  const err = 'srun: error: Task launch for StepId=5.0 failed on node node3: Communication connection failure\nsrun: error: node13: task 2: Exited with exit code 3\n';
  t.equal(srunWordsFor('node3', err), 'srun: error: Task launch for StepId=5.0 failed on node node3: Communication connection failure');
  t.equal(srunWordsFor('node13', err), 'srun: error: node13: task 2: Exited with exit code 3');
  t.equal(srunWordsFor('node1', err), null, 'node1 is not node13');
});

t.test('snapshot --out-dir: the file is named by SLURMD_NODENAME, which must be a node name', async (t) => {
  t.equal(stepFile('/shared/fleet', { SLURMD_NODENAME: 'gpu017' }), '/shared/fleet/gpu017.tar.gz');
  t.throws(() => stepFile('/d', {}), /only a Slurm job step has/);
  t.throws(() => stepFile('/d', { SLURMD_NODENAME: '../etc/x' }), /SLURMD_NODENAME: node name "..\/etc\/x" has characters other than/);
  t.throws(() => stepFile('/d', { SLURMD_NODENAME: '' }), /empty node name/);
});
