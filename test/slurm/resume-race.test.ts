// gdrgate resume through the built CLI against a stand-in scontrol whose node changes after the first show (an
// admin's drain written during the re-check): the reason is read again before resuming, and a changed one is left.
import t from 'tap';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { cli } from '../helpers/cli.js';
import { makeGateEnv } from '../helpers/gate-env.js';
import { fixture } from '../helpers/paths.js';

const IDLE = fixture('scontrol/show_node_o_idle_22.05.8.txt');
const drained = (reason: string): string => readFileSync(IDLE, 'utf8').replace('State=IDLE ', 'State=IDLE+DRAIN ').replace(/\n?$/, ` Reason=${reason}\n`);
const OURS = 'gdrgate: pcie-link 0000:00:06.0 Gen5 x8 (want Gen5 x16) job=7';

/** `first` is what the first `show` prints; every later `show` prints `then`; `update` records and idles the node. */
function race(first: string, then: string) {
  const env = makeGateEnv();
  const state = path.join(env.dir, 'scontrol.state');
  const later = path.join(env.dir, 'scontrol.later');
  writeFileSync(state, first);
  writeFileSync(later, then);
  writeFileSync(
    path.join(env.dir, 'scontrol'),
    `#!/bin/bash\necho "$*" >> "${env.calls}"\ncase "$1" in\n  show) cat "${state}"; cp "${later}" "${state}" ;;\n  update) cp "${IDLE}" "${state}" ;;\nesac\n`,
  );
  chmodSync(path.join(env.dir, 'scontrol'), 0o755);
  const r = cli(['resume', '--config', env.config, '--node', 'vm']);
  return { ...r, calls: readFileSync(env.calls, 'utf8').trimEnd().split('\n') };
}

t.test("an admin's drain written during the re-check: left drained, no update", async (t) => {
  const admin = 'RMA: GPU3 Xid 79, do not resume (bob)';
  const r = race(drained(`${OURS} [root@2026-11-29T14:39:05]`), drained(`${admin} [bob@2026-11-29T14:40:00]`));
  t.equal(r.code, 2, 'refused');
  t.equal(r.stdout, `vm: left drained: the reason changed during the re-check: now ${admin} [bob@2026-11-29T14:40:00] (was ${OURS} [root@2026-11-29T14:39:05])\n`);
  t.same(r.calls, ['show node -o vm', 'show node -o vm'], 'read twice, never updated');
});

t.test('the same text written again by someone else (only [user@time] changed): left drained', async (t) => {
  const r = race(drained(`${OURS} [root@2026-11-29T14:39:05]`), drained(`${OURS} [bob@2026-11-29T14:41:00]`));
  t.equal(r.code, 2);
  t.equal(r.stdout, `vm: left drained: the reason changed during the re-check: now ${OURS} [bob@2026-11-29T14:41:00] (was ${OURS} [root@2026-11-29T14:39:05])\n`);
  t.same(r.calls, ['show node -o vm', 'show node -o vm']);
});

t.test('the reason unchanged at the second read: resumed', async (t) => {
  const same = drained(`${OURS} [root@2026-11-29T14:39:05]`);
  const r = race(same, same);
  t.equal(r.code, 0);
  t.equal(r.stdout, `vm: resumed (was: ${OURS})\n`);
  t.same(r.calls, ['show node -o vm', 'show node -o vm', 'update nodename=vm state=resume']);
});
