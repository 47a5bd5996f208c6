// slurmd's own GPU numbering against the Prolog's (src/state/slurm-gpus.ts): generated nodes (1-8 GPUs, minors and PCI
// addresses drawn apart, so that bus order, minor order and readdir order differ), gres.conf files and slurm.conf's
// NodeName= lines (Gres= on the node's line or a DEFAULT one; read by the Prolog's own parser), each given to the
// Debian root's real `slurmd -G` (trixie/gres-order.sh), whose final File= list is Slurm's index order. Plain
// shapes (makeCase: AutoDetect=nvidia alone or with File= lines; no AutoDetect with Name= and NodeName= lines in any
// order; File= as one file or a bracket list in any order; another node's lines, keys in any case, tabs, comments,
// quoted values, blanks around `=`, continued lines; includeCase: those lines split over files gres.conf includes,
// read by the Prolog's own readGres) must be derived and equal slurmd's; a global AutoDetect with the
// node's own, and odd shapes (oddCase: what the numbering does not model, or a typed slurm.conf Gres=), must equal
// slurmd's wherever derived, and may say they cannot be: never another order.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Test } from 'tap';
import { ABSENT, present, unknown } from '../../src/model/fact.js';
import { FsHost } from '../../src/host/fs-host.js';
import { readGres } from '../../src/inventory/placement.js';
import { parseConf } from '../../src/slurm/conf-parse.js';
import { nodeGpuAsk } from '../../src/slurm/node-gres.js';
import { slurmGpuOrder } from '../../src/state/slurm-gpus.js';
import { REPO, run } from './_sandbox.js';

interface Case {
  /** model: the information file's (slurmd's GPU type, underscored); an H100 SXM's where not said. */
  readonly gpus: readonly { readonly minor: number; readonly bdf: string; readonly model?: string }[];
  readonly gres: string;
  /** The GPUs Slurm is told of: slurm.conf's Gres= for the node (gpu:N, N as many as named or not; odd cases gpu:TYPE:N). */
  readonly ask: string;
  /** AutoDetect=nvml: the GPUs as NVML would list them, for slurmd's own stand-in (fake_gpus.conf, gres_gpu.c). */
  readonly fake?: string;
  /** Files gres.conf includes, by their name under /etc/slurm/gres.d (includeCase). */
  readonly included?: Readonly<Record<string, string>>;
}

const H100 = 'NVIDIA H100 80GB HBM3';

/**
 * AutoDetect=nvml without NVIDIA's library: gres_gpu.c takes fake_gpus.conf (in slurm.conf's directory) instead of
 * asking the plugin, `type|cpus|cpu range|links|file`, and sorts by the links as it does NVML's (each GPU's -1 at the
 * place NVML enumerated it: bus order). slurmd is given AutoDetect=nvidia, which reads no links of its own.
 */
function fakeGpus(gpus: Case['gpus']): string {
  const bus = [...gpus].sort((a, b) => (a.bdf < b.bdf ? -1 : 1));
  return bus.map((g, i) => `${(g.model ?? H100).toLowerCase().replace(/ /g, '_')}|2|0-1|${bus.map((_, k) => (k === i ? -1 : 0)).join(',')}|/dev/nvidia${g.minor}\n`).join('');
}

/** A small seeded generator (mulberry32): the seed is printed, so a failure can be made again. */
function rng(seed: number): (n: number) => number {
  let a = seed >>> 0;
  return (n) => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return (((x ^ (x >>> 14)) >>> 0) % n);
  };
}

