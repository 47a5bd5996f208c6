// Per-job state: ids that may form a path, the signed handoff Prolog → TaskProlog, and every way a job's owner
// (or another user) could try to read, forge or redirect it.
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { jobDirName, MAX_STATE_BYTES, parseId, parseJobId, PROLOG_FILE, PROLOG_FORMAT } from '../../src/state/names.js';
import { writePrologState } from '../../src/state/prolog.js';
import { readPrologState } from '../../src/state/read.js';
import { KEY_FILE, loadOrCreateKey, PUB_FILE, signText } from '../../src/state/sign.js';
import { JOB_UID, sampleState, tmpStateDir } from './_state.js';

const isRoot = process.getuid?.() === 0;
const mode = (p: string): number => fs.lstatSync(p).mode & 0o7777;
const want = { job: '1234', uid: JOB_UID, node: 'gpu001' };

t.test('job ids and uids: digits only before they form a path', async (t) => {
  for (const [s, ok] of [['1234', true], ['1', true], ['4294967294', true], ['', false], ['../x', false], ['0', false], ['01', false], ['12a', false], ['1/2', false], ['12345678901', false], [' 12', false], ['-1', false]] as const)
    t.equal(parseJobId(s) !== null, ok, `job id ${JSON.stringify(s)} ${ok ? 'accepted' : 'refused'}`);
  t.equal(parseJobId(undefined), null, 'absent job id');
  for (const [s, v] of [['0', 0], ['1001', 1001], ['4294967294', 4294967294], ['4294967295', null], ['-1', null], ['', null], ['1e3', null], ['010', null]] as const)
    t.equal(parseId(s), v, `uid ${JSON.stringify(s)} → ${v}`);
  t.throws(() => jobDirName('../etc'), /not a job id/, 'jobDirName refuses a path');
});

t.test('signed state: written, handed to the user, verified', { skip: !isRoot && 'chown to the job uid needs root' }, async (t) => {
  const { stateDir } = tmpStateDir();
  const file = writePrologState(stateDir, sampleState(), 4343);
  const dir = path.dirname(file);
  t.equal(mode(stateDir), 0o711, 'stateDir 0711: nobody but root may list it');
  t.equal(mode(path.join(stateDir, KEY_FILE)), 0o600, 'signing.key 0600');
  t.equal(fs.lstatSync(path.join(stateDir, KEY_FILE)).uid, 0, 'signing.key owned by root');
  t.equal(mode(path.join(stateDir, PUB_FILE)), 0o644, 'signing.pub 0644');
  t.equal(mode(dir), 0o700, 'job dir 0700: no other user may list or read it');
  t.same([fs.lstatSync(dir).uid, fs.lstatSync(dir).gid], [JOB_UID, 4343], "job dir belongs to the job's uid and gid");
  t.equal(mode(file), 0o444, 'prolog.json read-only');
  t.equal(fs.lstatSync(file).uid, 0, 'prolog.json owned by root');
  const r = readPrologState(stateDir, want);
  t.equal(r.status, 'trusted', 'the task verifies it');
  if (r.status === 'trusted') t.same(r.state, sampleState(), 'and gets back exactly what the Prolog recorded');
  // Same key on the next job: generated once, reused.
  const key1 = fs.readFileSync(path.join(stateDir, KEY_FILE), 'utf8');
  writePrologState(stateDir, sampleState({ job: '1235' }), null);
  t.equal(fs.readFileSync(path.join(stateDir, KEY_FILE), 'utf8'), key1, 'the key is generated once and kept');
  t.equal(readPrologState(stateDir, { ...want, job: '1235' }).status, 'trusted', 'second job verifies too');
  // A requeued job (same id) gets a fresh directory, whatever the user left in the old one.
  fs.writeFileSync(path.join(dir, 'junk'), 'x');
  writePrologState(stateDir, sampleState(), null);
  t.notOk(fs.existsSync(path.join(dir, 'junk')), 'requeue: the old directory is replaced, not reused');
});

