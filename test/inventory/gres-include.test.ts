// gres.conf's Include lines as slurmd follows them (parse_config.c _parse_include_directive): the included lines where
// the Include stands, so slurmd's order (every Name= line of all the files, then the NodeName= ones: gres.c
// _parse_gres_conf_locked) numbers the job's GPUs; a relative name from gres.conf's directory; a refusal names the
// included file. On real files under a capture root.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { FsHost } from '../../src/host/fs-host.js';
import { present } from '../../src/model/fact.js';
import { readGres } from '../../src/inventory/placement.js';
import { slurmGpuOrder } from '../../src/state/slurm-gpus.js';

const GRES = '/etc/slurm/gres.conf';
/** Four GPUs whose minors are in PCI bus order. */
const MINORS = new Map([0, 1, 2, 3].map((i) => [i, `0000:${(0x18 + 0x10 * i).toString(16)}:00.0`] as const));

function root(t: Test, files: Record<string, string>): FsHost {
  const dir = t.testdir();
  for (const [f, text] of Object.entries(files)) {
    mkdirSync(path.join(dir, path.dirname(f)), { recursive: true });
    writeFileSync(path.join(dir, f), text);
  }
  return new FsHost(dir);
}

/** Slurm's numbering for node n1 from what readGres read: the minors in job index order, or why not. */
async function numbering(t: Test, files: Record<string, string>): Promise<number[] | string> {
  const g = await readGres(root(t, files), GRES);
  const o = slurmGpuOrder({ gres: g, gresPath: GRES, minors: present(MINORS), node: 'n1', asked: present({ count: 4, untyped: true, types: [] }) });
  return o.ok ? o.gpus.map((x) => x.minor) : o.why;
}

t.test('the lines of an included file stand where its Include does; the Name= lines of every file come first', async (t) => {
  const files = {
    [GRES]: 'NodeName=n1 Name=gpu File=/dev/nvidia[3,2]\nInclude gres.d/first.conf\n',
    '/etc/slurm/gres.d/first.conf': 'Name=gpu File=/dev/nvidia1\nInclude /etc/slurm/gres.d/second.conf\n',
    '/etc/slurm/gres.d/second.conf': 'Name=gpu File=/dev/nvidia0\n',
  };
  t.same(await numbering(t, files), [1, 0, 3, 2], 'nvidia1, nvidia0 (the Name= lines, in the order read), then the NodeName= line');
  const g = await readGres(root(t, files), GRES);
  t.same(g.state === 'present' ? g.value.lines.map((l) => [l.file ?? null, l.line]) : g, [
    [null, 1],
    ['/etc/slurm/gres.d/first.conf', 1],
    ['/etc/slurm/gres.d/second.conf', 1],
  ]);
});

t.test('a line the numbering cannot take, in an included file: the refusal names that file and line', async (t) => {
  const why = await numbering(t, { [GRES]: 'Include gpus.conf\n', '/etc/slurm/gpus.conf': '# the GPUs\nName=gpu File=/dev/nvidia[0-1] Count=3\n' });
  t.equal(why, "/etc/slurm/gpus.conf line 2 (Count=3 for 2 File=): Slurm's numbering is not derived for it");
});

t.test('what slurmd would not start with, or cannot be told: not usable, never the lines around it alone', async (t) => {
  const why = async (files: Record<string, string>): Promise<string> => {
    const g = await readGres(root(t, files), GRES);
    return g.state === 'unknown' ? g.why : g.state;
  };
  t.equal(await why({ [GRES]: 'Name=gpu File=/dev/nvidia0\nInclude nodes-%c.conf\n' }), `${GRES}:2: Include nodes-%c.conf: %c and no ClusterName in gres.conf (slurmd would not start)`);
  const half = `# ${'x'.repeat(150 * 1024)}\n`;
  t.equal(await why({ [GRES]: 'Include a.conf\n', '/etc/slurm/a.conf': half + half }), `${GRES}:1: Include /etc/slurm/a.conf: larger than 256 KiB, not read`);
  t.equal(await why({ [GRES]: 'Include a.conf\nInclude a.conf\n', '/etc/slurm/a.conf': half }), `${GRES}:2: Include /etc/slurm/a.conf: more than 256 KiB included in all, not read`);
  // An Include in an included file of another directory: 23.02 on looks beside slurm.conf, 22.05 beside the including file.
  const both = { [GRES]: 'Include /opt/gres/a.conf\n', '/opt/gres/a.conf': 'Include b.conf\n', '/opt/gres/b.conf': 'Name=gpu File=/dev/nvidia0\n', '/etc/slurm/b.conf': 'Name=gpu File=/dev/nvidia1\n' };
  t.equal(await why(both), '/opt/gres/a.conf:1: Include b.conf: both /etc/slurm/b.conf (Slurm 23.02 on) and /opt/gres/b.conf (22.05) are there: which is read cannot be told');
  t.equal(await why({ [GRES]: 'Include /etc/slurm/gres.conf\n' }), `${GRES}:1: Include ${GRES}: nested more than 16 deep (a loop?)`);
  t.equal(await why({ '/etc/slurm/other': '' }), 'absent', 'no gres.conf: absent, as before');
});
