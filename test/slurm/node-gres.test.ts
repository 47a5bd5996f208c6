// slurm.conf's Gres= for this node, as slurmd takes it (its NodeName= line over every NodeName=DEFAULT before it, each
// record read as gres.c _get_gres_cnt reads it), and where the Prolog's GPU numbering reads it: File= lines under
// AutoDetect naming some of the GPUs, which slurmd keeps only for an untyped Gres= (the real slurmd: test/e2e/_gres-order.ts).
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { FsHost } from '../../src/host/fs-host.js';
import { present } from '../../src/model/fact.js';
import { parseGresConf, type GresConf } from '../../src/parsers/gres-conf.js';
import { parseConf } from '../../src/slurm/conf-parse.js';
import { mayName, nodeGpuAsk, parseGpuAsk } from '../../src/slurm/node-gres.js';
import { forNode } from '../../src/checks/job-placement.js';
import { nodeGpuOrder, slurmConfPath } from '../../src/state/slurm-gpus.js';
import { scratchDir } from '../helpers/scratch.js';

const show = (v: string): string => {
  const a = parseGpuAsk(v);
  return a.ok ? `${a.value.count} ${a.value.untyped ? 'untyped' : '-'} [${a.value.types.join(',')}]` : `error: ${a.error}`;
};

t.test('a Gres= value: its GPU records, counted as slurmd counts them', async (t) => {
  const cases: [string, string][] = [
    ['gpu:8', '8 untyped []'],
    ['gpu', '1 untyped []'],
    ['gpu:h100', '1 - [h100]'],
    ['gpu:h100:8(S:0-1)', '8 - [h100]'],
    ['gpu:2k', '2048 untyped []'],
    ['gpu:2G', `${2 * 1024 ** 3} untyped []`],
    ['nic:1,gpu:h100:4,gpu:a100:2,gpu:h100:1', '7 - [h100,a100]'],
    ['gpu:4,gpu:h100:4', '8 untyped [h100]'],
    ['GPU:2', '0 - []'],
    ['gpus:2,mps:100', '0 - []'],
    ['gpu:8x', 'error: Gres= record "gpu:8x" has a count slurmd refuses'],
    ['gpu:no_consume:2', 'error: Gres= record "gpu:no_consume:2" has a flag (not modelled)'],
    ['gpu:a:b:2', 'error: Gres= record "gpu:a:b:2" names 2 types (not modelled)'],
  ];
  for (const [v, want] of cases) t.equal(show(v), want, v);
});

const ask = (conf: string, node = 'n1'): string => {
  const entries = parseConf(conf, 'slurm.conf').order.flatMap((o) => (o.kind === 'entry' ? [o.entry] : []));
  const a = nodeGpuAsk(entries, node);
  return !a.ok ? `error: ${a.error}` : a.value === null ? 'none' : `${a.value.count} [${a.value.types.join(',')}]`;
};

t.test("the node's line, over the NodeName=DEFAULT lines before it", async (t) => {
  t.equal(ask('NodeName=n1 Gres=gpu:h100:8 CPUs=4\n'), '8 [h100]');
  t.equal(ask('NodeName=DEFAULT Gres=gpu:4\nNodeName=n[1-4] CPUs=4\n'), '4 []', 'from DEFAULT');
  t.equal(ask('NodeName=DEFAULT Gres=gpu:4\nNodeName=n[1-4] gres="gpu:h100:2"\n'), '2 [h100]', 'its own wins, any case, quoted');
  t.equal(ask('NodeName=DEFAULT Gres=gpu:4\nNodeName=DEFAULT CPUs=8\nNodeName=n1\n'), '4 []', 'a later DEFAULT keeps what it does not set');
  t.equal(ask('NodeName=n1 CPUs=4\nNodeName=DEFAULT Gres=gpu:4\n'), 'none', 'a DEFAULT after the line does not reach it');
  t.equal(ask('NodeName=n9 Gres=gpu:8\nNodeName=n0,n1 Gres=gpu:h100:2\n'), '2 [h100]', 'another node\'s line is read past');
  t.equal(ask('NodeName=n1 Gres=nic:1\n'), 'none', 'no gpu record');
  t.equal(ask('NodeName=n2 Gres=gpu:8\n'), 'error: no NodeName= line names n1', 'a dynamic node: not in slurm.conf');
  t.equal(ask('NodeName=n1 Gres=gpu:8\nNodeName=n[1-2] Gres=gpu:2\n'), 'error: n1 is named on slurm.conf:1 and slurm.conf:2');
  t.equal(ask('NodeName=n[1x] Gres=gpu:8\n'), 'error: slurm.conf:1: whether NodeName=n[1x] names n1 cannot be told');
  // Hostlists as slurmd reads them (ranges keep their width), many lines read past without being matched in full.
  const racks = `${Array.from({ length: 40 }, (_, i) => `NodeName=gpu[${String(i * 4 + 1).padStart(3, '0')}-${String(i * 4 + 4).padStart(3, '0')}] Gres=gpu:${i % 2 ? 'h100:' : ''}8`).join('\n')}\n`;
  t.equal(ask(racks, 'gpu003'), '8 []');
  t.equal(ask(racks, 'gpu160'), '8 [h100]');
  t.equal(ask(racks, 'gpu0003'), 'error: no NodeName= line names gpu0003', 'a wider number is another name');
  t.equal(ask(racks, 'gpu3'), 'error: no NodeName= line names gpu3');
  t.equal(ask(racks, 'gpu161'), 'error: no NodeName= line names gpu161');
  t.equal(ask('NodeName=gpu[001-004],gpu[010-012]x Gres=gpu:2\n', 'gpu011x'), '2 []', 'a suffix after the bracket');
  t.equal(ask('NodeName=a[1-2]b[1-2] Gres=gpu:2\n', 'a2b1'), '2 []', 'two brackets: matched in full');
  t.equal(ask('NodeName=n1 Gres=gpu:no_consume:8\n'), 'error: slurm.conf:1: Gres= record "gpu:no_consume:8" has a flag (not modelled)');
});