t.test('a record the TaskProlog could not read is never written: the adapters go first, then nothing', { skip: !isRoot && 'chown to the job uid needs root' }, async (t) => {
  // An SR-IOV node (test/gen/topologies/hgx-h100-sriov.ts: 2,048 RDMA devices) recorded every adapter: 211,729 bytes
  // against the reader's 64 KiB, and every task read "untrusted" (a review found it).
  const vf = (k: number): string => `mlx5_${k}`;
  const names = Array.from({ length: 1200 }, (_, k) => vf(k));
  const adapters = names.map((name, k) => ({ name, bdf: `0000:${(0x10 + (k >> 5)).toString(16)}:${(k & 31).toString(16).padStart(2, '0')}.1`, uverbs: `uverbs${k}` }));
  const { stateDir } = tmpStateDir();
  const file = writePrologState(stateDir, sampleState({ hcas: names, uverbs: names.map((_, k) => `uverbs${k}`), adapters }), 4343);
  t.ok(fs.statSync(file).size <= MAX_STATE_BYTES, `written: ${fs.statSync(file).size} bytes, within the ${MAX_STATE_BYTES} the reader takes`);
  const r = readPrologState(stateDir, want);
  t.strictSame([r.status, r.status === 'trusted' ? r.state.adapters : 'none', r.status === 'trusted' ? r.state.hcas.length : 0], ['trusted', undefined, 1200], 'trusted, without the adapters (the TaskProlog then requires every adapter)');
  const { stateDir: big } = tmpStateDir();
  const huge = Array.from({ length: 6000 }, (_, k) => vf(k));
  t.throws(() => writePrologState(big, sampleState({ hcas: huge, uverbs: huge }), 4343), /^the job's record would take \d+ bytes, more than the 65536 the TaskProlog reads: not written$/);
  t.equal(fs.existsSync(path.join(big, jobDirName('1234'))), false, 'no directory left for it: the tasks read "no record" (a skip)');
});

t.test('tampering is reported, never trusted', { skip: !isRoot && 'needs root' }, async (t) => {
  const fresh = () => {
    const { base, stateDir } = tmpStateDir();
    const file = writePrologState(stateDir, sampleState(), null);
    const env = JSON.parse(fs.readFileSync(file, 'utf8')) as { format: string; payload: string; signature: string };
    const put = (text: string): void => {
      fs.rmSync(file);
      fs.writeFileSync(file, text);
    };
    return { base, stateDir, file, dir: path.dirname(file), env, put };
  };
  const untrusted = (stateDir: string, why: string, msg: string, w = want): void => {
    const r = readPrologState(stateDir, w);
    t.equal(r.status, 'untrusted', msg);
    if (r.status !== 'trusted') t.equal(r.why, why, `  why: ${r.why}`);
  };

  let s = fresh();
  s.put(JSON.stringify({ ...s.env, payload: s.env.payload.replace('"memlockMin":"unlimited"', '"memlockMin":65536') }));
  untrusted(s.stateDir, 'prolog.json signature does not verify (changed after the Prolog wrote it, or signed with another key)', 'a changed field (memlockMin)');

  s = fresh();
  const i = s.env.payload.indexOf('mlx5_1');
  s.put(JSON.stringify({ ...s.env, payload: s.env.payload.slice(0, i) + 'mlx5_9' + s.env.payload.slice(i + 6) }));
  untrusted(s.stateDir, 'prolog.json signature does not verify (changed after the Prolog wrote it, or signed with another key)', 'one changed byte');

  s = fresh();
  const forged = JSON.stringify({ ...sampleState(), hcas: [] });
  const other = generateKeyPairSync('ed25519').privateKey;
  s.put(JSON.stringify({ format: PROLOG_FORMAT, payload: forged, signature: signText(forged, other) }));
  untrusted(s.stateDir, 'prolog.json signature does not verify (changed after the Prolog wrote it, or signed with another key)', 're-signed with a different key');

  s = fresh();
  s.put(JSON.stringify({ ...s.env, signature: 'not base64!' }));
  untrusted(s.stateDir, 'prolog.json signature does not verify (changed after the Prolog wrote it, or signed with another key)', 'garbage signature');

  s = fresh();
  s.put('{"format":"something else"}');
  untrusted(s.stateDir, 'prolog.json is not a signed gdrgate state (gdrgate-prolog-state/1)', 'not our format');

  s = fresh();
  s.put('{');
  untrusted(s.stateDir, 'prolog.json is not JSON', 'not JSON');

  // Another job of the same user, validly signed, copied over this job's record.
  s = fresh();
  const otherJob = writePrologState(s.stateDir, sampleState({ job: '999' }), null);
  s.put(fs.readFileSync(otherJob, 'utf8'));
  untrusted(s.stateDir, 'prolog.json is the record of job 999, not of job 1234', "another job's state copied in");

  s = fresh();
  fs.chownSync(s.dir, 5000, -1);
  untrusted(s.stateDir, `${s.dir} belongs to uid 5000, not to this job's user (uid 4242)`, 'a job dir owned by someone else', want);
  untrusted(s.stateDir, 'prolog.json is the record of uid 4242, not of uid 5000', "uid 5000 holding uid 4242's record", { ...want, uid: 5000 });

  s = fresh();
  untrusted(s.stateDir, 'prolog.json was written on node gpu001, not on gpu002', 'a state from another node', { ...want, node: 'gpu002' });

  s = fresh();
  const target = path.join(s.base, 'elsewhere.json');
  fs.copyFileSync(s.file, target);
  fs.rmSync(s.file);
  fs.symlinkSync(target, s.file);
  untrusted(s.stateDir, `${s.file} is a symbolic link`, 'prolog.json replaced by a symlink (never followed)');

  s = fresh();
  fs.rmSync(s.file);
  execFileSync('mkfifo', [s.file]);
  untrusted(s.stateDir, `${s.file} is not a regular file`, 'a FIFO at prolog.json: refused without blocking');

  s = fresh();
  s.put(' '.repeat(70 * 1024));
  untrusted(s.stateDir, `${s.file} is larger than 65536 bytes`, 'an oversized prolog.json');

  // A symlink planted at job-<id> (only root can write stateDir, but say an admin's script did).
  s = fresh();
  const victim = path.join(s.base, 'victim');
  fs.mkdirSync(victim);
  fs.writeFileSync(path.join(victim, 'keep'), 'precious');
  fs.renameSync(s.dir, path.join(s.base, 'moved'));
  fs.symlinkSync(path.join(s.base, 'moved'), s.dir);
  untrusted(s.stateDir, `${s.dir} is a symbolic link`, 'job-<id> is a symlink: not followed by the task');
  fs.rmSync(s.dir);
  fs.symlinkSync(victim, s.dir);
  writePrologState(s.stateDir, sampleState(), null);
  t.ok(fs.lstatSync(s.dir).isDirectory(), 'the Prolog replaces a symlink at job-<id> by a real directory');
  t.equal(fs.readFileSync(path.join(victim, 'keep'), 'utf8'), 'precious', "and never touched the link's target");
  t.equal(readPrologState(s.stateDir, want).status, 'trusted', 'the new state verifies');
});

t.test('missing and unverifiable states', { skip: !isRoot && 'needs root' }, async (t) => {
  const { stateDir } = tmpStateDir();
  t.same(readPrologState(stateDir, want), { status: 'missing', why: `${path.join(stateDir, 'job-1234')} does not exist (the Prolog recorded nothing for this job)` }, 'no state dir at all');
  const file = writePrologState(stateDir, sampleState(), null);
  fs.rmSync(file);
  t.same(readPrologState(stateDir, want), { status: 'missing', why: `${file}: no such file (ENOENT)` }, 'prolog.json deleted by the user');
  writePrologState(stateDir, sampleState(), null);
  fs.rmSync(path.join(stateDir, PUB_FILE));
  t.same(readPrologState(stateDir, want), { status: 'unreadable', why: `cannot verify: ${path.join(stateDir, PUB_FILE)}: no such file (ENOENT)` }, 'signing.pub missing');
  loadOrCreateKey(stateDir);
  t.equal(readPrologState(stateDir, want).status, 'trusted', 'signing.pub rewritten from the key on the next Prolog');
  fs.chmodSync(path.join(stateDir, PUB_FILE), 0o666);
  t.same(readPrologState(stateDir, want), { status: 'untrusted', why: `cannot verify: ${path.join(stateDir, PUB_FILE)} is writable by others (mode 0666)` }, 'a world-writable signing.pub is not a trust anchor');
  // The directory the Prolog begins before its answer, whose record never came: nothing recorded, not tampering.
  fs.rmSync(path.join(stateDir, jobDirName(want.job)), { recursive: true });
  fs.mkdirSync(path.join(stateDir, jobDirName(want.job)), { mode: 0o700 });
  t.same(readPrologState(stateDir, want), { status: 'missing', why: `${stateDir}/${jobDirName(want.job)} is still root's: the Prolog began it and wrote no record into it` });
  fs.chmodSync(path.join(stateDir, jobDirName(want.job)), 0o755);
  t.same(readPrologState(stateDir, want), { status: 'untrusted', why: `${stateDir}/${jobDirName(want.job)} belongs to uid 0, not to this job's user (uid ${want.uid})` }, 'root\'s but not as begun: untrusted');
});

t.test('signing key: created once, refused when exposed', { skip: !isRoot && 'needs root' }, async (t) => {
  const { stateDir } = tmpStateDir();
  fs.mkdirSync(stateDir, { mode: 0o711 });
  const k1 = loadOrCreateKey(stateDir);
  const k2 = loadOrCreateKey(stateDir);
  t.same(k1.export({ format: 'jwk' }), k2.export({ format: 'jwk' }), 'the same key on every run');
  t.same(fs.readdirSync(stateDir).sort(), [KEY_FILE, PUB_FILE], 'no temporary file left behind');
  fs.chmodSync(path.join(stateDir, KEY_FILE), 0o644);
  t.throws(() => loadOrCreateKey(stateDir), /mode 0644/, 'a readable key is refused (it may have leaked)');
  fs.chmodSync(path.join(stateDir, KEY_FILE), 0o600);
  fs.chownSync(path.join(stateDir, KEY_FILE), JOB_UID, -1);
  t.throws(() => loadOrCreateKey(stateDir), /owned by uid 4242/, "a key owned by a user is refused");
  fs.rmSync(path.join(stateDir, KEY_FILE));
  fs.symlinkSync('/etc/hostname', path.join(stateDir, KEY_FILE));
  t.throws(() => loadOrCreateKey(stateDir), /symbolic link/, 'a symlink at signing.key is refused, not followed');
});

t.test('stateDir itself', { skip: !isRoot && 'needs root' }, async (t) => {
  const { base, stateDir } = tmpStateDir();
  fs.mkdirSync(path.join(base, 'real'));
  fs.symlinkSync(path.join(base, 'real'), stateDir);
  t.throws(() => writePrologState(stateDir, sampleState(), null), /not a directory/, 'a symlinked stateDir is refused');
  const open = path.join(base, 'open');
  fs.mkdirSync(open, { mode: 0o777 });
  fs.chmodSync(open, 0o777);
  t.throws(() => writePrologState(path.join(open, 'run'), sampleState(), null), /^\/.*\/open\/run would lie where another user could redirect it: \/.*\/open is writable by anyone \(mode 777\)$/, 'under a world-writable parent');
  const s2 = path.join(base, 'loose');
  fs.mkdirSync(s2, { mode: 0o755 });
  writePrologState(s2, sampleState(), null);
  t.equal(mode(s2), 0o711, 'an existing stateDir is tightened to 0711');
  // One anyone may write in (a sticky /tmp named as stateDir by mistake) is refused as found, its mode never changed;
  // a group-writable one made by hand (umask 002) is tightened as before.
  for (const [m, what] of [[0o1777, 'writable by anyone'], [0o777, 'writable by anyone'], [0o1755, 'a sticky directory']] as const) {
    const shared = path.join(base, `shared-${m.toString(8)}`);
    fs.mkdirSync(shared);
    fs.chmodSync(shared, m);
    t.throws(() => writePrologState(shared, sampleState(), null), new RegExp(`^stateDir ${shared} is ${what} \\(mode ${m.toString(8)}\\): a place others share, refused and not changed; name a directory of its own \\(default /run/gdrgate\\)$`), `mode ${m.toString(8)}: refused`);
    t.same([mode(shared), fs.readdirSync(shared)], [m, []], `mode ${m.toString(8)}: left as it was, nothing made in it`);
  }
  const grouped = path.join(base, 'grouped');
  fs.mkdirSync(grouped);
  fs.chmodSync(grouped, 0o775);
  writePrologState(grouped, sampleState(), null);
  t.equal(mode(grouped), 0o711, 'a group-writable stateDir is tightened to 0711');
  t.throws(() => writePrologState(stateDir.replace(/^\//, ''), sampleState(), null), /absolute/, 'relative stateDir refused');
  t.notOk(fs.existsSync(path.join(base, 'real', PROLOG_FILE)), 'nothing written through the link');
});
