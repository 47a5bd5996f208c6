// The drain lock is taken only in a state directory no other user can write: in one they can (mode 0777, 0775), a
// drain.lock of theirs, kept fresh and naming a live pid, held off every drain of the node (the Epilog's and the
// health check's then drain nothing); there the drain goes unlocked, as with no state directory.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import type { Exec, ExecOptions, ExecResult } from '../../src/host/exec.js';
import { drainOwned } from '../../src/slurm/drain.js';
import { Scontrol } from '../../src/slurm/scontrol.js';
import { fixture } from '../helpers/paths.js';
import { scratchDir } from '../helpers/scratch.js';

const IDLE = fs.readFileSync(fixture('scontrol', 'show_node_o_idle_22.05.8.txt'), 'utf8');
const OURS = 'gdrgate: pcie-link 0000:00:06.0 Gen5 x8 (want Gen5 x16) job=7';

class Slurmctld implements Exec {
  readonly calls: string[] = [];
  run(_file: string, args: readonly string[], _opts: ExecOptions): Promise<ExecResult> {
    this.calls.push(args.join(' '));
    return Promise.resolve({ exitCode: 0, stdout: args[0] === 'show' ? IDLE : '', stderr: '', timedOut: false, error: null, durationMs: 1 });
  }
}

/** A state directory of `mode` with a lock planted in it, fresh and naming pid 1 (alive). */
function planted(mode: number): { stateDir: string; spool: string } {
  const dir = scratchDir('gdrgate-drain-lock-');
  const stateDir = path.join(dir, 'run');
  fs.mkdirSync(stateDir);
  fs.chmodSync(stateDir, mode);
  fs.writeFileSync(path.join(stateDir, 'drain.lock'), `1 ${Date.now()} planted\n`, { mode: 0o644 });
  return { stateDir, spool: path.join(dir, 'spool') };
}

t.test('a lock planted in a state directory others may write holds off no drain', async (t) => {
  for (const mode of [0o777, 0o775]) {
    const { stateDir, spool } = planted(mode);
    const exec = new Slurmctld();
    const r = await drainOwned(new Scontrol(exec, { path: '/usr/bin/scontrol', timeoutMs: 100 }), 'vm', OURS, stateDir, spool);
    t.strictSame(r, { action: 'drained', ours: true }, `mode ${mode.toString(8)}`);
    t.strictSame(exec.calls, ['show node -o vm', `update nodename=vm state=drain reason=${OURS}`], `mode ${mode.toString(8)}: read, then drained`);
    t.equal(fs.readFileSync(path.join(stateDir, 'drain.lock'), 'utf8').endsWith(' planted\n'), true, 'the planted file is left as it is');
  }
});

t.test('in a state directory of its own, a live holder is still waited for (two Prologs of a job array)', async (t) => {
  const { stateDir, spool } = planted(0o711);
  const exec = new Slurmctld();
  const r = await drainOwned(new Scontrol(exec, { path: '/usr/bin/scontrol', timeoutMs: 100 }), 'vm', OURS, stateDir, spool);
  t.strictSame(r, { action: 'kept: another gdrgate run (pid 1) is draining this node', ours: false });
  t.strictSame(exec.calls, [], 'neither read nor written while another run holds the lock');
});
