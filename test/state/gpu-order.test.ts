// How slurmd numbers a node's GPUs, as the Prolog signs it into the job's record: AutoDetect=nvml numbers the GPUs
// it finds in PCI bus order, AutoDetect=nvidia by device minor, but only those gres.conf's File= lines name when it has
// any (gres_gpu.c _merge_system_gres_conf ignores the others); without AutoDetect, the File= entries in slurmd's line order. The record's field is checked on reading (isGpuOrder).
import t from 'tap';
import { present, unknown } from '../../src/model/fact.js';
import { type GresConf, parseGresConf } from '../../src/parsers/gres-conf.js';
import { slurmGpuOrder } from '../../src/state/slurm-gpus.js';
import { agreedOrder, isGpuOrder } from '../../src/state/gpu-order.js';

/** Four GPUs whose minors are in PCI bus order: minor i at bus 0x18 + 0x10·i. */
const MINORS = new Map([0, 1, 2, 3].map((i) => [i, `0000:${(0x18 + 0x10 * i).toString(16)}:00.0`] as const));
/** gres.conf as the Prolog's inventory gives it: present, or unknown with the parser's error. */
const gresFact = (conf: string) => {
  const p = parseGresConf(conf);
  return p.ok ? present(p.value) : unknown(p.error);
};
/** slurm.conf's Gres= for the node as most sites write it: untyped, gpu:C. */
const untyped = (count: number) => present({ count, untyped: true, types: [] });
/** `count`: slurm.conf's Gres=gpu:C; by default as many as gres.conf's lines name (all four without lines). */
const order = (conf: string, count?: number) => {
  const g = gresFact(conf);
  const named = g.state === 'present' ? g.value.lines.reduce((n, l) => n + l.files.length, 0) : 0;
  const o = slurmGpuOrder({ gres: g, gresPath: 'gres.conf', minors: present(MINORS), node: 'n1', asked: untyped(count ?? (named || MINORS.size)) });
  return o.ok ? o.gpus.map((g) => g.minor) : o.why;
};

