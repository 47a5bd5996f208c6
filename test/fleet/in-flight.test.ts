// A node's input caught while it is written (gdrgate's `.<name>.<pid>.<hex>` before its rename, rsync's
// `.<name>.XXXXXX`) is said on the node, never skipped as a stranger's file: a node whose first snapshot is arriving
// is listed (unreadable), one whose snapshot is being replaced is judged in part, and the exit code is 1.
import t from 'tap';
import { copyFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { runFleetReport } from '../../src/fleet/report-command.js';
import { generateFleet } from '../gen/fleet.js';
import { validate } from '../helpers/schema.js';

const CLEAN = { 'link-x8': 0, 'acs-redirect': 0, firmware: 0, 'missing-nic': 0, 'weak-rail': 0 };

t.test('snapshots and a spool file being written: each node says so, exit 1', async (t) => {
  const dir = path.join(t.testdir(), 'fleet');
  await generateFleet(dir, { n: 5, seed: 11, rates: CLEAN, spools: false });
  const f = (name: string): string => path.join(dir, name);
  renameSync(f('gpu0003.tar.gz'), f('.gpu0003.tar.gz.4242.0123456789ab'));
  copyFileSync(f('gpu0002.tar.gz'), f('.gpu0002.tar.gz.Ab3xYz'));
  writeFileSync(f('.gpu0004.samples.jsonl.Qw9Er1'), '');
  // Not a fleet input's name inside: another program's hidden file, not fleet's.
  writeFileSync(f('.README.txt.Zx81aa'), '');
  const r = (await runFleetReport({ dir, baseline: null })).report;
  t.same(validate('fleet-report', JSON.parse(JSON.stringify(r))), []);
  t.strictSame(r.nodes.map((v) => [v.node, v.status, v.notes]).sort((a, b) => String(a[0]).localeCompare(String(b[0]))), [
    ['gpu0001', 'ok', []],
    ['gpu0002', 'incomplete', ['.gpu0002.tar.gz.Ab3xYz: a snapshot of gpu0002 being written (or left by a writer that stopped), not read: what the node is now is not all here']],
    ['gpu0003', 'unreadable', ['.gpu0003.tar.gz.4242.0123456789ab: a snapshot of gpu0003 being written (or left by a writer that stopped), not read: what the node is now is not all here']],
    ['gpu0004', 'incomplete', ['.gpu0004.samples.jsonl.Qw9Er1: a spool file of gpu0004 being written (or left by a writer that stopped), not read: what the node is now is not all here']],
    ['gpu0005', 'ok', []],
  ]);
  t.strictSame(r.problems, []);
  t.equal(r.exitCode, 1);
});
