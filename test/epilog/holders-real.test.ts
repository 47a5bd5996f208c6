// The holders scan (src/epilog/holders.ts) against the real kernel's /proc: in a PID namespace of its own (its /proc
// shows only its processes, numbered from 1: every process of it readable, whatever confines this machine's others),
// a real process holding a file of a temporary tree open is found by the link the kernel gives, with its comm, uid,
// parent and cgroup; the scanner's own child never counts, another's does.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { systemdPath } from '../../src/epilog/holders.js';
import { heldReason, type HolderScan, type HolderVerdict } from '../../src/epilog/holders-rule.js';
import { REPO } from '../helpers/paths.js';
import { scratchDir } from '../helpers/scratch.js';

const UNSHARE = '/usr/bin/unshare';
// A PID namespace and a /proc mount need CAP_SYS_ADMIN.
const skip = process.getuid?.() !== 0 ? 'unshare --pid --mount-proc: root only' : !existsSync(UNSHARE) ? `no ${UNSHARE}` : false;

t.test('a real process holding a file open: found with its comm, uid, parent and cgroup', { skip }, async (t) => {
  const file = path.join(scratchDir('gdrgate-holders-real-'), 'nvidia3');
  writeFileSync(file, '');
  const node = [process.execPath, '--experimental-transform-types', '--disable-warning=ExperimentalWarning', '--import=./test/helpers/ts-resolve.mjs', 'test/epilog/_holders-ns.ts', file];
  const r = spawnSync(UNSHARE, ['--fork', '--pid', '--mount', '--mount-proc', ...node], { cwd: REPO, encoding: 'utf8', timeout: 60_000 });
  t.equal(r.stderr, '');
  const out = JSON.parse(r.stdout) as { self: number; child: number; own: HolderScan; scan: HolderScan; verdicts: HolderVerdict[] };
  t.equal(out.self, 1, "the scanner is its namespace's first process");
  const { scan } = out;
  if (!scan.done) return void t.fail(scan.why);
  t.same(scan.holders, [{ pid: out.child, link: file, device: 'the test file', comm: 'sleep', uid: 0, ancestors: [1], cgroup: systemdPath(readFileSync('/proc/self/cgroup', 'utf8')), unread: null }]);
  t.equal(scan.processes, 2, 'the scanner and its child: all there is in the namespace');
  t.same(out.own, { done: true, holders: [], processes: 2, fds: 0 }, "the scanner's own child: its fds not read");
  t.same(out.verdicts[0], { probe: true }, "the scanner's own child");
  const v = out.verdicts[1]!;
  t.equal(v.probe ? 'probe' : heldReason(v, false), `pid ${out.child} (sleep, uid 0) holds ${file} (the test file): not probed, its traffic would read as a slow path`);
});
