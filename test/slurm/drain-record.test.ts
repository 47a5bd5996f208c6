// The drain record (what this node's gdrgate wrote last) is trusted only from a spool no other user can change: in
// one they can write, the record may have been removed (the prefix rule then lifts an admin's edited reason) or an
// older one of root's put back, so what gdrgate wrote cannot be told and the drain is left to a person.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { DRAIN_RECORD, notOurWriting, readDrainRecord, writeDrainRecord } from '../../src/slurm/drain-record.js';
import { drainAction, healthLeaves } from '../../src/slurm/ownership.js';
import { scratchDir } from '../helpers/scratch.js';

const OURS = 'gdrgate: pcie-link 0000:00:06.0 Gen5 x8 (want Gen5 x16) job=7';
const EDITED = `${OURS} RMA open, keep drained`;
const BW = 'gdrgate: bw-gpu-path mlx5_0 12.1 GB/s (want >= 40) job=8';
const drained = (reason: string) => ({ name: 'vm', state: 'IDLE+DRAIN', reason, reasonUser: 'admin', reasonTime: '2026-11-29T15:00:00' });

/** A spool with this node's record of OURS, then opened to others (`mode`), its record then removed or kept. */
function spoolOf(mode: number, removed: boolean): string {
  const spool = path.join(scratchDir('gdrgate-drain-record-'), 'spool');
  writeDrainRecord(spool, 'vm', OURS);
  fs.chmodSync(spool, mode);
  if (removed) fs.unlinkSync(path.join(spool, DRAIN_RECORD));
  return spool;
}

t.test('a spool others may write: no record trusted, present or gone; the drain is left to a person', async (t) => {
  for (const mode of [0o777, 0o775]) {
    for (const removed of [false, true]) {
      const spool = spoolOf(mode, removed);
      const what = `mode ${mode.toString(8)}, record ${removed ? 'removed' : 'kept'}`;
      const why = `${spool} is writable by ${mode & 0o002 ? 'anyone' : 'its group'} (mode 0${mode.toString(8)})`;
      t.strictSame(readDrainRecord(spool, 'vm'), { ok: false, none: false, why }, what);
      t.equal(healthLeaves(EDITED, ['pcie-link'], spool, 'vm'), `left drained: what gdrgate wrote cannot be told (${why}); resume it by hand once mended (gdrgate resume)`, `${what}: an edited reason is not resumed`);
      t.strictSame(drainAction(drained(EDITED), BW, (r) => notOurWriting(r, spool, 'vm') === null), { act: 'keep', why: `already drained by gdrgate: ${EDITED}` }, `${what}: nor drained over`);
    }
  }
});

t.test('a spool of its own, or none at all: as before', async (t) => {
  const spool = spoolOf(0o755, false);
  t.strictSame(readDrainRecord(spool, 'vm'), { ok: true, reason: OURS });
  t.equal(notOurWriting(OURS, spool, 'vm'), null, 'our very text is ours to lift');
  const gone = spoolOf(0o755, true);
  t.equal(notOurWriting(EDITED, gone, 'vm'), null, 'no record of this node: the prefix rule');
  const none = path.join(scratchDir('gdrgate-drain-record-'), 'spool');
  t.strictSame(readDrainRecord(none, 'vm'), { ok: false, none: true, why: `gdrgate keeps no record of writing a drain on this node (${path.join(none, DRAIN_RECORD)})` }, 'no spool yet');
  t.equal(notOurWriting(OURS, none, 'vm'), null);
});
