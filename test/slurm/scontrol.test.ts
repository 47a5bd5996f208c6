// Scontrol against real `scontrol show node -o` captures: an answer about another node (or several) is never
// taken for this node's state, and a node name Slurm would read as a host list never reaches scontrol.
import fs from 'node:fs';
import t from 'tap';
import type { Exec, ExecOptions, ExecResult } from '../../src/host/exec.js';
import { parseShowNode } from '../../src/parsers/scontrol.js';
import { drainAction, resumeAction } from '../../src/slurm/ownership.js';
import { Scontrol } from '../../src/slurm/scontrol.js';
import { NODE_NAME_MAX } from '../../src/slurm/node-name.js';
import { fixture } from '../helpers/paths.js';

const capture = (name: string): string => fs.readFileSync(fixture('scontrol', name), 'utf8');
const IDLE = capture('show_node_o_idle_22.05.8.txt');
const OURS = capture('show_node_o_drain_gdrgate_22.05.8.txt');
/** The same capture, as slurmctld would print it for node `other`. */
const renamed = (text: string, name: string): string => text.replace(/^NodeName=vm /m, `NodeName=${name} `);

class FakeExec implements Exec {
  readonly calls: string[][] = [];
  constructor(private readonly stdout: string) {}
  run(_file: string, args: readonly string[], _opts: ExecOptions): Promise<ExecResult> {
    this.calls.push([...args]);
    return Promise.resolve({ exitCode: 0, stdout: this.stdout, stderr: '', timedOut: false, error: null, durationMs: 1 });
  }
}
const client = (stdout: string): { exec: FakeExec; sc: Scontrol } => {
  const exec = new FakeExec(stdout);
  return { exec, sc: new Scontrol(exec, { path: '/usr/bin/scontrol', timeoutMs: 5000 }) };
};

t.test('an answer that names another node is refused: nothing is drained or resumed', async (t) => {
  const idle = await client(renamed(IDLE, 'other')).sc.show('vm');
  t.same(idle, { ok: false, why: 'scontrol show node: answer names node "other", not "vm"' });
  t.equal(drainAction(idle.ok ? idle.node : null).act, 'keep', 'unknown state: no drain');
  const drained = await client(renamed(OURS, 'vm2')).sc.show('vm');
  t.equal(drained.ok, false, "another node's gdrgate drain is not ours to resume");
  t.equal(resumeAction(drained.ok ? drained.node : null).act, 'refuse');
  t.same(parseShowNode(renamed(IDLE, 'vm1'), 'vm'), { ok: false, error: 'answer names node "vm1", not "vm"' }, 'a name that only starts like ours');
  t.same(parseShowNode(IDLE, 'VM'), { ok: false, error: 'answer names node "vm", not "VM"' }, 'names are compared exactly');
});

t.test('an answer about several nodes is refused', async (t) => {
  t.same(parseShowNode(IDLE + renamed(IDLE, 'other'), 'vm'), { ok: false, error: '2 NodeName= lines for one node "vm"' });
  t.same(parseShowNode(IDLE + IDLE, 'vm'), { ok: false, error: '2 NodeName= lines for one node "vm"' });
});

t.test('the asked node is still read from the real captures', async (t) => {
  t.same(await client(IDLE).sc.show('vm'), { ok: true, node: { name: 'vm', state: 'IDLE', reason: null, reasonUser: null, reasonTime: null } });
  t.same(await client(OURS).sc.show('vm'), { ok: true, node: { name: 'vm', state: 'IDLE+DRAIN', reason: 'gdrgate: pcie-link 0000:00:06.0 Gen5 x8 (want Gen5 x16) job=42', reasonUser: 'root', reasonTime: '2026-11-29T14:39:05' } });
  t.same(parseShowNode(renamed(IDLE, 'gpu-001.rack2'), 'gpu-001.rack2'), { ok: true, value: { name: 'gpu-001.rack2', state: 'IDLE', reason: null, reasonUser: null, reasonTime: null } });
});

t.test('node names scontrol would expand or split are never passed to it', async (t) => {
  for (const bad of ['gpu[001-128]', 'gpu1,gpu2', 'gpu1 gpu2', 'vm state=resume', '-h', '', 'ü', 'a'.repeat(NODE_NAME_MAX + 1), 'vm\n']) {
    const { exec, sc } = client(IDLE);
    const why = bad === '' ? 'empty node name' : bad.length > NODE_NAME_MAX ? `node name of ${bad.length} characters (at most ${NODE_NAME_MAX})` : `node name ${JSON.stringify(bad)} has characters other than letters, digits, . _ -`;
    t.same(await sc.show(bad), { ok: false, why: `scontrol show node: ${why}` }, `show ${JSON.stringify(bad.slice(0, 20))}`);
    t.same(await sc.drain(bad, 'gdrgate: x'), { ok: false, why: `scontrol update: ${why}` }, `drain ${JSON.stringify(bad.slice(0, 20))}`);
    t.same(await sc.resume(bad), { ok: false, why: `scontrol update: ${why}` });
    t.same(exec.calls, [], 'scontrol never ran');
  }
  const { exec, sc } = client('');
  t.same(await sc.drain('gpu-001.rack_2', 'gdrgate: x'), { ok: true });
  t.same(exec.calls, [['update', 'nodename=gpu-001.rack_2', 'state=drain', 'reason=gdrgate: x']]);
});
