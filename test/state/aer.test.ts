// pcie-aer's reference counters in the state directory: round trip, a first run, a corrupt or planted file (never a
// fail, never a throw), the job's record taken once, old job records pruned; and what the check makes of each.
import { present } from '../../src/model/fact.js';
import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { aerReferenceOf } from '../../src/checks/aer-judge.js';
import { AER_LAST, aerJobFile, readLastAer, takeJobAer } from '../../src/state/aer.js';
import { pruneJobAer, writeAer } from '../../src/state/aer-write.js';
import { dev, hgx, inventoryOf, P0, PREVIOUS_RUN, runCheck, THIS_RUN } from '../checks/_trees.js';

const stateDir = (t: Test): string => {
  const d = path.join(t.testdir(), 'run');
  fs.mkdirSync(d, { mode: 0o711 });
  return d;
};

const before = hgx();
const after = hgx();
dev(after, P0.gpu).aerCounters = { cor: { 0: 7 } };
const [invBefore, invAfter] = await Promise.all([inventoryOf(before), inventoryOf(after)]);
const gpuFinding = (h: ReturnType<typeof readLastAer>) => runCheck('pcie-aer', invAfter, null, { aerHistory: h, now: THIS_RUN }).filter((f) => f.subject === P0.gpu).map((f) => `${f.status} ${f.code} ${f.actual ?? ''}`);

t.test('round trip: the Prolog writes, the next Prolog reads the same reference; growth is judged against it', async (t) => {
  const dir = stateDir(t);
  const ref = aerReferenceOf(invBefore, PREVIOUS_RUN, '41');
  t.same(writeAer(dir, ref), [AER_LAST, 'aer-job-41.json']);
  t.equal(fs.statSync(path.join(dir, AER_LAST)).mode & 0o777, 0o600, 'root only');
  const h = readLastAer(dir);
  t.same(h.ref, ref);
  t.same(gpuFinding(h), ['warn aer-correctable +7'], 'RxErr 0 → 7 in an hour: warn');
  const job = takeJobAer(dir, '41');
  t.same(job.ref, ref, "the job's record");
  t.notOk(fs.existsSync(path.join(dir, aerJobFile('41'))), 'taken once: removed');
  t.equal(takeJobAer(dir, '41').ref, null, 'a second Epilog finds none');
});

t.test('first run, corrupt or refused file: no growth known, a pass that says so, never a fail or a throw', async (t) => {
  const dir = stateDir(t);
  const first = readLastAer(dir);
  t.equal(first.ref, null);
  t.equal(first.why, 'the previous run recorded no counters (a first run on this node)');
  t.same(gpuFinding(first), ['pass aer-ok none'], 'first run');
  const file = path.join(dir, AER_LAST);
  const bad: [string, string, string][] = [['not JSON', '{"format": "gdrgate-aer', `${file} is not JSON`], ['another format', '{"format":"x"}', `${file}: not a gdrgate-aer-counters/1 file`], ['a malformed device', JSON.stringify({ format: 'gdrgate-aer-counters/1', time: PREVIOUS_RUN.toISOString(), boot: null, job: null, devices: { [P0.gpu]: { cor: -1, rootCor: null, ceSta: 0 } } }), `${file}: device ${P0.gpu} is malformed`], ['an empty file', '', `${file} is not JSON`]];
  for (const [name, text, why] of bad) {
    fs.writeFileSync(path.join(dir, AER_LAST), text, { mode: 0o600 });
    const h = readLastAer(dir);
    t.equal(h.ref, null, `${name}: no reference`);
    t.equal(h.why, `${why} (corrupt: starting again)`, `${name}: says why`);
    t.same(gpuFinding(h), ['pass aer-ok none'], `${name}: a pass, growth unknown`);
  }
  fs.rmSync(path.join(dir, AER_LAST));
  fs.writeFileSync(path.join(dir, 'elsewhere.json'), JSON.stringify({ format: 'gdrgate-aer-counters/1', time: PREVIOUS_RUN.toISOString(), boot: null, job: null, devices: {} }));
  fs.symlinkSync('elsewhere.json', path.join(dir, AER_LAST));
  const linked = readLastAer(dir);
  t.equal(linked.ref, null, 'a link planted at aer-last.json is not followed');
  t.equal(linked.why, `the previous run's counters refused: ${file} is a symbolic link`);
  fs.writeFileSync(path.join(dir, 'group.json'), '{}', { mode: 0o666 });
  fs.chmodSync(path.join(dir, 'group.json'), 0o666);
  fs.rmSync(path.join(dir, AER_LAST));
  fs.renameSync(path.join(dir, 'group.json'), path.join(dir, AER_LAST));
  t.equal(readLastAer(dir).why, `the previous run's counters refused: ${file} is writable by others (mode 0666)`, 'a file others may write is refused');
});

