// The drain etiquette against what slurmctld does meanwhile (the drain review's cases, each on scontrol's real output):
// a bandwidth failure found under a link drain replaces it (the health check would resume the link's and lose it),
// only while that drain is the very text we wrote (an admin's note added to it stays);
// two runs draining at once: the second waits for the first's drain before it exits (leaving first let slurmd drain
// "Prolog error" over ours); our reason never holds a bracket (Slurm's " [user@time]" would end it early); scontrol's
// complaint printed on stdout is quoted.
import fs from 'node:fs';
import t from 'tap';
import { ExecaExec, type Exec, type ExecOptions, type ExecResult } from '../../src/host/exec.js';
import { parseShowNode } from '../../src/parsers/scontrol.js';
import { readDrainRecord } from '../../src/slurm/drain-record.js';
import { drainOwned } from '../../src/slurm/drain.js';
import { drainAction } from '../../src/slurm/ownership.js';
import { sanitize } from '../../src/slurm/reason.js';
import { Scontrol } from '../../src/slurm/scontrol.js';
import { fakeScontrol } from '../helpers/fake-scontrol.js';
import { fixture } from '../helpers/paths.js';
import { scratchDir } from '../helpers/scratch.js';

const LINK = 'gdrgate: pcie-link 0000:00:06.0 Gen5 x8 (want Gen5 x16) job=7';
const BW = 'gdrgate: bw-gpu-path 0000:00:06.0 mlx5_0 12.1 GB/s (want >= 40 GB/s) job=8';
const IDLE = fs.readFileSync(fixture('scontrol/show_node_o_idle_22.05.8.txt'), 'utf8');
const drained = (reason: string) => ({ name: 'vm', state: 'MIXED+DRAIN', reason, reasonUser: 'root', reasonTime: '2026-12-05T20:00:00' });
const ok = (stdout: string, ms = 1): Promise<ExecResult> => new Promise((r) => setTimeout(() => r({ exitCode: 0, stdout, stderr: '', timedOut: false, error: null, durationMs: ms }), ms));

t.test('a drain the health check would resume gives way to one it would not; nothing else is written over', async (t) => {
  const ours = (): boolean => true;
  t.same(drainAction(drained(LINK), BW, ours), { act: 'drain' }, 'bw-* over pcie-link, the very text we wrote: written');
  t.same(drainAction(drained(`${LINK} RMA 5512`), BW, () => false), { act: 'keep', why: `already drained by gdrgate: ${LINK} RMA 5512` }, 'over our text with an admin\'s note added: kept');
  t.same(drainAction(drained(LINK), BW), { act: 'keep', why: `already drained by gdrgate: ${LINK}` }, 'over a text not known to be ours as it stands: kept');
  t.same(drainAction(drained(BW), LINK, ours), { act: 'keep', why: `already drained by gdrgate: ${BW}` }, 'pcie-link over bw-*: the first stays');
  t.same(drainAction(drained(LINK), 'gdrgate: pcie-acs 0000:00:01.0 ReqRedir+ (want ReqRedir-) job=9', ours), { act: 'keep', why: `already drained by gdrgate: ${LINK}` }, 'another check over a check: the first stays');
  const drill = 'gdrgate: drill memlock=64K drill=0123abcd';
  t.same(drainAction(drained(drill), BW, ours), { act: 'keep', why: `already drained by gdrgate: ${drill}` }, "over a drill's drain: the first stays");
  const drilledLink = `${LINK} drill=0123abcd`;
  t.same(drainAction(drained(drilledLink), BW, ours), { act: 'keep', why: `already drained by gdrgate: ${drilledLink}` }, "over a drill's pcie-link drain (a label the health check resumes): the first stays");
  t.same(drainAction(null, BW, ours), { act: 'keep', why: 'node state unknown: not writing a reason' }, 'node state unread: nothing written');
});

/** slurmctld answering after `ms`: `show` prints the node with the reason last written (IDLE until then). */
class SlowSlurmctld implements Exec {
  readonly calls: string[] = [];
  private reason: string | null = null;
  constructor(private readonly ms: number) {}
  run(_file: string, args: readonly string[], _o: ExecOptions): Promise<ExecResult> {
    this.calls.push(args.slice(0, 3).join(' '));
    if (args[0] === 'update') this.reason = args.find((a) => a.startsWith('reason='))!.slice('reason='.length);
    const show = this.reason === null ? IDLE : IDLE.replace('State=IDLE ', 'State=IDLE+DRAIN ').replace(/\n?$/, ` Reason=${this.reason} [root@2026-12-05T20:00:00]\n`);
    return ok(args[0] === 'show' ? show : '', this.ms);
  }
}

