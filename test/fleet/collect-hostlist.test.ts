// fleet collect over 10,000 nodes: the node list goes to scontrol and srun as a compressed Slurm hostlist, never one
// argument over Linux's 128 KiB (E2BIG); names that do not compress go to srun as a file (a --nodelist with a '/').
import t from 'tap';
import { chmodSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { collectCommand } from '../../src/fleet/collect-command.js';
import { expandHostlist } from '../../src/fleet/hostlist-expand.js';
import { REPO } from '../helpers/paths.js';
import { scratchDir } from '../helpers/scratch.js';

const expand = (list: string): string[] => {
  const r = expandHostlist(list);
  if (!r.ok) throw new Error(r.error);
  return r.hosts;
};

/** A scontrol that answers every node IDLE (expanding its hostlist as Slurm does) and an srun that records its arguments. */
function fakes(dir: string): { srun: string; scontrol: string } {
  const scontrol = path.join(dir, 'scontrol');
  writeFileSync(scontrol, `#!${process.execPath}
const fs = require('node:fs');
fs.appendFileSync(${JSON.stringify(path.join(dir, 'scontrol-calls'))}, JSON.stringify(process.argv.slice(2)) + '\\n');
import(${JSON.stringify(path.join(REPO, 'dist/fleet/hostlist-expand.js'))}).then((m) => {
  const r = m.expandHostlist(process.argv[process.argv.length - 1]);
  for (const n of r.hosts) process.stdout.write('NodeName=' + n + ' Arch=x86_64 State=IDLE ThreadsPerCore=1\\n');
});
`);
  const srun = path.join(dir, 'srun');
  writeFileSync(srun, `#!${process.execPath}
const fs = require('node:fs');
const args = process.argv.slice(2);
const list = args[0].slice('--nodelist='.length);
const nodes = list.includes('/') ? fs.readFileSync(list, 'utf8') : null;
fs.writeFileSync(${JSON.stringify(path.join(dir, 'srun-call'))}, JSON.stringify({ args, nodes }));
`);
  chmodSync(scontrol, 0o755);
  chmodSync(srun, 0o755);
  return { srun, scontrol };
}

t.test('rack[01-40]-node[0001-0250]: one hostlist argument each for scontrol and srun, naming the 10,000 nodes', async (t) => {
  const dir = scratchDir('gdrgate-collect-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const all = expand('rack[01-40]-node[0001-0250]');
  t.equal(all.join(',').length > 128 * 1024, true, 'written out, the list is over the limit of one argument');
  const r = await collectCommand({ nodes: 'rack[01-40]-node[0001-0250]', out: path.join(dir, 'out'), timeout: 30, ...fakes(dir), gdrgate: ['/usr/sbin/gdrgate'] });
  t.equal(r, 'internal', 'the fake srun writes no snapshot');
  const calls = readFileSync(path.join(dir, 'scontrol-calls'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as string[]);
  t.equal(calls.length, 2, 'before the step and after it');
  t.strictSame(calls.map((c) => expand(c[3]!).length), [10_000, 10_000]);
  const srun = JSON.parse(readFileSync(path.join(dir, 'srun-call'), 'utf8')) as { args: string[]; nodes: string | null };
  const list = srun.args[0]!.slice('--nodelist='.length);
  t.equal(list.slice(0, 40), 'rack01-node[0001-0250],rack02-node[0001-');
  t.strictSame(expand(list), all);
  t.equal(srun.nodes, null);
  t.strictSame(srun.args.slice(1, 3), ['--nodes=10000', '--ntasks=10000']);
});

t.test('12,000 names that do not compress: scontrol asked in chunks, srun given a file of the names', async (t) => {
  const dir = scratchDir('gdrgate-collect-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const all = expand('gpu[00001-12000]-ib');
  const r = await collectCommand({ nodes: 'gpu[00001-12000]-ib', out: path.join(dir, 'out'), timeout: 30, ...fakes(dir), gdrgate: ['/usr/sbin/gdrgate'] });
  t.equal(r, 'internal');
  const calls = readFileSync(path.join(dir, 'scontrol-calls'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as string[]);
  t.strictSame(calls.map((c) => expand(c[3]!).length), [8_316, 3_684, 8_316, 3_684]);
  t.strictSame(calls.map((c) => c[3]!.length < 128 * 1024), [true, true, true, true], 'each under the limit of one argument');
  t.strictSame(calls.slice(0, 2).flatMap((c) => expand(c[3]!)), all);
  const srun = JSON.parse(readFileSync(path.join(dir, 'srun-call'), 'utf8')) as { args: string[]; nodes: string | null };
  t.equal(srun.args[0]!.startsWith(`--nodelist=/`), true, 'a file name: it holds a /');
  t.strictSame(srun.nodes?.trim().split('\n'), all);
});