t.test("a reference in a directory others may write is refused (they could remove it, or put an older one of root's back)", async (t) => {
  for (const mode of [0o777, 0o775]) {
    const dir = path.join(t.testdir(), `open-${mode.toString(8)}`);
    fs.mkdirSync(dir, { mode: 0o711 });
    writeAer(dir, aerReferenceOf(invBefore, PREVIOUS_RUN, '41'));
    fs.chmodSync(dir, mode); // opened after root wrote (writeAer refuses such a directory)
    const who = mode === 0o777 ? 'anyone' : 'its group';
    t.same([readLastAer(dir).ref, readLastAer(dir).why], [null, `the previous run's counters refused: ${dir} is writable by ${who} (mode 0${mode.toString(8)})`]);
    t.same([takeJobAer(dir, '41').ref, takeJobAer(dir, '41').why.split(': ')[0]], [null, "the job's Prolog's counters refused"]);
    t.same(gpuFinding(readLastAer(dir)), ['pass aer-ok none'], 'growth unknown: a pass that says so, never a fail');
  }
});

t.test('writing replaces a link planted at the name, never writes through it', async (t) => {
  const dir = stateDir(t);
  const victim = path.join(path.dirname(dir), 'victim');
  fs.writeFileSync(victim, 'keep');
  fs.symlinkSync(victim, path.join(dir, AER_LAST));
  writeAer(dir, aerReferenceOf(invBefore, PREVIOUS_RUN, null));
  t.equal(fs.readFileSync(victim, 'utf8'), 'keep', 'the link target is untouched');
  t.notOk(fs.lstatSync(path.join(dir, AER_LAST)).isSymbolicLink(), 'the name is now our file');
  t.ok(readLastAer(dir).ref, 'and reads back');
});

t.test("a Prolog with a job writes one file under both names, each replacing a planted link, never writing through it", async (t) => {
  const dir = stateDir(t);
  const victims = ['victim-last', 'victim-job'].map((n) => path.join(path.dirname(dir), n));
  for (const v of victims) fs.writeFileSync(v, 'keep');
  fs.symlinkSync(victims[0]!, path.join(dir, AER_LAST));
  fs.symlinkSync(victims[1]!, path.join(dir, aerJobFile('42')));
  const ref = aerReferenceOf(invBefore, PREVIOUS_RUN, '42');
  t.same(writeAer(dir, ref), [AER_LAST, 'aer-job-42.json']);
  for (const v of victims) t.equal(fs.readFileSync(v, 'utf8'), 'keep', `${path.basename(v)}: the link target is untouched`);
  const [last, job] = [AER_LAST, aerJobFile('42')].map((n) => fs.lstatSync(path.join(dir, n)));
  t.ok(last!.isFile() && job!.isFile(), 'both names are regular files now');
  t.equal(last!.ino, job!.ino, 'one file under two names: written once');
  t.equal(last!.mode & 0o777, 0o600, 'root only');
  t.same(fs.readdirSync(dir).filter((n) => n.startsWith('.')), [], 'no temporary name left');
  t.same(readLastAer(dir).ref, ref, 'the next Prolog reads it');
  t.same(takeJobAer(dir, '42').ref, ref, "the job's Epilog reads it and removes its name");
  t.same(readLastAer(dir).ref, ref, "the last Prolog's counters stay after the job's name is gone");
  writeAer(dir, aerReferenceOf(invAfter, THIS_RUN, '43'));
  t.equal(readLastAer(dir).ref?.job, '43', 'the next Prolog replaces it');
  t.notOk(fs.existsSync(path.join(dir, aerJobFile('42'))), 'and the taken job name stays gone');
});