const ND = "Slurm's numbering is not derived for it";
t.test('AutoDetect=nvml: every GPU in PCI bus order, or only the ones File= names', async (t) => {
  t.same(order('AutoDetect=nvml\n'), [0, 1, 2, 3], 'no GPU line: all of them');
  t.same(order('AutoDetect=nvml\nName=gpu File=/dev/nvidia[0-3]\n'), [0, 1, 2, 3]);
  t.same(order('AutoDetect=nvml\nName=gpu File=/dev/nvidia[1-3]\n'), [1, 2, 3], 'a GPU withheld from Slurm takes no index');
  t.same(order('AutoDetect=nvml\nName=gpu File=/dev/nvidia3\nName=gpu File=/dev/nvidia2\n'), [2, 3], 'sorted by bus, whatever the lines\' order');
  // Which of them slurmd keeps depends on slurm.conf's Gres= (typed: on the GPUs' model names): asked for, or told.
  const some = (asked?: Parameters<typeof slurmGpuOrder>[0]['asked']) => slurmGpuOrder({ gres: gresFact('AutoDetect=nvml\nName=gpu File=/dev/nvidia[1-3]\n'), gresPath: 'gres.conf', minors: present(MINORS), node: 'n1', ...(asked ? { asked } : {}) });
  const three = 'gres.conf AutoDetect=nvml, File= naming 3 of the 4 GPUs';
  t.same(some(), { ok: false, why: `${three}: slurm.conf's Gres= not read`, needs: 'slurm.conf' });
  t.same(some(present({ count: 3, untyped: false, types: ['h100'] })), { ok: false, why: `${three}: the GPUs' models not read`, needs: 'models' });
  t.same(some(present({ count: 3, untyped: true, types: ['h100'] })), { ok: false, why: `${three}, and slurm.conf's Gres= asks for GPUs of several types (gpu:h100, untyped), not modelled: ${ND}` });
  t.same(some(unknown('x')), { ok: false, why: `${three}, and slurm.conf's Gres= for this node cannot be told (x): which GPUs slurmd keeps depends on it: ${ND}` });
  t.same(some(present({ count: 0, untyped: true, types: [] })), { ok: false, why: `${three}, and slurm.conf's Gres= asks for no GPU on this node: ${ND}` });
  // slurmd takes C of them: the named ones as it reads them, then (C larger) the others by minor; then sorts by bus.
  t.same(order('AutoDetect=nvml\nName=gpu File=/dev/nvidia[3,1,2]\n', 2), [1, 3], 'Gres=gpu:2: the first two named, as written');
  t.same(order('AutoDetect=nvml\nName=gpu File=/dev/nvidia[1-3]\n', 4), [0, 1, 2, 3], 'Gres=gpu:4: the unnamed GPU taken too');
  // More than the node's GPUs: slurmd counts other records as GPUs (MIG instances under nvml: GPU0 split in two beside
  // three whole ones is Gres=gpu:5, the whole GPUs first from 24.11), so its numbering is not the minors'.
  t.same(order('AutoDetect=nvml\n', 5), `gres.conf AutoDetect=nvml, and slurm.conf's Gres= asks for 5 GPUs where 4 are on the bus (under nvml, MIG instances are GPUs of their own to slurmd): its records are not these: ${ND}`, 'before: GPUs 0-3 in bus order, Slurm\'s GPU 2 taken for /dev/nvidia2');
  t.same(order('AutoDetect=nvml\nName=gpu File=/dev/nvidia[1-3]\n', 8), `gres.conf AutoDetect=nvml, File= naming 3 of the 4 GPUs, and slurm.conf's Gres= asks for 8 GPUs where 4 are on the bus (under nvml, MIG instances are GPUs of their own to slurmd): its records are not these: ${ND}`);
  t.same(order('AutoDetect=nvml\n', 2), [0, 1], 'without lines, Gres=gpu:2: the first two by minor');
  // Typed (gpu:h100:C): the lines are dropped, and slurmd keeps the GPUs whose model's name holds h100.
  const H100 = 'NVIDIA H100 80GB HBM3';
  const typed = (conf: string, count: number, models: (string | null)[]) => {
    const o = slurmGpuOrder({ gres: gresFact(conf), gresPath: 'gres.conf', minors: present(MINORS), node: 'n1', asked: present({ count, untyped: false, types: ['H100'] }), models: present(new Map(models.map((m, k) => [k, m]))) });
    return o.ok ? o.gpus.map((g) => g.minor) : o.why;
  };
  t.same(typed('AutoDetect=nvml\nName=gpu File=/dev/nvidia[1-2]\n', 4, [H100, H100, H100, H100]), [0, 1, 2, 3], 'gpu:H100:4, every GPU an H100: all of them, whatever the lines name');
  t.equal(typed('AutoDetect=nvml\n', 4, [H100, 'NVIDIA A100-SXM4-80GB', H100, H100]), `gres.conf AutoDetect=nvml, and slurm.conf's Gres= asks for gpu:H100, which the model of /dev/nvidia1 does not name: slurmd keeps only the others, not modelled: ${ND}`);
  t.equal(typed('AutoDetect=nvml\n', 2, [H100, H100, H100, H100]), `gres.conf AutoDetect=nvml, and slurm.conf's Gres= asks for 2 of the 4 GPUs of type H100: which it keeps is not modelled: ${ND}`);
  t.same(slurmGpuOrder({ gres: gresFact('AutoDetect=nvidia\n'), gresPath: 'gres.conf', minors: present(MINORS), node: 'n1', asked: present({ count: 4, untyped: false, types: ['h100'] }) }), { ok: false, why: "gres.conf AutoDetect=nvidia: the GPUs' models not read", needs: 'models' }, 'under nvidia too');
  t.same(slurmGpuOrder({ gres: gresFact('AutoDetect=nvidia\n'), gresPath: 'gres.conf', minors: present(MINORS), node: 'n1', asked: present({ count: 4, untyped: false, types: ['h100'] }), models: unknown('EIO') }), { ok: false, why: `gres.conf AutoDetect=nvidia, and slurm.conf's Gres= asks for gpu:h100, and the GPUs' models cannot be read (EIO): ${ND}` });
  t.equal(order('AutoDetect=nvml\nName=gpu File=/dev/nvidia7\n'), `gres.conf line 2 (/dev/nvidia7 is no GPU of this node): ${ND}`, 'a GPU of the config only: not derived');
  t.equal(order('AutoDetect=nvml\nName=gpu Count=2\n'), `gres.conf line 2 (no File= under AutoDetect=nvml): ${ND}`);
  // slurmd keeps a line only where it matches what NVML found (Type= in the model's name, the same Cores= and Links=):
  // which those are is not read here.
  t.equal(order('AutoDetect=nvml\nName=gpu Type=h100 File=/dev/nvidia3\n'), `gres.conf line 2 (type= under AutoDetect=nvml): ${ND}`);
  t.equal(order('AutoDetect=nvml\nName=gpu File=/dev/nvidia3 Cores=0-7 Links=-1\n'), `gres.conf line 2 (cores= links= under AutoDetect=nvml): ${ND}`);
});

