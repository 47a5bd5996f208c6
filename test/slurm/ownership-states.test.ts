// Whose drain a node is in, for every state word slurmctld prints (DOWN*, FAIL, +DRAIN …): only a plain drain of
// ours is resumed (DOWN is Slurm's, FAIL an admin's); and resumeOwned when the re-check cannot judge (a broken config,
// an internal error) or the reason was written again: never resumed then.
import fs from 'node:fs';
import t from 'tap';
import type { Exec, ExecOptions, ExecResult } from '../../src/host/exec.js';
import type { NodeState } from '../../src/parsers/scontrol.js';
import type { Outcome } from '../../src/runner/policy.js';
import { resumeOwned } from '../../src/slurm/drain.js';
import { drainAction, notJudgedByHealth, resumeAction } from '../../src/slurm/ownership.js';
import { Scontrol } from '../../src/slurm/scontrol.js';
import { fixture } from '../helpers/paths.js';

const OURS = 'gdrgate: pcie-link 0000:00:06.0 Gen5 x8 (want Gen5 x16) job=7';
const ADMIN = 'admin: bad DIMM B2';
const node = (state: string, reason: string | null): NodeState => ({ name: 'vm', state, reason, reasonUser: reason ? 'root' : null, reasonTime: reason ? '2026-11-29T14:39:05' : null });

// State= as slurmctld writes it (node_state_string_complete): the base, `*` when not responding, then +FLAGS.
const DOWN_OR_DRAINED = ['DOWN', 'DOWN*', 'DOWN*+DRAIN', 'DOWN+NOT_RESPONDING', 'IDLE+DRAIN', 'MIXED+DRAIN', 'IDLE+FAIL', 'FAIL', 'ALLOCATED+DRAIN', 'IDLE*+DRAIN'];
const UP = ['IDLE', 'IDLE*', 'MIXED', 'ALLOCATED', 'ALLOCATED+COMPLETING', 'IDLE+CLOUD', 'IDLE+POWERED_DOWN'];

t.test("a node down, failed or drained for an admin's reason is never drained over; one up is drained", async (t) => {
  for (const s of DOWN_OR_DRAINED) {
    t.same(drainAction(node(s, ADMIN)), { act: 'keep', why: `node is ${s} for a reason that is not ours (${ADMIN}): left as it is` }, s);
    t.same(resumeAction(node(s, ADMIN)), { act: 'refuse', why: `drained for a reason that is not ours (${ADMIN}): left drained` }, `${s}: not resumed`);
    // DOWN is Slurm's (ReturnToService decides), FAIL an admin's: our reason under them is not ours to lift.
    const lifted = /DOWN|FAIL/.test(s) ? { act: 'refuse', why: `node is ${s}: its DOWN or FAIL is not ours to lift (our reason kept: ${OURS}); left as it is` } : { act: 'resume' };
    t.same(resumeAction(node(s, OURS)), lifted, `${s} for our reason: ${lifted.act}`);
    t.same(drainAction(node(s, OURS)), { act: 'keep', why: `already drained by gdrgate: ${OURS}` }, `${s} for our reason: kept`);
  }
  for (const s of UP) {
    t.same(drainAction(node(s, null)), { act: 'drain' }, s);
    t.same(resumeAction(node(s, null)), { act: 'none', why: `node is ${s}: nothing to resume` }, `${s}: nothing to resume`);
  }
});

/** scontrol as slurmctld answers: `show` prints the node drained for `reasons[i]` on the i-th call (the last one after). */
class Slurmctld implements Exec {
  readonly calls: string[] = [];
  private shows = 0;
  /** `states[i]`: the i-th show's State= (the last one after). */
  constructor(private readonly reasons: readonly string[], private readonly states: readonly string[] = ['IDLE+DRAIN']) {}
  run(_file: string, args: readonly string[], _opts: ExecOptions): Promise<ExecResult> {
    this.calls.push(args.join(' '));
    const idle = fs.readFileSync(fixture('scontrol/show_node_o_idle_22.05.8.txt'), 'utf8');
    const reason = this.reasons[Math.min(this.shows, this.reasons.length - 1)]!;
    const state = this.states[Math.min(this.shows, this.states.length - 1)]!;
    if (args[0] === 'show') this.shows++;
    const stdout = args[0] === 'show' ? idle.replace('State=IDLE ', `State=${state} `).replace(/\n?$/, ` Reason=${reason}\n`) : '';
    return Promise.resolve({ exitCode: 0, stdout, stderr: '', timedOut: false, error: null, durationMs: 1 });
  }
}
const sc = (exec: Exec): Scontrol => new Scontrol(exec, { path: '/usr/bin/scontrol', timeoutMs: 5000 });
const stamped = `${OURS} [root@2026-11-29T14:39:05]`;