t.test('a counter that went down, or another boot, resets the reference and says so', async (t) => {
  const dir = stateDir(t);
  writeAer(dir, aerReferenceOf(invAfter, PREVIOUS_RUN, null));
  t.same(runCheck('pcie-aer', invBefore, null, { aerHistory: readLastAer(dir), now: THIS_RUN }).filter((f) => f.subject === P0.gpu).map((f) => f.code), ['aer-reset'], 'RxErr 7 → 0');
  writeAer(dir, { ...aerReferenceOf(invBefore, PREVIOUS_RUN, null), boot: 'another-boot' });
  const rebooted = { ...invAfter, bootId: present('this-boot') };
  const f = runCheck('pcie-aer', rebooted, null, { aerHistory: readLastAer(dir), now: THIS_RUN }).find((x) => x.subject === P0.gpu)!;
  t.equal(f.code, 'aer-reset', 'growth across a reboot is not growth');
  t.equal(f.message, 'no uncorrectable error (fatal counter, non-fatal counter, UESta); another boot since the previous run (2025-06-02T09:00:00.000Z): reference reset');
});

t.test('the last reference is kept from a run that read the counters earlier, and only from that run', async (t) => {
  const later = aerReferenceOf(invAfter, THIS_RUN, null);
  const earlier = aerReferenceOf(invBefore, PREVIOUS_RUN, '44');
  const dir = stateDir(t);
  t.same(writeAer(dir, later), [AER_LAST]);
  t.same(writeAer(dir, earlier), ['aer-job-44.json'], 'read an hour before the one on disk (same boot): only the job\'s name written');
  t.same(readLastAer(dir).ref, later, 'the later counters stay');
  t.same(writeAer(dir, { ...earlier, time: later.time }), [AER_LAST, 'aer-job-44.json'], 'read at the same time as the one on disk: not older, written');
  const other = path.join(t.testdir(), 'other');
  fs.mkdirSync(other, { mode: 0o711 });
  t.same(writeAer(other, { ...later, boot: 'another-boot' }), [AER_LAST]);
  t.same(writeAer(other, earlier), [AER_LAST, 'aer-job-44.json'], 'the one on disk of another boot: written over');
  t.same(readLastAer(other).ref, earlier);
  const ahead = path.join(t.testdir(), 'ahead');
  fs.mkdirSync(ahead, { mode: 0o711 });
  t.same(writeAer(ahead, { ...later, time: new Date(Date.now() + 3_600_000).toISOString() }), [AER_LAST]);
  t.same(writeAer(ahead, earlier), [AER_LAST, 'aer-job-44.json'], 'the one on disk ahead of the clock (a clock stepped back since): written over');
  t.same(readLastAer(ahead).ref, earlier);
});

t.test('job records whose Epilog never came are pruned beyond the newest 64', async (t) => {
  const dir = stateDir(t);
  const ref = aerReferenceOf(invBefore, PREVIOUS_RUN, null);
  for (let j = 1; j <= 70; j++) {
    writeAer(dir, { ...ref, job: String(j) });
    fs.utimesSync(path.join(dir, aerJobFile(String(j))), j * 1000, j * 1000);
  }
  t.equal(pruneJobAer(dir), 6);
  const left = fs.readdirSync(dir).filter((n) => n.startsWith('aer-job-'));
  t.equal(left.length, 64);
  t.notOk(left.includes('aer-job-6.json'), 'the oldest went');
  t.ok(left.includes('aer-job-7.json') && left.includes('aer-job-70.json'), 'the newest stay');
});
