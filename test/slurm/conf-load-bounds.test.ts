// slurm.conf as the Prolog reads it (Slurm's GPU numbering, after the verdict) is bounded whatever its Includes do:
// two Includes of the next file at each of 16 levels (2^16 inclusions), a file that includes itself twice, or a large
// file included many times. Each file is read once, at most MAX_FILES are taken in and MAX_TEXT characters over all:
// past that a problem, so the numbering is "not derived", never guessed, and the Prolog ends at once.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { makeGateEnv } from '../helpers/gate-env.js';
import { FsHost } from '../../src/host/fs-host.js';
import type { Host } from '../../src/host/host.js';
import { loadConf, MAX_FILES } from '../../src/slurm/conf-load.js';

const CONF = '/etc/slurm/slurm.conf';

/** A root holding `files`, and a Host over it that counts its readText calls. */
function rooted(t: Test, files: Record<string, string>): { host: Host; reads: () => number } {
  const root = t.testdir();
  for (const [f, text] of Object.entries(files)) {
    mkdirSync(path.join(root, path.dirname(f)), { recursive: true });
    writeFileSync(path.join(root, f), text);
  }
  const fs = new FsHost(root);
  let n = 0;
  const host = Object.create(fs) as Host;
  host.readText = (p: string) => {
    n++;
    return fs.readText(p);
  };
  return { host, reads: () => n };
}

/** slurm.conf naming node vm, then two Includes of a1.conf; each aK.conf two of a(K+1).conf, up to a16.conf, the leaf. */
function fanOut(leaf: string): Record<string, string> {
  const files: Record<string, string> = { [CONF]: 'ClusterName=c\nNodeName=vm Gres=gpu:1 CPUs=4\nInclude a1.conf\nInclude a1.conf\n' };
  for (let i = 1; i < 16; i++) files[`/etc/slurm/a${i}.conf`] = `Include a${i + 1}.conf\nInclude a${i + 1}.conf\n`;
  files['/etc/slurm/a16.conf'] = leaf;
  return files;
}

const tooMany = (file: string, line: number, inc: string): string => `${file}:${line}: Include ${inc}: more than ${MAX_FILES} files included in all (an Include loop?), not read`;

t.test('an Include fan-out (2^16 inclusions): each file read once, a problem past MAX_FILES', async (t) => {
  const { host, reads } = rooted(t, fanOut('# leaf\n'));
  const c = await loadConf(host, CONF);
  t.equal(reads(), 17, 'slurm.conf and a1..a16, once each (before: 131,071 reads)');
  t.equal(c.files.length, MAX_FILES);
  t.equal(c.problems.length > 0, true);
  // Depth first, as Slurm reads them: slurm.conf and a1..a16 (17), then the second Includes climbing back; the 65th
  // file taken in is a14.conf's second Include of a15.conf.
  t.equal(c.problems[0], tooMany('/etc/slurm/a14.conf', 2, '/etc/slurm/a15.conf'));
  t.same(c.problems.filter((p) => !p.endsWith(`more than ${MAX_FILES} files included in all (an Include loop?), not read`)), [], 'every problem that one');
});

t.test('a slurm.conf that includes itself twice: read once, a problem, never an unbounded heap', async (t) => {
  const body = Array.from({ length: 1000 }, (_, i) => `NodeName=n${i} CPUs=4 Gres=gpu:8\n`).join('');
  const { host, reads } = rooted(t, { [CONF]: `ClusterName=c\nNodeName=vm Gres=gpu:1\n${body}Include ${CONF}\nInclude ${CONF}\n` });
  const c = await loadConf(host, CONF);
  t.equal(reads(), 1);
  t.equal(c.files.length, MAX_FILES);
  t.equal(c.entries.length, MAX_FILES * 1002, 'what was taken in, as Slurm would have it so far');
  // Depth first: the 17th file reaches the nesting bound (its two Includes said), then the climb back takes files
  // until the 65th, a second Include (line 1004).
  t.same(c.problems.slice(0, 2), [1003, 1004].map((l) => `${CONF}:${l}: Include ${CONF}: nested more than 16 deep (a loop?)`));
  t.equal(c.problems.find((p) => p.includes('files included in all')), tooMany(CONF, 1004, CONF));
});

t.test('a large file included many times: a problem past 16 MiB in all', async (t) => {
  const big = `# ${'x'.repeat(1 << 20)}\n`;
  const includes = Array.from({ length: 20 }, () => 'Include big.conf\n').join('');
  const { host, reads } = rooted(t, { [CONF]: `ClusterName=c\n${includes}`, '/etc/slurm/big.conf': big });
  const c = await loadConf(host, CONF);
  t.equal(reads(), 2);
  t.equal(c.files.length, 16, 'slurm.conf and 15 of big.conf: 16 MiB');
  t.equal(c.problems[0], `${CONF}:17: Include /etc/slurm/big.conf: more than 16 MiB included in all, not read`);
});

t.test('a site config that includes one file from two places: read once, taken twice, no problem', async (t) => {
  const { host, reads } = rooted(t, {
    [CONF]: 'ClusterName=c\nInclude nodes.conf\nInclude parts.conf\n',
    '/etc/slurm/nodes.conf': 'Include common.conf\nNodeName=vm Gres=gpu:8\n',
    '/etc/slurm/parts.conf': 'Include common.conf\nPartitionName=p Nodes=vm\n',
    '/etc/slurm/common.conf': 'TaskPlugin=task/affinity\n',
  });
  const c = await loadConf(host, CONF);
  t.equal(reads(), 4);
  t.same(c.files, [CONF, '/etc/slurm/nodes.conf', '/etc/slurm/common.conf', '/etc/slurm/parts.conf', '/etc/slurm/common.conf']);
  t.same(c.problems, []);
});

t.test('the Prolog with the fan-out: healthy at once, and its record says the numbering is not derived', async (t) => {
  const e = makeGateEnv();
  for (const [f, text] of Object.entries({ ...fanOut(`# ${'x'.repeat(99)}\n`.repeat(640)), '/etc/slurm/gres.conf': 'AutoDetect=nvml\n' })) {
    mkdirSync(path.join(e.tree, path.dirname(f)), { recursive: true });
    writeFileSync(path.join(e.tree, f), text);
  }
  const r = e.prolog([], { SLURM_JOB_UID: String(process.getuid!()), SLURM_JOB_GID: String(process.getgid!()), SLURM_CONF: CONF });
  t.equal(r.code, 0, r.stderr);
  const signed = JSON.parse(readFileSync(path.join(e.dir, 'run/job-42/prolog.json'), 'utf8')) as { payload: string };
  const record = JSON.parse(signed.payload) as { slurmGpus?: { ok: boolean; why?: string } };
  const why = `/etc/slurm/gres.conf AutoDetect=nvml, and slurm.conf's Gres= for this node cannot be told (${tooMany('/etc/slurm/a14.conf', 2, '/etc/slurm/a15.conf')}): which GPUs slurmd keeps depends on it: Slurm's numbering is not derived for it`;
  t.same(record.slurmGpus, { ok: false, why });
  const run = JSON.parse(readFileSync(e.log, 'utf8').trim().split('\n').pop()!) as { msg: string; durationMs: unknown; afterMs: unknown };
  t.same([run.msg, typeof run.durationMs, typeof run.afterMs], ['gdrgate run', 'number', 'number'], 'the run line times the record apart (afterMs)');
});
