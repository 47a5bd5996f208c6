// The gate's one call: recordJobState from the inventory the Prolog already has. Never throws, cheap.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { FsHost } from '../../src/host/fs-host.js';
import { buildInventory } from '../../src/inventory/build.js';
import { MAX_GPU_IDS, parseJobGpus, recordJobState } from '../../src/state/prolog.js';
import { readPrologState } from '../../src/state/read.js';
import { KEY_FILE, PUB_FILE } from '../../src/state/sign.js';
import { jobRoot } from '../task/_roots.js';
import { JOB_UID, tmpStateDir } from './_state.js';

const isRoot = process.getuid?.() === 0;

t.test('SLURM_JOB_GPUS', async (t) => {
  t.same(parseJobGpus('0,1,3'), [0, 1, 3]);
  t.equal(parseJobGpus(undefined), null);
  t.equal(parseJobGpus(''), null);
  t.equal(parseJobGpus('0-3'), null, 'a range is not what Slurm exports there');
  t.equal(parseJobGpus('1,../2'), null);
  t.strictSame(parseJobGpus('3,1,3,0'), [3, 1, 0], 'each number once');
  // A job's own facts reach the agent: a list of 60,000 (240 KB) held its one thread 3.5 s.
  t.equal(parseJobGpus(Array.from({ length: MAX_GPU_IDS + 1 }, (_, i) => i).join(',')), null, `${MAX_GPU_IDS + 1} numbers: no list of Slurm's`);
  t.equal(parseJobGpus(Array.from({ length: 60_000 }, (_, i) => i % 10000).join(',')), null, 'refused before it is split');
  t.equal(parseJobGpus(Array.from({ length: MAX_GPU_IDS }, (_, i) => i).join(','))?.length, MAX_GPU_IDS);
});

t.test('records what the Prolog saw; the key is made once, not per Prolog', { skip: !isRoot && 'needs root' }, async (t) => {
  const root = await jobRoot();
  const host = new FsHost(root);
  const inv = await buildInventory(host);
  const { stateDir } = tmpStateDir();
  const env = { SLURM_JOB_ID: '500', SLURM_JOB_UID: String(JOB_UID), SLURM_JOB_GID: String(JOB_UID), SLURM_JOB_GPUS: '2,3' };
  // What made a Prolog's record cost more than a few ms is work, and work shows in files: a key generated (a new
  // signing.key) or its public half derived and rewritten (a new signing.pub). Counted, not timed: the first run
  // makes both, the next six touch neither.
  const ident = (f: string): string => {
    const st = fs.statSync(path.join(stateDir, f));
    return `${st.ino}:${st.mtimeMs}`;
  };
  const seen: string[] = [];
  for (let i = 0; i < 7; i++) {
    const r = await recordJobState({ stateDir, env: { ...env, SLURM_JOB_ID: String(500 + i) }, node: 'gpu001', host, inv, memlockMin: 'unlimited' });
    if (!r.ok) t.fail(r.why);
    seen.push(`${ident(KEY_FILE)} ${ident(PUB_FILE)}`);
  }
  t.equal(new Set(seen).size, 1, 'signing.key and signing.pub: written by the first Prolog only');
  const r = readPrologState(stateDir, { job: '500', uid: JOB_UID, node: 'gpu001' });
  t.equal(r.status, 'trusted');
  if (r.status === 'trusted') {
    t.same([r.state.hcas, r.state.uverbs, r.state.jobGpus], [['mlx5_0', 'mlx5_1', 'mlx5_2', 'mlx5_3'], ['uverbs0', 'uverbs1', 'uverbs2', 'uverbs3'], [2, 3]], 'host view recorded');
    t.same([r.state.memlock, r.state.memlockMin], [{ who: 'self', soft: 'unlimited', hard: 'unlimited' }, 'unlimited']);
  }
});

t.test('never throws', async (t) => {
  const root = await jobRoot();
  const host = new FsHost(root);
  const inv = await buildInventory(host);
  const { base } = tmpStateDir();
  const file = path.join(base, 'file');
  fs.writeFileSync(file, '');
  const bad = [
    [{}, 'skip', 'SLURM_JOB_ID null is not a job id'],
    [{ SLURM_JOB_ID: '../1', SLURM_JOB_UID: '1' }, 'warn', 'SLURM_JOB_ID "../1" is not a job id'],
    [{ SLURM_JOB_ID: '1' }, 'warn', 'SLURM_JOB_UID null is not a uid'],
    [{ SLURM_JOB_ID: '1', SLURM_JOB_UID: 'root' }, 'warn', 'SLURM_JOB_UID "root" is not a uid'],
  ] as const;
  for (const [env, level, why] of bad) t.same(await recordJobState({ stateDir: path.join(base, 'run'), env, node: 'n', host, inv, memlockMin: null }), { ok: false, level, why }, `${JSON.stringify(env)}: ${level}`);
  t.same(await recordJobState({ stateDir: path.join(file, 'run'), env: { SLURM_JOB_ID: '1', SLURM_JOB_UID: '0' }, node: 'n', host, inv, memlockMin: null }), { ok: false, level: 'error', why: `ENOTDIR: not a directory, mkdir '${path.join(file, 'run')}'` }, 'stateDir under a file: error');
  t.notOk(fs.existsSync(path.join(base, 'run')), 'nothing created for a bad id');
});

t.test('a /dev listing that fails (not absent) writes no record: one listing no verbs device would hide them all from the job', { skip: !isRoot && 'needs root' }, async (t) => {
  const root = await jobRoot();
  fs.rmSync(path.join(root, 'dev/infiniband'), { recursive: true, force: true });
  fs.symlinkSync('infiniband', path.join(root, 'dev/infiniband'));
  const host = new FsHost(root);
  const inv = await buildInventory(host);
  const { stateDir } = tmpStateDir();
  const r = await recordJobState({ stateDir, env: { SLURM_JOB_ID: '600', SLURM_JOB_UID: String(JOB_UID) }, node: 'gpu001', host, inv, memlockMin: 'unlimited' });
  t.same(r.ok ? 'written' : [r.level, r.why.replace(/\(.*\)/, '(…)')], ['error', '/dev/infiniband could not be listed (…): no job record, since it would list none of its devices']);
  t.equal(fs.existsSync(path.join(stateDir, 'job-600')), false, 'no job directory');
});