t.test('AutoDetect=nvidia: every GPU by device minor, or the ones File= names where both Slurm orders agree', async (t) => {
  // Minors out of PCI bus order, so that the two AutoDetect orders differ: minor 0 is the last GPU on the bus.
  const minors = new Map([[2, '0000:18:00.0'], [0, '0000:9a:00.0'], [1, '0000:2a:00.0'], [10, '0000:3a:00.0']]);
  const by = (conf: string, count = 4) => {
    const o = slurmGpuOrder({ gres: present((parseGresConf(conf) as { value: GresConf }).value), gresPath: 'gres.conf', minors: present(minors), node: 'n1', asked: untyped(count) });
    return o.ok ? [o.how, ...o.gpus.map((g) => g.minor)] : o.why;
  };
  t.same(by('AutoDetect=nvidia\n'), ['gres.conf AutoDetect=nvidia: Slurm numbers the GPUs in the order of their device minors (/dev/nvidiaN)', 0, 1, 2, 10], 'no GPU line: all, /dev/nvidia10 after /dev/nvidia2');
  t.same(by('AutoDetect=nvml\n'), ['gres.conf AutoDetect=nvml, slurm.conf Gres=gpu:4: Slurm numbers the GPUs in PCI bus order', 2, 1, 10, 0], 'nvml: by bus');
  t.same(by('AutoDetect=nvml\n', 3), ['gres.conf AutoDetect=nvml, slurm.conf Gres=gpu:3: Slurm numbers the 3 it keeps in PCI bus order', 2, 1, 0], 'nvml, Gres=gpu:3: minors 0-2 kept, by bus (no prefix of the bus order)');
  t.same(by('AutoDetect=nvidia\nName=gpu File=/dev/nvidia[1-2]\nName=gpu File=/dev/nvidia10\n', 3), ['gres.conf AutoDetect=nvidia, File= naming 3 of the 4 GPUs, slurm.conf Gres=gpu:3: Slurm numbers the 3 it keeps in the order of their device minors (/dev/nvidiaN)', 1, 2, 10], 'named ones in minor order');
  t.same(by('AutoDetect=nvidia\nName=gpu File=/dev/nvidia[1-2]\nName=gpu File=/dev/nvidia10\n').slice(1), [0, 1, 2, 10], 'Gres=gpu:4: the one no line names is kept too');
  t.equal(by('AutoDetect=nvidia\nName=gpu File=/dev/nvidia10\nName=gpu File=/dev/nvidia[1-2]\n'), `gres.conf AutoDetect=nvidia with File= not in minor order (Slurm 24.11 and later number by minor, earlier ones by File=): ${ND}`, 'a Slurm before 24.11 would number by File=');
  t.same(by('NodeName=n1 AutoDetect=nvidia\nAutoDetect=off\n'), ['gres.conf AutoDetect=nvidia: Slurm numbers the GPUs in the order of their device minors (/dev/nvidiaN)', 0, 1, 2, 10], "the node's own line trumps the global one");
  t.same(by('AutoDetect=off\nAutoDetect=nvidia\n').slice(1), [0, 1, 2, 10], 'of two global lines the last holds');
  t.equal(by('Name=gpu AutoDetect=nvidia File=/dev/nvidia[2,0]\n') , `gres.conf line 1 (autodetect=): ${ND}`, "an AutoDetect on a Name= line slurmd ignores (and its line is not read)");
  t.equal(by('NodeName=n1 AutoDetect=nvidia\nNodeName=n[1-2] AutoDetect=off\n'), `gres.conf gives this node two AutoDetect= of its own, or one whose NodeName= cannot be told: ${ND}`);
  t.equal(by('AutoDetect=nvidia\nName=gpu Count=2\n'), `gres.conf line 2 (no File= under AutoDetect=nvidia): ${ND}`);
  t.equal(by('AutoDetect=nvidia\nName=gpu File=/dev/nvidia7\n'), `gres.conf line 2 (/dev/nvidia7 is no GPU of this node): ${ND}`);
  t.equal(by('AutoDetect=nvidia\nName=GPU File=/dev/nvidia[1-2]\n'), `gres.conf line 2 (Name=GPU under AutoDetect=nvidia): ${ND}`, 'Name=GPU is a GPU line to slurmd');
  for (const ad of ['constructor', 'toString', '__proto__', 'rsmi']) t.equal(by(`AutoDetect=${ad}\n`), `gres.conf AutoDetect=${ad.toLowerCase()}: ${ND}`, `AutoDetect=${ad}: not derived`);
  t.same(by('AutoDetect=full\n'), `gres.conf AutoDetect=full: ${ND}`, 'full (26.05: every plugin slurmd can load): not modelled');
});

