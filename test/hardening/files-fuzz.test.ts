// Seeded fuzzer over what can sit at the spool's paths when the gate opens them: a link (to a file, a directory,
// nowhere), a FIFO, a directory, a file of another user, an oversized or garbage file. Whatever the mix, the
// epilog's file operations end (nothing blocks), never write through a link, and the never-throwing ones do not
// throw. Bounded: ITERATIONS rounds (a count, the same on a loaded machine), one scratch directory of a few KiB.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { chownSync, mkdirSync, readdirSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PROBE_LOCK, readStamp, STAMP, takeProbeLock, writeStamp } from '../../src/epilog/files.js';
import { countTaskFindings, recordTaskFindings, TASK_FINDINGS_FILE } from '../../src/epilog/task-counts.js';
import { countProbeRuns, PROBE_RUNS_FILE, recordProbeRuns } from '../../src/epilog/probe-runs.js';
import { writeAtomic } from '../../src/host/files.js';
import { appendSamples, LIVE, LOCK, readSpool } from '../../src/samples/spool.js';
import { samples, scratch } from './_files.js';

const SEED = Number(process.env.GDRGATE_FUZZ_SEED ?? 20261201);
const ITERATIONS = 60;
const isRoot = process.getuid?.() === 0;

/** mulberry32: small, seedable, good enough to pick shapes. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

const NAMES = [LIVE, 'samples.1.jsonl', 'samples.2.jsonl', STAMP, PROBE_LOCK, LOCK, TASK_FINDINGS_FILE, PROBE_RUNS_FILE, 'gdrgate.prom'];
type Shape = 'none' | 'link-file' | 'link-dir' | 'link-dangling' | 'fifo' | 'dir' | 'foreign' | 'huge' | 'garbage';
const SHAPES: readonly Shape[] = ['none', 'link-file', 'link-dir', 'link-dangling', 'fifo', 'dir', 'foreign', 'huge', 'garbage'];

function plant(p: string, shape: Shape, victim: string, victimDir: string, r: () => number): void {
  rmSync(p, { recursive: true, force: true });
  if (shape === 'link-file') symlinkSync(victim, p);
  else if (shape === 'link-dir') symlinkSync(victimDir, p);
  else if (shape === 'link-dangling') symlinkSync(path.join(victimDir, 'nowhere'), p);
  else if (shape === 'fifo') execFileSync('/usr/bin/mkfifo', [p]);
  else if (shape === 'dir') mkdirSync(p);
  else if (shape === 'foreign') {
    writeFileSync(p, '{"ts":1,"job":"1","code":"job-memlock-low"}\n');
    if (isRoot) chownSync(p, 1000, 1000);
  } else if (shape === 'huge') {
    writeFileSync(p, '');
    truncateSync(p, (64 << 20) + 1 + Math.floor(r() * 1024)); // sparse: no disk used
  } else if (shape === 'garbage') writeFileSync(p, Buffer.from(Array.from({ length: 1 + Math.floor(r() * 300) }, () => Math.floor(r() * 256))));
}

t.test(`planted shapes at the spool's paths (seed ${SEED})`, async (t) => {
  const s = scratch();
  t.teardown(s.done);
  mkdirSync(s.dir, { mode: 0o755 });
  const victimDir = path.join(path.dirname(s.dir), 'victim-dir');
  mkdirSync(victimDir);
  const r = rng(SEED);
  let rounds = 0;
  const problems: string[] = [];
  for (; rounds < ITERATIONS; rounds++) {
    const planted = NAMES.map((n) => [n, SHAPES[Math.floor(r() * SHAPES.length)]!] as const);
    for (const [n, shape] of planted) plant(path.join(s.dir, n), shape, s.victim, victimDir, r);
    const where = planted.filter(([, sh]) => sh !== 'none').map(([n, sh]) => `${n}=${sh}`).join(' ');
    const never = (what: string, f: () => unknown): void => {
      try {
        f();
      } catch (e) {
        problems.push(`round ${rounds} (${where}): ${what} threw ${(e as Error).message}`);
      }
    };
    const may = (f: () => unknown): void => {
      try {
        f();
      } catch {
        /* refusing is allowed; writing through or blocking is not */
      }
    };
    never('appendSamples', () => appendSamples({ dir: s.dir, maxBytes: 2048 }, samples(3)));
    never('readSpool', () => readSpool(s.dir, () => undefined));
    never('readStamp', () => readStamp(s.dir));
    never('countTaskFindings', () => countTaskFindings(s.dir, 'n'));
    never('countProbeRuns', () => countProbeRuns(s.dir, 'n'));
    never('takeProbeLock', () => {
      const l = takeProbeLock(s.dir, 60_000);
      if ('release' in l) l.release();
    });
    may(() => writeStamp(s.dir, { ts: rounds, job: null, cursor: 0 }));
    may(() => recordTaskFindings(s.dir, 'n', '5', ['job-memlock-low']));
    may(() => recordProbeRuns(s.dir, 'n', '5', [{ spec: { kind: 'nvbandwidth', probe: 'nvbw-h2d', tool: '/x', testcase: 'host_to_device_memcpy_ce', args: [], recipe: { tool: 'nvbandwidth', args: [], msgSize: null, iterations: null, durationS: null, qps: null, numaNode: null, direction: 'h2d' }, gpus: [], timeoutMs: 1 }, kind: 'unusable', why: 'missing' }]));
    may(() => writeAtomic(path.join(s.dir, 'gdrgate.prom'), 'm 1\n'));
    if (!s.intact() || readdirSync(victimDir).length !== 0) {
      problems.push(`round ${rounds} (${where}): wrote through a link`);
      break;
    }
  }
  t.strictSame(problems, [], `${rounds} rounds`);
  t.equal(rounds, ITERATIONS, 'every round ran');
});
