// The drain reason read whole from `scontrol show node -o`, as slurm_sprint_node_table prints it (22.05 to 25.11):
// text, then ` [user@time]` after its first line, then its further lines (each after 8 spaces), then Comment=,
// Extra=, InstanceId= …. A reason read short (cut at a bracket inside the text, or at its first line) is taken for
// the text gdrgate wrote, and an admin's note after ours is resumed by the health check or drained over.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { parseShowNode } from '../../src/parsers/scontrol.js';
import { notOurWriting, writeDrainRecord } from '../../src/slurm/drain-record.js';
import { drainAction, healthLeaves } from '../../src/slurm/ownership.js';
import { fixture } from '../helpers/paths.js';
import { scratchDir } from '../helpers/scratch.js';

const IDLE = fs.readFileSync(fixture('scontrol', 'show_node_o_idle_22.05.8.txt'), 'utf8');
/** The real capture, drained, with `tail` printed after AveWatts= / ExtSensors (Reason= and what follows it). */
const drained = (tail: string): string => IDLE.replace('State=IDLE ', 'State=IDLE+DRAIN ').replace(/ ?\n?$/, ` ${tail}\n`);
const OURS = 'gdrgate: pcie-link 0000:00:06.0 Gen5 x8 (want Gen5 x16) job=7';
const BW = 'gdrgate: bw-gpu-path mlx5_0 12.1 GB/s (want >= 40) job=8';

const read = (text: string): { reason: string | null; reasonUser: string | null; reasonTime: string | null } => {
  const p = parseShowNode(text, 'vm');
  if (!p.ok) throw new Error(p.error);
  return { reason: p.value.reason, reasonUser: p.value.reasonUser, reasonTime: p.value.reasonTime };
};

t.test('a reason is read up to the [user@time] that ends its first line, whatever it holds', async (t) => {
  const cases: [string, string | null, string | null, string | null][] = [
    // An admin's note after ours, with a bracket of its own (a ticket, a mail address).
    [`Reason=${OURS} [ops@ticket-42] RMA open, keep drained [admin@2026-11-29T15:00:00]`, `${OURS} [ops@ticket-42] RMA open, keep drained`, 'admin', '2026-11-29T15:00:00'],
    [`Reason=see [jira@NET-7] first [root@2026-11-29T15:00:00] Comment=rack 12`, 'see [jira@NET-7] first', 'root', '2026-11-29T15:00:00'],
    // A reason of several lines: the first carries the stamp, the others follow after 8 spaces (one-line output).
    [`Reason=${OURS} [admin@2026-11-29T15:00:00]        DO NOT RESUME: RMA 4411`, `${OURS}\nDO NOT RESUME: RMA 4411`, 'admin', '2026-11-29T15:00:00'],
    [`Reason=a [root@2026-11-29T15:00:00]        b c        d Comment=x [y@z] Extra={"k":1}`, 'a\nb c\nd', 'root', '2026-11-29T15:00:00'],
    // Quotes, '=', unicode and a comment, extra and instance after it (23.11+).
    [`Reason=gpu=3 "bad" ünï ✓ [root@2026-11-29T15:00:00] Comment=owner [alice@example.org] Extra=a=b InstanceId=i-1 InstanceType=p5`, 'gpu=3 "bad" ünï ✓', 'root', '2026-11-29T15:00:00'],
    [`Reason=${OURS} [root@2026-11-29T14:39:05] ReservationName=maint TLSCertTokenSet=No TLSCertLastRenewal=None`, OURS, 'root', '2026-11-29T14:39:05'],
    [`Reason=${OURS} [root@2026-11-29T14:39:05]`, OURS, 'root', '2026-11-29T14:39:05'],
    // A stamp that is no stamp (no @) is text; a reason without any stamp (reason_time 0) is not read.
    [`Reason=disk [sdb] failing [slurm@2026-11-29T15:00:00]`, 'disk [sdb] failing', 'slurm', '2026-11-29T15:00:00'],
    [`Reason=${OURS}`, null, null, null],
  ];
  for (const [tail, reason, reasonUser, reasonTime] of cases) t.strictSame(read(drained(tail)), { reason, reasonUser, reasonTime }, tail);
});

t.test("an admin's note after our reason is neither resumed by the health check nor drained over by the Epilog", async (t) => {
  const spool = path.join(scratchDir('gdrgate-reason-read-'), 'spool');
  writeDrainRecord(spool, 'vm', OURS);
  for (const tail of [`Reason=${OURS} [ops@ticket-42] RMA open [admin@2026-11-29T15:00:00]`, `Reason=${OURS} [admin@2026-11-29T15:00:00]        DO NOT RESUME`]) {
    const p = parseShowNode(drained(tail), 'vm');
    if (!p.ok) throw new Error(p.error);
    const reason = p.value.reason;
    t.equal(healthLeaves(reason, ['pcie-link'], spool, 'vm'), `left drained: the reason is not the one gdrgate wrote (${OURS}): edited or written by a person; resume it by hand once mended (gdrgate resume)`, `${tail}: health leaves it`);
    t.strictSame(drainAction(p.value, BW, (r) => notOurWriting(r, spool, 'vm') === null), { act: 'keep', why: `already drained by gdrgate: ${reason}` }, `${tail}: not drained over`);
  }
  // Our very text, stamped: the health check resumes it, as before.
  const p = parseShowNode(drained(`Reason=${OURS} [root@2026-11-29T14:39:05]`), 'vm');
  t.equal(p.ok ? healthLeaves(p.value.reason, ['pcie-link'], spool, 'vm') : 'unread', null);
});
