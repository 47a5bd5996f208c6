// Every parser fed thousands of seeded mutations of real captured outputs: it never throws past its boundary
// and never hands back NaN as a number.
import t from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseCpuList, parseLinkSpeed, parseLinkWidth, parseNumaNode, parsePciClass, parsePciId } from '../../src/parsers/sysfs.js';
import { parseLimits, parseMemlock, parseSize } from '../../src/parsers/limits.js';
import { parseIommuCmdline, parseKernelRelease, parseModules, parseNvidiaVersion } from '../../src/parsers/procfs.js';
import { parseShowNode } from '../../src/parsers/scontrol.js';
import { parseNvsmiTopo } from '../../src/parsers/nvsmi-topo.js';
import { parseIbWriteBw } from '../../src/parsers/ib-write-bw.js';
import { parseNvbandwidth } from '../../src/parsers/nvbandwidth.js';
import { parsePortCounter } from '../../src/parsers/ib-counter.js';
import { fixture, H200 } from '../helpers/paths.js';
import { mulberry32 } from '../helpers/seeded.js';

/** mulberry32 (test/helpers/seeded.ts): a fixed seed makes every failure reproducible. */
const rng = mulberry32;

const JUNK = ['', ' ', '\n', '\t', '-', '.', '0', '9', 'x', 'NaN', 'Infinity', '-1', '\u0000', '\u00e9', 'GT/s', '|', '[', ']', '=', 'unlimited'];

function mutate(s: string, r: () => number): string {
  let out = s;
  const n = 1 + Math.floor(r() * 4);
  for (let i = 0; i < n; i++) {
    const at = Math.floor(r() * (out.length + 1));
    const op = Math.floor(r() * 4);
    if (op === 0) out = out.slice(0, at) + out.slice(at + 1 + Math.floor(r() * 8)); // delete
    else if (op === 1) out = out.slice(0, at) + JUNK[Math.floor(r() * JUNK.length)]! + out.slice(at); // insert
    else if (op === 2) out = out.slice(0, at); // truncate
    else out = out.slice(0, at) + out.slice(at).replace(/\d/, String(Math.floor(r() * 10))); // change a digit
  }
  return out;
}

/** Walks a result: any number must be finite (an unexpected unit is an error, never a silent NaN or 0). */
function nans(v: unknown, where = '$'): string[] {
  if (typeof v === 'number') return Number.isNaN(v) ? [where] : [];
  if (v instanceof Map) return [...v].flatMap(([k, x]) => nans(x, `${where}.${String(k)}`));
  if (v instanceof Set) return [];
  if (Array.isArray(v)) return v.flatMap((x, i) => nans(x, `${where}[${i}]`));
  if (v && typeof v === 'object') return Object.entries(v).flatMap(([k, x]) => nans(x, `${where}.${k}`));
  return [];
}

const read = (p: string) => readFileSync(p, 'utf8');
const dir = (d: string) => readdirSync(fixture(d)).filter((f) => f.endsWith('.txt')).map((f) => read(fixture(d, f)));
const gpu = path.join(H200, 'sys/devices/pci0000:00/0000:00:06.0');

const parsers: [string, (s: string) => unknown, string[]][] = [
  ['parseLinkSpeed', parseLinkSpeed, [read(`${gpu}/current_link_speed`), '2.5 GT/s PCIe\n', 'Unknown\n']],
  ['parseLinkWidth', parseLinkWidth, [read(`${gpu}/current_link_width`)]],
  ['parsePciId', parsePciId, [read(`${gpu}/vendor`), read(`${gpu}/device`)]],
  ['parsePciClass', parsePciClass, [read(`${gpu}/class`)]],
  ['parseNumaNode', parseNumaNode, [read(`${gpu}/numa_node`)]],
  ['parseCpuList', parseCpuList, [read(`${gpu}/local_cpulist`), '0-47,96-143\n']],
  ['parseLimits', parseLimits, [read(path.join(H200, 'proc/self/limits'))]],
  ['parseMemlock', parseMemlock, [read(path.join(H200, 'proc/1/limits'))]],
  ['parseSize', parseSize, ['64K', '8MiB', 'unlimited']],
  ['parseModules', parseModules, [read(path.join(H200, 'proc/modules'))]],
  ['parseKernelRelease', parseKernelRelease, [read(path.join(H200, 'proc/version'))]],
  ['parseIommuCmdline', parseIommuCmdline, [read(path.join(H200, 'proc/cmdline'))]],
  ['parseNvidiaVersion', parseNvidiaVersion, dir('nvidia-version')],
  ['parseShowNode', (s: string) => parseShowNode(s, 'vm'), dir('scontrol')],
  ['parseNvsmiTopo', parseNvsmiTopo, dir('nvidia_smi_topo')],
  ['parseIbWriteBw', (s) => parseIbWriteBw(s), dir('ib_write_bw')],
  ['parseNvbandwidth', (s) => parseNvbandwidth(s), dir('nvbandwidth')],
  // hwloc's 32em64t-2n8c capture (test/fixtures/sysfs-real), mlx4_0 port 1's counters/port_{xmit,rcv}_data; the PMA's N/A.
  [
    'parsePortCounter',
    (s) => {
      const r = parsePortCounter(s);
      // What it takes is the text's own digits, exactly; anything else is refused.
      if (r.ok && `${r.value}` !== s.replace(/\n$/, '')) throw new Error(`read ${r.value} from ${JSON.stringify(s)}`);
      return r;
    },
    ['8039908\n', '5550796\n', 'N/A (no PMA)\n'],
  ],
];

for (const [name, parse, seeds] of parsers) {
  t.test(`${name}: 2000 seeded mutations of real outputs`, async (t) => {
    const r = rng(0x9d7a11 ^ name.length);
    const bad: string[] = [];
    for (let i = 0; i < 2000; i++) {
      const input = mutate(seeds[i % seeds.length]!, r);
      try {
        const found = nans(parse(input));
        if (found.length) bad.push(`NaN at ${found[0]} for ${JSON.stringify(input.slice(0, 80))}`);
      } catch (e) {
        bad.push(`threw ${(e as Error).message} for ${JSON.stringify(input.slice(0, 80))}`);
      }
    }
    t.same(bad.slice(0, 5), [], `${seeds.length} real seed(s), no throw, no NaN`);
  });
}
