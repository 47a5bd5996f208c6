// fleet collect refuses what it cannot run before it spawns anything (exit 2: UsageError), each with a clear word.
// The real runs are in test/e2e/cluster-fleet.test.ts (srun on the 4-node cluster).
import t from 'tap';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { collectCommand } from '../../src/fleet/collect-command.js';
import { UsageError } from '../../src/errors.js';
import { scratchDir } from '../helpers/scratch.js';

t.test('usage errors', async (t) => {
  const dir = scratchDir('gdrgate-collect-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const base = { nodes: 'node[1-2]', out: dir, srun: '/nonexistent/srun', scontrol: '/nonexistent/scontrol' };
  const cases: [string, Record<string, unknown>, RegExp][] = [
    ['bad list', { nodes: 'node[1-' }, /--nodes: hostlist "node\[1-": unclosed \[/],
    ['empty list', { nodes: ' ' }, /--nodes: .*empty/],
    ['short timeout', { timeout: 1 }, /--timeout 1: seconds, from 5 to 86400/],
    ['relative root', { root: 'tree' }, /--root tree: an absolute path/],
    ['relative srun', { srun: 'srun' }, /--srun srun: give an absolute path/],
    ['relative gdrgate', { gdrgate: ['gdrgate'] }, /--gdrgate gdrgate: give an absolute path/],
    ['out is a file', { out: '/etc/hostname' }, /--out \/etc\/hostname: /],
  ];
  for (const [name, over, why] of cases) {
    const p = collectCommand({ ...base, ...over } as Parameters<typeof collectCommand>[0]);
    await t.rejects(p, UsageError, name);
    await t.rejects(collectCommand({ ...base, ...over } as Parameters<typeof collectCommand>[0]), why, name);
  }
});

t.test('no Slurm here: every node missing with the reason, exit internal, the summary written', async (t) => {
  const dir = scratchDir('gdrgate-collect-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const { readFileSync } = await import('node:fs');
  const r = await collectCommand({ nodes: 'node[1-2]', out: dir, timeout: 5, srun: '/nonexistent/srun', scontrol: '/nonexistent/scontrol', json: false });
  t.equal(r, 'internal');
  const s = JSON.parse(readFileSync(path.join(dir, 'gdrgate-collect.json'), 'utf8')) as { missing: { node: string; why: string }[] };
  t.same(s.missing.map((m) => m.node), ['node1', 'node2']);
  t.equal(s.missing[0]?.why, 'no snapshot written (/nonexistent/srun: Command failed with ENOENT)');
});

t.test('--gdrgate from the command line: the nodes run the one named', async (t) => {
  const { writeFileSync, readFileSync, chmodSync } = await import('node:fs');
  const { cli } = await import('../helpers/cli.js');
  const dir = scratchDir('gdrgate-collect-');
  const srun = path.join(dir, 'srun');
  writeFileSync(srun, `#!/bin/sh\nprintf '%s\\n' "$@" > ${dir}/srun-args\n`);
  chmodSync(srun, 0o755);
  const out = path.join(dir, 'out');
  const r = cli(['fleet', 'collect', '--nodes', 'node1', '--out', out, '--timeout', '5', '--srun', srun, '--scontrol', '/nonexistent/scontrol', '--gdrgate', '/usr/sbin/gdrgate']);
  t.equal(r.code, 3, r.stderr);
  const args = readFileSync(path.join(dir, 'srun-args'), 'utf8').split('\n');
  t.same(args.slice(args.indexOf('--'), args.indexOf('--') + 3), ['--', '/usr/sbin/gdrgate', 'snapshot']);
});
