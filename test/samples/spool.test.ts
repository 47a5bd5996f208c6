// Tests the spool: 50 concurrent writer processes lose nothing, rotation is bounded, torn lines and full disks are survived.
import t from 'tap';
import { execFileSync, fork } from 'node:child_process';
import { appendFileSync, existsSync, linkSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';

import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { makeSample, sampleLine, type ProbeRecipe, type Sample } from '../../src/samples/sample.js';
import { appendSamples, LOCK, readSpool, TORN_MARK, type SpoolOptions } from '../../src/samples/spool.js';
import { scratchDir } from '../helpers/scratch.js';

const here = (p: string): string => fileURLToPath(new URL(p, import.meta.url));
const recipe: ProbeRecipe = {
  tool: 'ib_write_bw', args: ['-d', 'mlx5_0', '-s', '65536'], msgSize: 65536, iterations: 5000, durationS: null,
  qps: 1, numaNode: 0, direction: 'gpu->nic',
};
const mk = (job: string, value = 92.5, over: Partial<ProbeRecipe> = {}): Sample =>
  makeSample({ ts: Date.now(), node: 'gpu001', job, probe: 'gdr-write', recipe: { ...recipe, ...over }, gpu: null, nic: 'mlx5_0', bytes: 65536, value, unit: 'Gb/s' });
const batch = (from: number, n: number): Sample[] => Array.from({ length: n }, (_, i) => mk(String(from + i)));
const readAll = (dir: string): { jobs: string[]; report: ReturnType<typeof readSpool> } => {
  const jobs: string[] = [];
  const report = readSpool(dir, (s) => jobs.push(s.job ?? ''));
  return { jobs, report };
};
const root = scratchDir('gdrgate-spool-');
t.teardown(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const freshDir = (): string => {
  const d = join(root, `s${n++}`);
  mkdirSync(d);
  return d;
};

/**
 * Children run plain JS: transpile the spool and what it imports once, in src/'s layout, instead of loading a
 * TS loader in 50 processes. Returns the directory that holds spool.js.
 */
function transpiled(): string {
  const out = join(root, 'mod');
  for (const f of ['samples/sample', 'samples/spool', 'host/process', 'host/files', 'host/lock', 'host/file-why', 'host/dirs', 'host/entries', 'host/fd', 'host/trust', 'errors']) {
    mkdirSync(join(out, f, '..'), { recursive: true });
    const src = readFileSync(here(`../../src/${f}.ts`), 'utf8');
    const js = ts.transpileModule(src, { compilerOptions: { module: ts.ModuleKind.ES2022, target: ts.ScriptTarget.ES2022 } });
    writeFileSync(join(out, `${f}.js`), js.outputText);
  }
  writeFileSync(join(out, 'package.json'), '{"type":"module"}\n');
  return join(out, 'samples');
}

t.test('50 concurrent writer processes, rotating: every line parses, none lost', async (t) => {
  const dir = freshDir();
  const mod = transpiled();
  const [writers, batches, size] = [50, 40, 25];
  const results = await Promise.all(
    Array.from({ length: writers }, (_, id) => new Promise<{ written: number; failures: string[] }>((resolve, reject) => {
      const child = fork(here('./spool-writer.mjs'), [mod, dir, String(id), String(batches), String(size), String(1 << 20), '100'], { execArgv: [] });
      let got: { written: number; failures: string[] } | null = null;
      child.on('message', (m) => { got = m as { written: number; failures: string[] }; });
      child.on('error', reject);
      child.on('close', (code) => (code === 0 && got !== null ? resolve(got) : reject(new Error(`writer ${id} exit ${code}`))));
    })),
  );
  t.same(results.flatMap((r) => r.failures), [], 'no append failed');
  t.equal(results.reduce((a, r) => a + r.written, 0), writers * batches * size);
  const seen = new Map<string, Set<string>>();
  const report = readSpool(dir, (s) => {
    const set = seen.get(s.node) ?? new Set<string>();
    set.add(s.job ?? '');
    seen.set(s.node, set);
  });
  t.equal(report.samples, writers * batches * size, 'every line read back');
  t.equal(report.corrupt, 0, 'no interleaved lines');
  t.equal(report.torn, 0);
  t.ok(report.files.length > 5, `rotated under contention (${report.files.length} files)`);
  t.ok([...seen.values()].every((s) => s.size === batches * size), 'each writer: every sequence number exactly once');
  t.notOk(existsSync(join(dir, LOCK)), 'lock released');
});

t.test('rotation keeps N generations under maxBytes', async (t) => {
  const dir = freshDir();
  const o: SpoolOptions = { dir, maxBytes: 4096, keep: 2 };
  const oks = Array.from({ length: 100 }, (_, i) => appendSamples(o, batch(i, 1)).ok);
  t.ok(oks.every(Boolean));
  const files = readdirSync(dir).sort();
  t.same(files, ['samples.1.jsonl', 'samples.2.jsonl', 'samples.jsonl']);
  t.ok(files.every((f) => statSync(join(dir, f)).size <= 4096));
  const { jobs, report } = readAll(dir);
  t.equal(jobs.at(-1), '99', 'newest kept');
  t.ok(Number(jobs[0]) > 0, 'oldest generation dropped');
  t.same(jobs, [...jobs].sort((a, b) => Number(a) - Number(b)), 'read oldest file first');
  t.equal(report.corrupt + report.torn, 0);
});

t.test('an empty live file is not rotated, however large the batch: no empty generation', async (t) => {
  const dir = freshDir();
  writeFileSync(join(dir, 'samples.jsonl'), '');
  const r = appendSamples({ dir, maxBytes: 512, keep: 3 }, batch(0, 4));
  t.same([r.ok, r.written, r.notes], [true, 4, []]);
  t.same(readdirSync(dir), ['samples.jsonl']);
});

t.test('stale lock (dead pid) is broken; a live lock skips rotation but never the append', async (t) => {
  const dir = freshDir();
  const o: SpoolOptions = { dir, maxBytes: 1024, keep: 3 };
  appendSamples(o, batch(0, 4));
  const dead = execFileSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  writeFileSync(join(dir, LOCK), `${dead} 0 x\n`);
  const r1 = appendSamples(o, batch(4, 1));
  t.ok(r1.ok);
  t.ok(existsSync(join(dir, 'samples.1.jsonl')), 'rotated after breaking the stale lock');
  t.notOk(existsSync(join(dir, LOCK)));
  appendSamples(o, batch(5, 4));
  const live = `${process.pid} ${Date.now()} live\n`;
  writeFileSync(join(dir, LOCK), live);
  const r2 = appendSamples(o, batch(9, 1));
  t.ok(r2.ok);
  t.same(r2.notes, [`rotation skipped: spool lock held by another process (pid ${process.pid})`]);
  t.equal(readFileSync(join(dir, LOCK), 'utf8'), live, 'a live lock is left alone');
  t.equal(readAll(dir).jobs.length, 10);
});

t.test('torn last line (crash mid-write) is skipped and counted; the next append heals it', async (t) => {
  const dir = freshDir();
  const o: SpoolOptions = { dir };
  t.ok(appendSamples(o, batch(0, 10)).ok);
  const whole = JSON.stringify(mk('torn'));
  appendFileSync(join(dir, 'samples.jsonl'), whole.slice(0, whole.length >> 1));
  const first = readAll(dir);
  t.equal(first.report.samples, 10);
  t.equal(first.report.torn, 1);
  t.equal(first.report.corrupt, 0);
  t.ok(appendSamples(o, batch(10, 5)).ok);
  const second = readAll(dir);
  t.equal(second.report.samples, 15, 'the batch after the tear is intact');
  t.strictSame([second.report.torn, second.report.corrupt], [1, 0], 'the closed line is still counted torn, not corrupt');
  const lines = readFileSync(join(dir, 'samples.jsonl'), 'utf8').split('\n');
  t.equal(lines[10], `${whole.slice(0, whole.length >> 1)}${TORN_MARK}`, 'closed with the mark');
  // A second writer that saw the same cut tail closes it again: its mark alone on a line is neither torn nor corrupt.
  appendFileSync(join(dir, 'samples.jsonl'), `${TORN_MARK}\n`);
  t.ok(appendSamples(o, batch(15, 1)).ok);
  const third = readAll(dir);
  t.strictSame([third.report.samples, third.report.torn, third.report.corrupt], [16, 1, 0]);
});

t.test('bad input is rejected and counted; a missing directory is an error result, not a throw', async (t) => {
  const dir = freshDir();
  const long = mk('long', 1, { args: ['x'.repeat(5000)] });
  const [a, b] = [mk('a'), mk('b')];
  const r = appendSamples({ dir }, [a, long, mk('nan', Number.NaN), b]);
  const notes = ['2 sample(s) not spooled: a line over 4096 bytes, or a value a line cannot hold'];
  t.same(r, { ok: true, written: 2, bytes: Buffer.byteLength(sampleLine(a)! + sampleLine(b)!), rejected: 2, notes, unwritten: [] });
  t.same(readAll(dir).jobs, ['a', 'b']);
  const nope = join(dir, 'nope');
  const c = mk('c');
  const missing = appendSamples({ dir: nope }, [c]);
  t.same(missing, { ok: false, code: 'ENOENT', message: `ENOENT: no such file or directory, lstat '${nope}'`, written: 0, bytes: 0, rejected: 0, notes: [], unwritten: [c] });
  t.same(readSpool(nope, () => undefined).problems, [`cannot list ${nope}: ENOENT: no such file or directory, scandir '${nope}'`]);
});

// Once the way to simulate ENOSPC; root writing through a planted link is the defect now refused (the 64 KiB
// tmpfs test below holds the full-disk case).
t.test('a link at samples.jsonl (to /dev/full): refused, never written through; earlier samples untouched', { skip: !existsSync('/dev/full') && 'no /dev/full' }, async (t) => {
  const dir = freshDir();
  t.ok(appendSamples({ dir }, batch(0, 20)).ok);
  renameSync(join(dir, 'samples.jsonl'), join(dir, 'samples.1.jsonl'));
  const before = readFileSync(join(dir, 'samples.1.jsonl'));
  symlinkSync('/dev/full', join(dir, 'samples.jsonl'));
  const r = appendSamples({ dir }, batch(20, 5));
  t.same(r.ok ? r : { ok: r.ok, code: r.code, message: r.message, written: r.written }, { ok: false, code: 'EUNSAFE', message: `${join(dir, 'samples.jsonl')} is a symbolic link`, written: 0 });
  t.same(readFileSync(join(dir, 'samples.1.jsonl')), before, 'previous generation byte-identical');
  const { jobs, report } = readAll(dir);
  t.equal(jobs.length, 20);
  const link = join(dir, 'samples.jsonl');
  t.same(report.problems, [`${link} is a symbolic link`], 'the link, once; nothing else');
});

const canMount = ((): string | false => {
  if (process.getuid?.() !== 0) return 'not root';
  const probe = scratchDir('gdrgate-mnt-');
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', probe], { stdio: 'ignore' });
    execFileSync('umount', [probe], { stdio: 'ignore' });
    return false;
  } catch {
    return 'cannot mount tmpfs here';
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
})();

t.test('full disk on a 64 KiB tmpfs: failure reported, every acknowledged sample survives', { skip: canMount }, async (t) => {
  const dir = scratchDir('gdrgate-full-');
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', dir]);
  t.teardown(() => {
    execFileSync('umount', [dir]);
    rmSync(dir, { recursive: true, force: true });
  });
  writeFileSync(join(dir, 'filler'), Buffer.alloc(16 << 10));
  const acked: string[] = [];
  let failure: ReturnType<typeof appendSamples> | null = null;
  for (let i = 0; i < 1000 && failure === null; i++) {
    const b = batch(i * 7, 7);
    const r = appendSamples({ dir }, b);
    if (r.ok) acked.push(...b.map((s) => s.job ?? ''));
    else failure = r;
  }
  t.ok(failure !== null && !failure.ok && ['ENOSPC', 'ESHORTWRITE'].includes(failure.code), `failed with ${failure?.ok === false ? failure.code : '?'}`);
  const full = readAll(dir);
  // The failed batch: each sample either read back whole or reported unwritten, never both (the Epilog judges the
  // unwritten ones beside the spool: one in both would count twice).
  const last = Array.from({ length: 7 }, (_, i) => String((acked.length / 7) * 7 + i));
  const unwritten = failure?.unwritten.map((s) => s.job) ?? [];
  t.same([...last.filter((j) => full.jobs.includes(j)), ...unwritten].sort(), [...last].sort(), 'the failed batch: read back or unwritten, each once');
  t.ok(acked.every((j) => full.jobs.includes(j)), `all ${acked.length} acknowledged samples read back`);
  t.ok(full.report.torn + full.report.corrupt <= 1, 'at most the one torn line');
  rmSync(join(dir, 'filler'));
  t.ok(appendSamples({ dir }, batch(100000, 5)).ok, 'appends again once space is back');
  const after = readAll(dir);
  t.ok(['100000', '100004'].every((j) => after.jobs.includes(j)));
  t.strictSame([after.report.torn, after.report.corrupt], [full.report.torn + full.report.corrupt, 0], 'the tail was closed: a cut line stays torn');
});

t.test('a write cut short by the file size limit: the whole lines before the cut are read back, only the rest unwritten', async (t) => {
  const dir = freshDir();
  const mod = transpiled();
  t.ok(appendSamples({ dir }, batch(0, 20)).ok);
  const size = statSync(join(dir, 'samples.jsonl')).size;
  const line = Math.ceil(size / 20);
  // `ulimit -f` counts KiB blocks in bash: a limit two to five lines past the file's end.
  const kib = Math.ceil((size + 2 * line) / 1024);
  const out = execFileSync('/bin/bash', ['-c', `ulimit -f ${kib} && exec "$0" "$@"`, process.execPath, here('./spool-fsize.mjs'), mod, dir, '100', '10'], { encoding: 'utf8' });
  const said = JSON.parse(out) as { ok: boolean; code: string | null; bytes: number; unwritten: string[] };
  const back = readAll(dir);
  const mine = back.jobs.filter((j) => Number(j) >= 100);
  t.same([said.ok, said.code], [false, 'ESHORTWRITE'], `cut short at ${kib} KiB (${said.bytes} bytes of this batch written)`);
  t.ok(mine.length > 0 && mine.length < 10, `some of the batch read back (${mine.length})`);
  t.same([...mine, ...said.unwritten], Array.from({ length: 10 }, (_, i) => String(100 + i)), 'each sample of the batch read back or unwritten, once, in order');
  t.equal(back.report.samples, 20 + mine.length);
  t.strictSame([back.report.torn, back.report.corrupt], [1, 0], 'the cut line: torn (no room left to close it)');
  t.ok(appendSamples({ dir }, batch(200, 2)).ok);
  const after = readAll(dir);
  t.strictSame([after.report.samples, after.report.torn, after.report.corrupt], [22 + mine.length, 1, 0], 'closed by the next append, still torn');
});

// rotate() moves samples.jsonl to samples.1.jsonl with moveNoClobber (link, then unlink): a reader between the two sees
// one file under both names, and reads it once.
t.test('a rotation caught between link and unlink: one file under two names is read once', async (t) => {
  const dir = freshDir();
  t.same(appendSamples({ dir }, [mk('1', 91), mk('2', 92)]).ok, true);
  linkSync(join(dir, 'samples.jsonl'), join(dir, 'samples.1.jsonl'));
  const seen: number[] = [];
  const r = readSpool(dir, (x) => seen.push(x.value));
  t.same([seen, r.files, r.samples], [[91, 92], [join(dir, 'samples.1.jsonl')], 2]);
});
