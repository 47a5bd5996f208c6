// The spool's defaults, as the epilog uses them (epilog/run.ts passes only the directory): files rotate when the next
// batch would take the live file past 16 MiB, three rotated generations are kept, and a rotation lock is stale after 30 s.
import t from 'tap';
import { readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeSample, sampleLine, type Sample } from '../../src/samples/sample.js';
import { appendSamples, LIVE, LOCK, readSpool } from '../../src/samples/spool.js';
import { gpuBdf, NOMINAL_GBPS, RECIPE } from '../gen/fleet.js';
import { scratchDir } from '../helpers/scratch.js';

const TS = 1_800_000_000_000;
/** One sample of rail 0 of the generated HGX H100 fleet (test/gen/fleet.ts: its recipe, GPU and nominal rate). */
const mk = (job: string): Sample =>
  makeSample({ ts: TS, node: 'gpu0001', job, probe: 'gdr-write', recipe: RECIPE, gpu: gpuBdf(0), nic: 'mlx5_0', bytes: 1048576, value: NOMINAL_GBPS, unit: 'Gb/s' });
const bytesOf = (s: Sample): number => Buffer.byteLength(sampleLine(s)!);

/** A spool directory of its own for each case (removed when the test's process exits). */
const freshDir = (): string => scratchDir('gdrgate-spool-defaults-');

t.test('keep unset: samples.1 to samples.3 are kept, the fourth generation is dropped', async (t) => {
  const dir = freshDir();
  // 2 KiB files: two lines each, so 40 appends rotate 19 times.
  for (let i = 0; i < 40; i++) t.equal(appendSamples({ dir, maxBytes: 2048 }, [mk(String(1000 + i))]).ok, true);
  t.same(readdirSync(dir).sort(), ['samples.1.jsonl', 'samples.2.jsonl', 'samples.3.jsonl', LIVE]);
  const jobs: string[] = [];
  readSpool(dir, (s) => jobs.push(s.job ?? ''));
  // Each file holds `per` lines; the live one the lines since the last rotation.
  const per = Math.floor(2048 / bytesOf(mk('1000')));
  const kept = 3 * per + (((40 - 1) % per) + 1);
  t.same(jobs, Array.from({ length: kept }, (_, i) => String(1040 - kept + i)), 'the newest lines of four files, oldest first');
});

t.test('maxBytes unset: a live file filled to exactly 16 MiB is not rotated; one more line rotates it', async (t) => {
  const dir = freshDir();
  const max = 16 << 20;
  const line = bytesOf(mk('1000000'));
  // Lines of one length, and a last one padded (a longer job id) so the file ends at exactly 16 MiB.
  const k = Math.floor(max / line) - 1;
  const last = mk('1'.repeat(7 + max - k * line - line));
  t.equal(k * line + bytesOf(last), max);
  for (let i = 0; i < k; i += 8192) {
    const batch = Array.from({ length: Math.min(8192, k - i) }, (_, j) => mk(String(1000000 + i + j)));
    t.equal(appendSamples({ dir }, batch).ok, true);
  }
  t.same(appendSamples({ dir }, [last]).notes, []);
  t.same([readdirSync(dir), statSync(join(dir, LIVE)).size], [[LIVE], max], 'at the bound: not rotated');
  t.equal(appendSamples({ dir }, [mk('2000000')]).ok, true);
  t.same(readdirSync(dir).sort(), ['samples.1.jsonl', LIVE]);
  t.same([statSync(join(dir, 'samples.1.jsonl')).size, statSync(join(dir, LIVE)).size], [max, line]);
});

t.test('staleLockMs unset: a live process\'s rotation lock is held until 30 s old, then broken', async (t) => {
  for (const [ageS, rotated] of [[29, false], [31, true]] as const) {
    const dir = freshDir();
    t.equal(appendSamples({ dir, maxBytes: 2048 }, [mk('1000'), mk('1001'), mk('1002')]).ok, true);
    // Our own pid: alive, so only the lock's age (its mtime, host/lock.ts) can make it stale.
    writeFileSync(join(dir, LOCK), `${process.pid} ${Date.now()} live\n`);
    const then = (Date.now() - ageS * 1000) / 1000;
    utimesSync(join(dir, LOCK), then, then);
    const r = appendSamples({ dir, maxBytes: 2048 }, [mk('1003'), mk('1004'), mk('1005')]);
    t.same(r.notes, rotated ? [] : [`rotation skipped: spool lock held by another process (pid ${process.pid})`], `${ageS} s old`);
    t.same(readdirSync(dir).sort(), rotated ? ['samples.1.jsonl', LIVE] : [LIVE, LOCK], `${ageS} s old`);
  }
});