t.test('a re-check that could not judge (config error, internal error) never resumes', async (t) => {
  const cases: [Outcome, string][] = [
    [{ kind: 'config-error', message: 'baseline.json: /classes/0: bad' }, 'usage'],
    [{ kind: 'internal-error', message: 'EIO reading /sys/bus/pci/devices' }, 'internal'],
    [{ kind: 'unhealthy', failing: [] }, 'unhealthy'],
  ];
  for (const [outcome, result] of cases) {
    const exec = new Slurmctld([stamped]);
    const r = await resumeOwned(sc(exec), 'vm', { recheck: () => Promise.resolve(outcome) });
    t.same([r.resumed, r.tried, r.result], [false, false, result], outcome.kind);
    t.same(exec.calls, ['show node -o vm'], `${outcome.kind}: read once, never updated`);
  }
  const exec = new Slurmctld([stamped]);
  const r = await resumeOwned(sc(exec), 'vm', { recheck: () => Promise.resolve({ kind: 'healthy' }) });
  t.same([r.resumed, r.result], [true, 'ok'], 'healthy: resumed');
  t.same(exec.calls, ['show node -o vm', 'show node -o vm', 'update nodename=vm state=resume']);
});

t.test('our reason written again during the re-check (same text and user, a new time) is another drain: left', async (t) => {
  const exec = new Slurmctld([stamped, `${OURS} [root@2026-11-29T14:41:00]`]);
  const r = await resumeOwned(sc(exec), 'vm', { recheck: () => Promise.resolve({ kind: 'healthy' }) });
  t.same([r.resumed, r.result], [false, 'usage']);
  t.equal(r.why, `left drained: the reason changed during the re-check: now ${OURS} [root@2026-11-29T14:41:00] (was ${stamped})`);
  t.same(exec.calls, ['show node -o vm', 'show node -o vm'], 'never updated');
});

// `scontrol reboot ASAP nextstate=resume` with no reason keeps ours and its time (proc_req.c _slurm_rpc_reboot_nodes)
// and waits for the jobs to end; Slurm's resume clears REBOOT_REQUESTED/ISSUED and POWERING_DOWN (node_mgr.c
// update_node): resuming would cancel what the admin asked for.
const PENDING = ['MIXED+DRAIN+REBOOT_REQUESTED', 'IDLE+DRAIN+REBOOT_ISSUED', 'ALLOCATED+DRAIN+POWER_DOWN', 'IDLE+DRAIN+POWERING_DOWN', 'IDLE+DRAIN+POWERED_DOWN'];

t.test('a drain of ours under a pending reboot or power down is left: resuming would cancel it', async (t) => {
  for (const s of PENDING) {
    const what = s.includes('REBOOT') ? 'reboot' : 'power down';
    t.same(resumeAction(node(s, OURS)), { act: 'refuse', why: `node is ${s}: a ${what} is pending, which resuming would cancel (our reason kept: ${OURS}); left as it is` }, s);
  }
  // Asked for during the health check's re-check: the second read refuses.
  const exec = new Slurmctld([stamped], ['MIXED+DRAIN', 'MIXED+DRAIN+REBOOT_REQUESTED']);
  const r = await resumeOwned(sc(exec), 'vm', { recheck: () => Promise.resolve({ kind: 'healthy' }) });
  t.same([r.resumed, r.tried, r.result], [false, false, 'usage']);
  t.equal(r.why, `node is MIXED+DRAIN+REBOOT_REQUESTED: a reboot is pending, which resuming would cancel (our reason kept: ${OURS}); left as it is`);
  t.same(exec.calls, ['show node -o vm', 'show node -o vm'], 'before: show, show, update nodename=vm state=resume');
});

t.test('the health check resumes only a drain whose check it ran', async (t) => {
  t.equal(notJudgedByHealth(OURS, ['pcie-link', 'pcie-acs']), null, 'pcie-link judged: may resume');
  t.equal(notJudgedByHealth(OURS, ['pcie-acs']), 'left drained: pcie-link is not judged by the health check', 'pcie-link not run: left');
  t.equal(notJudgedByHealth(OURS, []), 'left drained: pcie-link is not judged by the health check', 'nothing run: left');
  t.equal(notJudgedByHealth(`${OURS} drill=0123abcd`, ['pcie-link']), "left drained: a drill's drain (drill=0123abcd) is not judged by the health check", "a drill's drain: left");
  t.equal(notJudgedByHealth(ADMIN, ['pcie-link']), 'left drained: its reason is not judged by the health check', "an admin's reason: left");
});