t.test('gres.conf there but not read, or holding what is not modelled: not derived, never the agreed order', async (t) => {
  t.equal(order('Include gres.d.conf\n'), 'gres.conf not usable (gres.conf: line 1: Include gres.d.conf not followed here): Slurm\'s numbering is not derived', 'an Include, to the parser of one text (readGres follows it: test/inventory/gres-include.test.ts)');
  t.equal(order('Name=gpu File=/dev/nvidia2,/dev/nvidia1\n'), `gres.conf line 1 (/dev/nvidia2,/dev/nvidia1 is not a /dev/nvidiaN node): ${ND}`, 'a comma list outside brackets');
  t.equal(order('Name=gpu Type=a File=/dev/nvidia1\nName=gpu Type=b File=/dev/nvidia0\n'), `gres.conf has GPU lines of several Type= for this node: ${ND}`, 'types are numbered in slurm.conf\'s order');
  t.equal(order('Name=gpu File=/dev/nvidia[1-2] Count=3\n'), `gres.conf line 1 (Count=3 for 2 File=): ${ND}`);
  t.equal(order('Name=gpu File=/dev/nvidia1 Flags=nvidia_gpu_env\n'), `gres.conf line 1 (flags=): ${ND}`);
  t.same(order('Name=gpu Files=/dev/nvidia[2,1]\n'), [2, 1], 'Files= is File=');
  t.same(order('NodeName=n* Name=gpu File=/dev/nvidia0\nName=gpu File=/dev/nvidia[2,1]\n'), [2, 1], 'NodeName=n* names a node called n*, not n1');
  // slurmd parts names at blanks too; a long list names its nodes as a short one does.
  t.same(order('NodeName="n0 n1" Name=gpu File=/dev/nvidia[2,1]\n'), [2, 1], 'NodeName="n0 n1" names n1');
  const many = Array.from({ length: 60 }, (_, k) => `x${k}`).join(',') + ',n1';
  t.same(order(`NodeName=${many} Name=gpu File=/dev/nvidia[2,0]\n`), [2, 0], `a NodeName= list of ${many.length} characters`);
  t.equal(order('NodeName=n[1x] Name=gpu File=/dev/nvidia[2,0]\n'), `gres.conf line 1 (whether NodeName=n[1x] names this node cannot be told): ${ND}`, 'a bracket slurmd refuses');
  const ninety = Array.from({ length: 90 }, (_, k) => k + 2).join(',');
  t.equal(order(`NodeName=n[${ninety}] Name=gpu File=/dev/nvidia[2,0]\n`), `gres.conf line 1 (whether NodeName=n[${ninety}] names this node cannot be told): ${ND}`, 'one name too long for the matcher: cannot be told');
  t.equal(order('AutoDetect=nvidia\nNodeName=n[1x] AutoDetect=off\n'), `gres.conf gives this node two AutoDetect= of its own, or one whose NodeName= cannot be told: ${ND}`);
});

t.test('no AutoDetect: the File= entries as slurmd reads them', async (t) => {
  t.same(order('Name=gpu File=/dev/nvidia[1-3]\n'), [1, 2, 3]);
  t.same(order('Name=gpu File=/dev/nvidia3\nName=gpu File=/dev/nvidia0\n'), [3, 0]);
});

t.test("the record's slurmGpus field: an order as the Prolog signs it passes; one of another shape is version skew", async (t) => {
  const signed = (o: unknown): unknown => JSON.parse(JSON.stringify(o));
  const good = signed(slurmGpuOrder({ gres: present((parseGresConf('AutoDetect=nvml\n') as { value: GresConf }).value), gresPath: 'gres.conf', minors: present(MINORS), node: 'n1', asked: untyped(4) })) as { gpus: { minor: unknown }[] };
  const refused = signed(agreedOrder(new Map([[1, '0000:18:00.0'], [0, '0000:28:00.0']]), 'no gres.conf')) as Record<string, unknown>;
  t.equal(refused.ok, false, 'minors out of PCI order: no order');
  t.same([isGpuOrder(good), isGpuOrder(refused)], [true, true], 'both as written');
  t.equal(isGpuOrder({ ...refused, why: undefined }), false, 'ok false without its reason');
  t.equal(isGpuOrder({ ok: false }), false, 'ok false alone');
  good.gpus[0]!.minor = '0';
  t.equal(isGpuOrder(good), false, 'a minor written as a string');
});