t.test('the look before the hostlist says "no" only where the hostlist does (generated lists and names)', async (t) => {
  let seed = 7;
  const r = (n: number): number => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0), (seed >>> 8) % n);
  const num = (): string => String(r(120)).padStart(r(4), '0');
  const name = (): string => {
    const pre = ['gpu', 'n', 'dgx-a', ''][r(4)]!;
    const post = ['', '', 'b', '-ib'][r(4)]!;
    if (r(3) === 0) return `${pre}${num()}${post}`;
    const ranges = Array.from({ length: 1 + r(3) }, () => (r(2) ? num() : `${num()}-${num()}`)).join(',');
    return `${pre}[${ranges}]${post}${r(5) === 0 ? `[${num()}]` : ''}`;
  };
  let noes = 0;
  for (let i = 0; i < 4000; i++) {
    const list = Array.from({ length: 1 + r(2) }, name).join(',');
    const node = r(2) ? name().replace(/\[([0-9]+)[^\]]*\]/g, '$1') : `${['gpu', 'n', 'dgx-a', ''][r(4)]!}${num()}${['', 'b'][r(2)]!}`;
    if (mayName(list, node)) continue;
    noes++;
    if (forNode({ nodeName: list }, node) !== false) t.fail(`mayName says no, forNode does not: NodeName=${list}, node ${node}`);
  }
  t.ok(noes > 2000, `${noes} "no"s, each one forNode's too`);
});

/** Three GPUs by minor 1, 3, 5; gres.conf's lines name two of them under AutoDetect=nvidia (the real slurmd's case). */
const MINORS = new Map([[1, '0000:10:00.0'], [3, '0000:20:00.0'], [5, '0000:08:00.0']]);
const GRES = (parseGresConf('AutoDetect=nvidia\nName=gpu File=/dev/nvidia[3,5]\n') as { value: GresConf }).value;