t.test('two runs draining at once: the second waits for the first and leaves with our drain on the node', async (t) => {
  const stateDir = scratchDir('gdrgate-drain-wait-');
  const slurm = new SlowSlurmctld(300);
  const sc = new Scontrol(slurm, { path: '/usr/bin/scontrol', timeoutMs: 1000 });
  const [a, b] = await Promise.all([drainOwned(sc, 'vm', LINK, stateDir, stateDir), new Promise((r) => setTimeout(r, 50)).then(() => drainOwned(sc, 'vm', `${LINK}2`, stateDir, stateDir))]);
  t.same(a, { action: 'drained', ours: true });
  t.same(b, { action: `kept: already drained by gdrgate: ${LINK}`, ours: true }, 'the second read the first one\'s drain');
  t.same(slurm.calls, ['show node -o', 'update nodename=vm state=drain', 'show node -o']);
});

t.test('through drainOwned: a bw-* drain replaces the pcie-link drain this node\'s record says we wrote, and only that one', async (t) => {
  const stateDir = scratchDir('gdrgate-drain-replace-');
  const slurm = new SlowSlurmctld(1);
  const sc = new Scontrol(slurm, { path: '/usr/bin/scontrol', timeoutMs: 1000 });
  t.same(await drainOwned(sc, 'vm', LINK, stateDir, stateDir), { action: 'drained', ours: true }, 'the link drain, written and recorded');
  t.same(await drainOwned(sc, 'vm', BW, stateDir, stateDir), { action: 'drained', ours: true }, 'the bandwidth drain over it: the very text recorded');
  t.same(await drainOwned(sc, 'vm', LINK, stateDir, stateDir), { action: `kept: already drained by gdrgate: ${BW}`, ours: true }, 'the link drain again: bw-* stays');
  const other = scratchDir('gdrgate-drain-replace-other-');
  const slurm2 = new SlowSlurmctld(1);
  const sc2 = new Scontrol(slurm2, { path: '/usr/bin/scontrol', timeoutMs: 1000 });
  t.same(await drainOwned(sc2, 'vm', LINK, other, other), { action: 'drained', ours: true });
  t.same(await sc2.drain('vm', `${LINK} RMA 5512`), { ok: true }, "an admin's note added to our text (scontrol update, no record of ours)");
  t.same(await drainOwned(sc2, 'vm', BW, other, other), { action: `kept: already drained by gdrgate: ${LINK} RMA 5512`, ours: true }, 'not the text recorded: the edited drain stays');
});

t.test('a drain scontrol refused (Slurm 22.05.8: Invalid user id) leaves no record of our writing', async (t) => {
  const dir = scratchDir('gdrgate-drain-refused-');
  const sc = new Scontrol(new ExecaExec(), { path: fakeScontrol(dir, 'update-fails').path, timeoutMs: 5000 });
  const r = await drainOwned(sc, 'vm', LINK, dir, dir);
  t.same(r, { action: 'drain failed: scontrol update exited 1: slurm_update error: Invalid user id', ours: false });
  t.same(readDrainRecord(dir, 'vm'), { ok: false, none: true, why: `gdrgate keeps no record of writing a drain on this node (${dir}/drain-reason.json)` }, 'nothing kept: a later reason of ours is judged by the prefix, not by a text never written');
});

t.test("the wait for another's drain: its read and its write, leaving this run's own read before the deadline", async (t) => {
  const exec: Exec = { run: () => ok('') };
  t.equal(new Scontrol(exec, { path: '/usr/bin/scontrol', timeoutMs: 3000 }).holderWaitMs(), 6500, 'no deadline: 2 x 3000 + 500');
  const near = new Scontrol(exec, { path: '/usr/bin/scontrol', timeoutMs: 3000, deadline: performance.now() + 5000 }).holderWaitMs();
  // (Above 1000: the time between the deadline's reading and the wait's is this machine's, however loaded.)
  t.equal(near > 1000 && near <= 2000, true, `a deadline 5 s away: at most 2000 ms (${near.toFixed(0)})`);
  t.equal(new Scontrol(exec, { path: '/usr/bin/scontrol', timeoutMs: 3000, deadline: performance.now() + 1000 }).holderWaitMs(), 0, 'less than a timeout left: no wait');
});

t.test("our reason keeps no bracket: read back, it is the whole reason and Slurm's user and time", async (t) => {
  const ours = `gdrgate: fw mlx5_0 ${sanitize('fw 28.39 [x@y] (want 28.40)')} job=1`;
  t.equal(ours, 'gdrgate: fw mlx5_0 fw 28.39 (x@y) (want 28.40) job=1');
  const line = IDLE.replace(/\n?$/, ` Reason=${ours} [slurm@2026-12-05T20:00:00]\n`);
  const p = parseShowNode(line, 'vm');
  t.same(p.ok ? [p.value.reason, p.value.reasonUser, p.value.reasonTime] : p, [ours, 'slurm', '2026-12-05T20:00:00']);
});

t.test('scontrol that says why on stdout (22.05: "Node x not found") is quoted', async (t) => {
  const exec: Exec = { run: () => Promise.resolve({ exitCode: 1, stdout: 'Node host1 not found\n', stderr: '', timedOut: false, error: null, durationMs: 1 }) };
  const r = await new Scontrol(exec, { path: '/usr/bin/scontrol', timeoutMs: 1000 }).show('host1');
  t.same(r, { ok: false, why: 'scontrol show node exited 1: Node host1 not found' });
});
