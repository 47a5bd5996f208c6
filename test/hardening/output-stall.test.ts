// The bound on a stalled reader: on a non-blocking pipe (EAGAIN when full) the writer waits for as long as the
// reader takes something; a reader that takes nothing for the stall limit makes the write fail (a command exits
// non-zero) instead of hanging forever or claiming the output was delivered. The limit is 120 s in the CLI; here
// 300 ms, on the built writer, with a parent that made the pipe non-blocking and never reads it.
import { spawn } from 'node:child_process';
import path from 'node:path';
import t from 'tap';
import { REPO } from '../helpers/paths.js';

const WRITER = path.join(REPO, 'dist/host/stdout.js');

function stalled(stallMs: number, bytes: number, readAfterMs: number | null): Promise<{ code: number | null; stderr: string; got: number; ms: number }> {
  // The writer touches its own process.stdout first, as the middle process does: libuv then makes the shared pipe
  // non-blocking. (Under Node 24, libuv hands a spawned child its stdio in blocking mode, which undoes the middle
  // process's setting for everyone sharing that pipe.)
  const script = `process.stdout; import(${JSON.stringify(WRITER)}).then((m) => { try { m.writeStdout(Buffer.alloc(${bytes}, 120), ${stallMs}); } catch (e) { process.stderr.write(e.constructor.name + ': ' + e.message); process.exit(3); } });`;
  return new Promise((res) => {
    const t0 = performance.now();
    // The middle process touches its process.stdout (libuv makes the pipe non-blocking) and hands it on.
    const p = spawn(process.execPath, ['-e', `process.stdout; require('node:child_process').spawnSync(process.execPath, ['-e', ${JSON.stringify(script)}], { stdio: 'inherit' }); `], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    let got = 0;
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    p.stdout.pause();
    if (readAfterMs !== null) setTimeout(() => p.stdout.on('data', (d: Buffer) => (got += d.length)).resume(), readAfterMs);
    p.on('close', (code) => res({ code, stderr, got, ms: performance.now() - t0 }));
  });
}

t.test('a reader that never reads: the write fails after the stall limit', async (t) => {
  const r = await stalled(300, 1 << 20, null);
  t.match(r.stderr, /^StdoutStalled: stdout: the reader took nothing for 0\.3 s; \d+ of 1048576 bytes written$/);
  // The writer says it gave up after the limit (the message above), and its process ended: a write that hung
  // forever would never resolve here (tap's timeout would fail the file). Load can only make it later: a lower
  // bound, no upper one.
  t.ok(r.ms >= 300, `it waited the 300 ms stall limit first (${r.ms.toFixed(0)} ms)`);
});

t.test('a reader that starts late, within the limit: everything arrives', async (t) => {
  const r = await stalled(3000, 1 << 20, 500);
  t.equal(r.stderr, '');
  t.equal(r.got, 1 << 20, 'every byte');
});