t.test('the numbering reads slurm.conf only where it decides, through the includes, from SLURM_CONF', async (t) => {
  const root = scratchDir('gdrgate-node-gres-');
  fs.mkdirSync(path.join(root, 'etc/slurm'), { recursive: true });
  const write = (f: string, text: string): void => fs.writeFileSync(path.join(root, f), text);
  write('etc/slurm/slurm.conf', 'ClusterName=c\nInclude nodes.conf\n');
  // The GPUs as the NVIDIA module shows them (the models of a typed Gres=).
  for (const [minor, bdf] of MINORS) {
    fs.mkdirSync(path.join(root, 'proc/driver/nvidia/gpus', bdf), { recursive: true });
    write(`proc/driver/nvidia/gpus/${bdf}/information`, `Model: \t\t NVIDIA H100 80GB HBM3\nIRQ:   \t\t 1\nBus Type: \t PCIe\nBus Location: \t ${bdf}\nDevice Minor: \t ${minor}\n`);
  }
  // A host a call (a capture's host keeps what it resolved: these files change between calls).
  const placement = (gres: GresConf) => ({ gresPath: '/etc/slurm/gres.conf', gres: present(gres), minors: present(MINORS), cores: present([]) });
  const minors = async (conf: string, gres = GRES): Promise<number[] | string> => {
    const o = await nodeGpuOrder(new FsHost(root), placement(gres), 'n1', conf);
    return o.ok ? o.gpus.map((g) => g.minor) : o.why;
  };
  const ND = "Slurm's numbering is not derived for it";
  const some = '/etc/slurm/gres.conf AutoDetect=nvidia, File= naming 2 of the 3 GPUs';
  write('etc/slurm/nodes.conf', 'NodeName=n[1-2] Gres=gpu:2\n');
  t.same(await minors('/etc/slurm/slurm.conf'), [3, 5], 'untyped, as many as named: the lines hold');
  write('etc/slurm/nodes.conf', 'NodeName=DEFAULT Gres=gpu:8\nNodeName=n1\n');
  t.same(await minors('/etc/slurm/slurm.conf'), [1, 3, 5], 'asked for more (a DEFAULT for the cluster): the GPU no line names is kept too');
  write('etc/slurm/nodes.conf', 'NodeName=n1 Gres=gpu:1\n');
  t.same(await minors('/etc/slurm/slurm.conf'), [3], 'asked for fewer: the first named');
  // Typed: the lines are dropped; the GPUs whose model's name holds h100 are kept (their information files, read then).
  write('etc/slurm/nodes.conf', 'NodeName=DEFAULT Gres=gpu:h100:3\nNodeName=n1\n');
  t.same(await minors('/etc/slurm/slurm.conf'), [1, 3, 5], 'gpu:h100:3 of three H100s: all of them, not the lines\' two');
  write('etc/slurm/nodes.conf', 'NodeName=DEFAULT Gres=gpu:h100:2\nNodeName=n1\n');
  t.equal(await minors('/etc/slurm/slurm.conf'), `${some}, and slurm.conf's Gres= asks for 2 of the 3 GPUs of type h100: which it keeps is not modelled: ${ND}`);
  write('etc/slurm/nodes.conf', 'NodeName=n1 CPUs=2\n');
  t.equal(await minors('/etc/slurm/slurm.conf'), `${some}, and slurm.conf's Gres= asks for no GPU on this node: ${ND}`);
  t.equal(await minors('/etc/slurm/none.conf'), `${some}, and slurm.conf's Gres= for this node cannot be told (/etc/slurm/none.conf: no such file): which GPUs slurmd keeps depends on it: ${ND}`);
  write('etc/slurm/nodes.conf', 'NodeName=n1 Gres=gpu:h100:2\nthis is not\n');
  t.equal(await minors('/etc/slurm/slurm.conf'), `${some}, and slurm.conf's Gres= for this node cannot be told (/etc/slurm/nodes.conf:2: not key=value: "this is not"): which GPUs slurmd keeps depends on it: ${ND}`);
  // A relative Include in an included file: from slurm.conf's directory (Slurm 23.02 on: get_extra_conf_path) or the
  // including file's (22.05): the one that is there; both there cannot be told.
  fs.mkdirSync(path.join(root, 'etc/slurm/sub'));
  write('etc/slurm/slurm.conf', 'ClusterName=c\nInclude sub/a.conf\n');
  write('etc/slurm/sub/a.conf', 'Include nodes.conf\n');
  write('etc/slurm/sub/nodes.conf', 'NodeName=n1 Gres=gpu:2\n');
  fs.rmSync(path.join(root, 'etc/slurm/nodes.conf'));
  t.same(await minors('/etc/slurm/slurm.conf'), [3, 5], "sub/a.conf's Include nodes.conf: /etc/slurm/sub/nodes.conf, the only one there (22.05)");
  write('etc/slurm/nodes.conf', 'NodeName=n1 Gres=gpu:3\n');
  t.equal(await minors('/etc/slurm/slurm.conf'), `${some}, and slurm.conf's Gres= for this node cannot be told (/etc/slurm/sub/a.conf:1: Include nodes.conf: both /etc/slurm/nodes.conf (Slurm 23.02 on) and /etc/slurm/sub/nodes.conf (22.05) are there: which is read cannot be told): which GPUs slurmd keeps depends on it: ${ND}`);
  fs.rmSync(path.join(root, 'etc/slurm/sub/nodes.conf'));
  t.same(await minors('/etc/slurm/slurm.conf'), [1, 3, 5], 'and /etc/slurm/nodes.conf alone (23.02 on): Gres=gpu:3');
  // Read whole or not at all: a slurm.conf cut short could end inside the node's Gres= (gpu:h100:2 read as gpu).
  write('etc/slurm/slurm.conf', 'ClusterName=c\nInclude nodes.conf\n');
  write('etc/slurm/nodes.conf', `${'#'.repeat(16 << 20)}\nNodeName=n1 Gres=gpu:h100:2\n`);
  t.equal(await minors('/etc/slurm/slurm.conf'), `${some}, and slurm.conf's Gres= for this node cannot be told (/etc/slurm/slurm.conf:2: Include /etc/slurm/nodes.conf: /etc/slurm/nodes.conf: larger than 16 MiB, not read): which GPUs slurmd keeps depends on it: ${ND}`);
  // Every GPU named, as many asked for: all, by minor.
  write('etc/slurm/nodes.conf', 'NodeName=n1 Gres=gpu:3\n');
  const all = (parseGresConf('AutoDetect=nvidia\nName=gpu File=/dev/nvidia[1,3,5]\n') as { value: GresConf }).value;
  t.same(await minors('/etc/slurm/slurm.conf', all), [1, 3, 5]);
  t.equal(slurmConfPath({ SLURM_CONF: '/run/slurm/conf/slurm.conf' }, '/etc/slurm/gres.conf'), '/run/slurm/conf/slurm.conf', "slurmd's, for its Prolog (configless: its cache)");
  t.equal(slurmConfPath({}, '/opt/slurm/etc/gres.conf'), '/opt/slurm/etc/slurm.conf', 'by hand: beside gres.conf');
  t.equal(slurmConfPath({ SLURM_CONF: 'slurm.conf' }, '/etc/slurm/gres.conf'), '/etc/slurm/slurm.conf', 'a relative SLURM_CONF is not taken');
});