function shuffled<T>(r: (n: number) => number, xs: readonly T[]): T[] {
  const a = [...xs];
  for (let i = a.length - 1; i > 0; i--) {
    const j = r(i + 1);
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
}

/** A key as an admin may write it: slurmd reads keys in any case. */
const key = (r: (n: number) => number, k: string): string => [k, k.toLowerCase(), k.toUpperCase()][r(3)]!;
/** Between fields: spaces or tabs, one or more. */
const gap = (r: (n: number) => number): string => [' ', '  ', '\t', ' \t '][r(4)]!;

/**
 * `kind`: which gres.conf shape; the rest drawn: the GPUs, which of them File= names and in which lines, NodeName=
 * as this node's name or a range holding it, lines for another node (slurmd skips them), keys in any case, tabs,
 * comments, quoted values, blanks around `=`, continued lines, a Type= that names the GPUs' model (on all its lines or
 * none).
 */
export function makeCase(r: (n: number) => number, kind: 'nvidia' | 'nvidia-files' | 'nvml' | 'nvml-files' | 'files' | 'override'): Case {
  const k = 1 + r(8);
  const minors = shuffled(r, Array.from({ length: 16 }, (_, i) => i)).slice(0, k);
  const buses = shuffled(r, Array.from({ length: 200 }, (_, i) => i + 0x10)).slice(0, k);
  const gpus = minors.map((minor, i) => ({ minor, bdf: `0000:${buses[i]!.toString(16).padStart(2, '0')}:00.0` }));
  const nvml = kind === 'nvml' || kind === 'nvml-files';
  const fake = nvml ? { fake: fakeGpus(gpus) } : {};
  const auto = `${key(r, 'AutoDetect')}=${nvml ? 'nvml' : 'nvidia'}${r(3) === 0 ? `${gap(r)}# every GPU of the node` : ''}\n`;
  // slurm.conf's count: as many as named, or fewer, or more (slurmd then takes GPUs no line names).
  const ask = (n: number): string => `gpu:${[n, n, 1 + r(n), n + 1 + r(3)][r(4)]}`;
  if (kind === 'nvidia' || kind === 'nvml') return { gpus, gres: r(4) === 0 ? `# GPUs\n${auto}` : auto, ask: ask(k), ...fake };
  const drawn = shuffled(r, minors).slice(0, kind === 'files' ? k : 1 + r(k));
  // Under AutoDetect=nvidia, File= in minor order: where it is not, a Slurm before 24.11 numbers otherwise, and the
  // Prolog says it cannot tell (the odd cases draw that).
  const named = kind === 'nvidia-files' ? [...drawn].sort((a, b) => a - b) : drawn;
  // override: a global AutoDetect (or none) and this node's own (nvidia or off), which wins, on a line of its own
  // (NodeName=n1 or a range holding it), and another node's, which does not count.
  const mine = ['nvidia', 'off'][r(2)]!;
  const override = kind !== 'override' ? '' : [
    ...[[], [`${key(r, 'AutoDetect')}=nvidia`], [`${key(r, 'AutoDetect')}=off`]][r(3)]!,
    `${key(r, 'NodeName')}=${['n1', 'n[1-3]'][r(2)]!} ${key(r, 'AutoDetect')}=${mine}`,
    ...(r(2) === 0 ? [`${key(r, 'NodeName')}=n9 ${key(r, 'AutoDetect')}=${mine === 'off' ? 'nvidia' : 'off'}`] : []),
  ].map((l) => `${l}\n`).join('');
  const lines: string[] = [];
  // A value quoted or not, blanks around `=` or not (slurmd's parse_config.c takes them all).
  const field = (name: string, value: string): string => `${key(r, name)}${['=', '=', ' = ', '= '][r(4)]}${r(4) === 0 ? `"${value}"` : value}`;
  // Type= on every GPU line or on none: slurmd refuses a mix ("some records have \"Type=\" specification while others do not").
  const typed = kind === 'files' && r(3) === 0; // under AutoDetect, whether slurmd keeps a typed line depends on the model's name
  for (let i = 0; i < named.length; ) {
    const n = 1 + r(Math.min(3, named.length - i));
    const group = named.slice(i, i + n);
    i += n;
    const file = group.length === 1 ? `/dev/nvidia${group[0]}` : `/dev/nvidia[${group.join(',')}]`;
    const fields = [field('Name', 'gpu'), ...(typed ? [field('Type', 'h100')] : []), field('File', file)];
    const node = kind === 'files' && r(3) === 0 ? [field('NodeName', ['n1', 'n[1-3]', 'n[0-1]'][r(3)]!)] : [];
    // Fields joined by blanks, or by a backslash that goes on to the next line.
    const join = (): string => (r(5) === 0 ? ` \\\n${gap(r)}` : gap(r));
    lines.push([...node, ...fields].reduce((a, b) => `${a}${join()}${b}`) + (r(4) === 0 ? `${gap(r)}# ${group.length} GPU(s)` : ''));
    // Another node's line: slurmd on n1 reads past it.
    if (r(5) === 0) lines.push([field('NodeName', 'n9'), field('Name', 'gpu'), ...(typed ? [field('Type', 'h100')] : []), field('File', `/dev/nvidia${16 + r(16)}`)].join(' '));
  }
  return { gpus, gres: `${kind === 'nvidia-files' || nvml ? auto : override}${lines.join('\n')}\n`, ask: ask(named.length), ...fake };
}

/**
 * A gres.conf with one thing the numbering does not model or that slurmd reads otherwise than it looks (a Cores= or
 * Links= slurmd compares with the GPU, a Type= not in the model's name, Count=, Flags=, Files=, Name=GPU, a comma
 * list, an AutoDetect on a Name= line, a NodeName glob, two global AutoDetects): the Prolog must number as slurmd
 * does or say it cannot, never otherwise.
 */
export function oddCase(r: (n: number) => number): Case {
  if (r(4) === 0) {
    // slurm.conf asks for typed GPUs (gpu:h100:N; the GPUs' model or another), sometimes on a node whose GPUs are not
    // all of one model, for as many GPUs as the node has or as the case drew; gres.conf's lines, where any, untyped.
    const c = makeCase(r, (['files', 'nvidia-files', 'nvidia', 'nvml', 'nvml-files'] as const)[r(5)]!);
    const other = c.gpus.length > 1 && r(3) === 0 ? r(c.gpus.length) : -1;
    const gpus = c.gpus.map((g, k) => (k === other ? { ...g, model: 'NVIDIA A100-SXM4-80GB' } : g));
    const count = r(2) === 0 ? c.gpus.length : Number(c.ask.slice(c.ask.lastIndexOf(':') + 1));
    return { ...c, gpus, ask: `gpu:${['h100', 'a100', 'H100'][r(3)]!}:${count}`, ...(c.fake !== undefined ? { fake: fakeGpus(gpus) } : {}) };
  }
  const c = makeCase(r, r(2) === 0 ? 'files' : 'nvidia-files');
  const lines = c.gres.replace(/\\\n[ \t]*/g, ' ').split('\n').filter(Boolean);
  const gpu = lines.findIndex((l) => /^(nodename[ \t]*=[ \t]*\S+[ \t]+)?name[ \t]*=/i.test(l) && !/n9/.test(l));
  const edits: ((ls: string[]) => string[])[] = [
    (ls) => ls.map((l, i) => (i === gpu ? `${l} Cores=0-1` : l)),
    (ls) => ls.map((l, i) => (i === gpu ? `${l} Cores=5` : l)),
    (ls) => ls.map((l, i) => (i === gpu ? `${l} Links=-1` : l)),
    (ls) => ls.map((l) => (/name *= *"?gpu/i.test(l) && !/type/i.test(l) ? `${l} Type=a100` : l)),
    (ls) => ls.map((l, i) => (i === gpu ? `${l} Flags=nvidia_gpu_env` : l)),
    (ls) => ls.map((l, i) => (i === gpu ? l.replace(/file( *)=/i, 'Files$1=') : l)),
    (ls) => ls.map((l, i) => (i === gpu ? l.replace(/name( *)= *"?gpu"?/i, 'Name=GPU') : l)),
    (ls) => ls.map((l, i) => (i === gpu ? l.replace(/\[([0-9,]+)\]/, (_, g: string) => g.split(',').join(',/dev/nvidia')) : l)),
    (ls) => [...ls.slice(0, gpu), ls[gpu]!.replace(/(name *= *"?gpu"?)/i, '$1 AutoDetect=nvidia'), ...ls.slice(gpu + 1)].filter((l) => !/^autodetect/i.test(l)),
    // A GPU of this node that no line names (else one that does), on a line for a node called n*: taken as n1's,
    // it would change the order.
    (ls) => [`NodeName=n* Name=gpu File=/dev/nvidia${(c.gpus.find((g) => !new RegExp(`nvidia(\\[[0-9,]*)?\\b${g.minor}\\b`).test(c.gres)) ?? c.gpus[0]!).minor}`, ...ls],
    (ls) => [`NodeName="n0 n1" AutoDetect=off`, ...ls],
    (ls) => ['AutoDetect=nvidia', 'AutoDetect=off', ...ls.filter((l) => !/^autodetect/i.test(l))],
  ];
  if (gpu < 0) throw new Error(`oddCase: no GPU line in ${JSON.stringify(c.gres)}`);
  return { ...c, gres: `${edits[r(edits.length)]!(lines).join('\n')}\n` };
}

/**
 * A plain case whose gres.conf lines are split over files it includes (parse_config.c _parse_include_directive, the
 * keyword in any case): a run of its lines moved into gres.d/a.conf, named relative (from slurm.conf's directory) or
 * absolute, where the run stood; sometimes a run of that file moved on into gres.d/b.conf, included from a.conf. So
 * the Name= lines of one file and the NodeName= lines of another meet in slurmd's order (every Name= line first).
 */
export function includeCase(r: (n: number) => number): Case {
  const c = makeCase(r, (['files', 'nvidia-files'] as const)[r(2)]!);
  const include = (name: string): string => `${['Include', 'include', 'INCLUDE'][r(3)]!}${gap(r)}${r(2) === 0 ? `gres.d/${name}` : `/etc/slurm/gres.d/${name}`}`;
  /** `lines` with a drawn run of them (one at least) moved into `name`, and that file's text. */
  const split = (lines: readonly string[], name: string): [string[], string] => {
    const a = r(lines.length);
    const b = a + 1 + r(lines.length - a);
    return [[...lines.slice(0, a), include(name), ...lines.slice(b)], `${lines.slice(a, b).join('\n')}\n`];
  };
  const lines = c.gres.replace(/\\\n[ \t]*/g, ' ').split('\n').filter(Boolean);
  const [top, a] = split(lines, 'a.conf');
  const included: Record<string, string> = { 'a.conf': a };
  if (r(2) === 0) {
    const [inner, b] = split(a.split('\n').filter(Boolean), 'b.conf');
    included['a.conf'] = `${inner.join('\n')}\n`;
    included['b.conf'] = b;
  }
  return { ...c, gres: `${top.join('\n')}\n`, included };
}

/**
 * slurm.conf's lines for the node, drawn: its own line or a range holding it, the Gres= there or on a NodeName=DEFAULT
 * line before it, keys in any case, another node's line (slurmd reads past it).
 */
function nodeLines(r: (n: number) => number, ask: string): string {
  const gres = `${key(r, 'Gres')}=${ask}`;
  const other = r(3) === 0 ? [`NodeName=n9 ${key(r, 'Gres')}=gpu:1 CPUs=2`] : [];
  const own = `${key(r, 'NodeName')}=${['n1', 'n[1-3]', 'n0,n1'][r(3)]!}`;
  const lines = r(3) === 0 ? [`NodeName=DEFAULT ${gres}`, ...other, `${own} CPUs=2 State=UNKNOWN`] : [...other, `${own} ${gres} CPUs=2 State=UNKNOWN`];
  return `${lines.join('\n')}\n`;
}

/**
 * The minors in the order slurmGpuOrder gives Slurm's indices, or why it derives none: gres.conf (and the files it
 * includes) read as the Prolog reads them (readGres, from a copy of the case under `dir`), slurm.conf's lines too.
 */
async function derived(c: Case, nodes: string, dir: string): Promise<number[] | string> {
  const slurm = join(dir, 'prolog-root/etc/slurm');
  mkdirSync(join(slurm, 'gres.d'), { recursive: true });
  writeFileSync(join(slurm, 'gres.conf'), c.gres);
  for (const [name, text] of Object.entries(c.included ?? {})) writeFileSync(join(slurm, 'gres.d', name), text);
  const g = await readGres(new FsHost(join(dir, 'prolog-root')), '/etc/slurm/gres.conf');
  if (g.state !== 'present') return `gres.conf: ${g.state === 'unknown' ? g.why : 'absent'}`;
  const entries = parseConf(nodes, 'slurm.conf').order.flatMap((o) => (o.kind === 'entry' ? [o.entry] : []));
  const a = nodeGpuAsk(entries, 'n1');
  const asked = !a.ok ? unknown(a.error) : a.value === null ? ABSENT : present(a.value);
  const models = present(new Map(c.gpus.map((x) => [x.minor, x.model ?? H100])));
  const o = slurmGpuOrder({ gres: g, gresPath: 'gres.conf', minors: present(new Map(c.gpus.map((x) => [x.minor, x.bdf]))), node: 'n1', asked, models });
  return o.ok ? o.gpus.map((x) => x.minor) : o.why;
}

const KINDS = ['nvidia', 'nvidia-files', 'nvml', 'nvml-files', 'files', 'override', 'odd', 'include'] as const;
type Kind = (typeof KINDS)[number];

/** `root`: an unpacked Debian root with slurmd 24.11+ (gpu/nvidia). `kinds`: the shapes drawn, in turn. */
export async function gresOrderOracle(t: Test, root: string, cases = 30, kinds: readonly Kind[] = KINDS): Promise<void> {
  const seed = Number(process.env.GDRGATE_GRES_SEED ?? Date.now() % 1_000_000);
  t.comment(`gres order: seed ${seed} (GDRGATE_GRES_SEED=${seed} draws the same cases)`);
  const r = rng(seed);
  const work = mkdtempSync('/tmp/gdrgate-gres-order-');
  let derivedCount = 0;
  for (let i = 0; i < cases; i++) {
    const kind = kinds[i % kinds.length]!;
    const c = kind === 'odd' ? oddCase(r) : kind === 'include' ? includeCase(r) : makeCase(r, kind);
    const dir = join(work, String(i));
    run('/bin/mkdir', [dir]);
    writeFileSync(join(dir, 'gpus'), c.gpus.map((g) => `${g.minor} ${g.bdf} ${g.model ?? H100}\n`).join(''));
    // AutoDetect=nvml: slurmd gets AutoDetect=nvidia and NVML's list from fake_gpus.conf (gres-order.sh copies it).
    writeFileSync(join(dir, 'gres.conf'), c.fake === undefined ? c.gres : c.gres.replace(/(autodetect[ \t]*=[ \t]*"?)nvml/gi, '$1nvidia'));
    if (c.fake !== undefined) writeFileSync(join(dir, 'fake_gpus.conf'), c.fake);
    if (c.included !== undefined) {
      run('/bin/mkdir', [join(dir, 'gres.d')]);
      for (const [name, text] of Object.entries(c.included)) writeFileSync(join(dir, 'gres.d', name), text);
    }
    const nodes = nodeLines(r, c.ask);
    writeFileSync(join(dir, 'nodes'), nodes);
    const s = run('/usr/bin/unshare', ['-m', '/bin/bash', join(REPO, 'test/e2e/trixie/gres-order.sh'), root, dir], { timeoutMs: 60_000 });
    const slurm = s.stdout.split('\n').filter(Boolean).map((f) => Number(f.slice('/dev/nvidia'.length)));
    const files = Object.entries(c.included ?? {}).map(([name, text]) => ` || gres.d/${name}: ${text.trim().replace(/\n/g, ' | ')}`).join('');
    const what = `${c.gpus.map((g) => `nvidia${g.minor}=${g.bdf}`).join(' ')} | ${c.gres.trim().replace(/\n/g, ' | ')}${files} || ${nodes.trim().replace(/\n/g, ' | ')}`;
    const d = await derived(c, nodes, dir);
    const refused = /fatal:/.test(readFileSync(join(dir, 'slurmd.out'), 'utf8'));
    // Under nvml, slurm.conf asking for more GPUs than the node has is not derived (MIG instances count as GPUs there).
    const moreThanNvml = c.fake !== undefined && Number(c.ask.slice(c.ask.lastIndexOf(':') + 1)) > c.gpus.length;
    if (kind !== 'odd' && kind !== 'override' && !moreThanNvml && (typeof d === 'string' || refused)) t.fail(`a plain case must be derived and run: ${typeof d === 'string' ? d : 'slurmd refused it'}: ${what}`);
    else if (typeof d === 'string') t.pass(`not derived (${d}): ${what}`);
    else if (refused) t.pass(`slurmd refuses this gres.conf (no job gets a GPU): ${what}`);
    // slurm.conf typed unlike gres.conf's lines without AutoDetect: slurmd keeps no GPU ("Ignoring file-less GPU"), and
    // the node, reporting none of those slurm.conf says, takes no GPU job: no index to name.
    else if (kind === 'odd' && !slurm.length && /:[a-z]/i.test(c.ask)) t.pass(`slurmd keeps no GPU of a typed slurm.conf Gres= (no job gets one): ${what}`);
    else {
      derivedCount++;
      // Indices from 0 to the count slurm.conf asks for less one are all a job is given: asked for fewer than the
      // Prolog's order holds (without AutoDetect, or by minor under nvidia), slurmd's list is its first ones.
      t.same(d.slice(0, Number(c.ask.slice(c.ask.lastIndexOf(':') + 1))), slurm, what);
    }
  }
  t.comment(`gres order: ${derivedCount} of ${cases} derived and compared with slurmd`);
}
