// The live H200's placement, from scripts/device-placement.sh (outputs kept in test/fixtures/device-h200-live/):
// the minor → BDF map the gate reads from /proc/driver/nvidia/gpus/*/information equals NVIDIA's own
// (nvidia-smi -q "Minor Number"/"Bus Id", and the GPUs of nvidia-smi --query-gpu=index,pci.bus_id), and a process
// pinned with taskset reports exactly the CPUs the kernel gave it. Skipped, saying so, until those files exist.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { parseGpuInformation } from '../../src/parsers/nvidia-gpu.js';
import { REPO } from '../helpers/paths.js';

const DIR = path.join(REPO, 'test/fixtures/device-h200-live');
const FILES = ['placement-information.txt', 'placement-nvsmi.csv', 'placement-nvsmi-q.txt', 'placement-task.txt'] as const;
const missing = FILES.filter((f) => !existsSync(path.join(DIR, f)));
const read = (f: (typeof FILES)[number]): string => readFileSync(path.join(DIR, f), 'utf8');
/** nvidia-smi prints `00000000:00:06.0`; sysfs and the module `0000:00:06.0`. */
const bdf = (s: string): string => s.trim().toLowerCase().replace(/^0{4}([0-9a-f]{4}:)/, '$1');
/** "== title" blocks of a file. */
const blocks = (text: string): { title: string; body: string }[] =>
  text.split(/^== /m).filter(Boolean).map((b) => ({ title: b.slice(0, b.indexOf('\n')), body: b.slice(b.indexOf('\n') + 1) }));

if (missing.length) t.skip(`live H200 placement: ${missing.join(', ')} not in test/fixtures/device-h200-live yet (run scripts/device-placement.sh on the H200 and copy its outputs there)`, () => {});
else {
  const infos = blocks(read('placement-information.txt')).map((b) => ({ file: b.title, p: parseGpuInformation(b.body) }));

  t.test('every information file parses, and names the directory it is in', async (t) => {
    t.ok(infos.length > 0, `${infos.length} GPU(s)`);
    for (const i of infos) if (t.ok(i.p.ok, i.file) && i.p.ok) t.equal(i.file, `/proc/driver/nvidia/gpus/${i.p.value.bdf}/information`);
  });

  const mine = new Map(infos.flatMap((i) => (i.p.ok ? [[i.p.value.minor, i.p.value.bdf] as const] : [])));

  t.test('minor → BDF equals nvidia-smi -q (Minor Number, Bus Id)', async (t) => {
    const lines = read('placement-nvsmi-q.txt').split('\n').filter(Boolean).map((l) => l.split(':').slice(1).join(':').trim());
    const theirs = new Map<number, string>();
    // -q prints per GPU "Minor Number" then (under PCI) "Bus Id".
    for (let k = 0; k + 1 < lines.length; k += 2) theirs.set(Number(lines[k]), bdf(lines[k + 1]!));
    t.same([...mine].sort(), [...theirs].sort());
  });

  t.test('the GPUs of nvidia-smi --query-gpu=index,pci.bus_id are the module\'s', async (t) => {
    const rows = read('placement-nvsmi.csv').split('\n').filter(Boolean).map((l) => l.split(',').map((x) => x.trim()));
    t.same(rows.map((r) => bdf(r[1]!)).sort(), [...mine.values()].sort(), 'the same PCI addresses');
    t.same(rows.map((r) => Number(r[0])).sort(), rows.map((_, i) => i), 'indices 0..n-1 (NVML order, not necessarily minors)');
  });

  t.test('a process pinned with taskset reports its placement as the kernel has it', async (t) => {
    const runs = blocks(read('placement-task.txt')).filter((b) => b.title.startsWith('taskset -c '));
    t.ok(runs.length >= 4, `${runs.length} pinned runs`);
    for (const r of runs) {
      const kernel = /^Cpus_allowed_list:\s*(\S+)$/m.exec(r.body)?.[1];
      const mems = /^Mems_allowed_list:\s*(\S+)$/m.exec(r.body)?.[1];
      const line = r.body.split('\n').find((l) => /^\S+\s+job-placement\s/.test(l)) ?? '';
      t.ok(kernel, `${r.title}: the kernel's Cpus_allowed_list`);
      t.equal(line, `PASS    job-placement   job                    this job's CPUs ${kernel} and memory nodes ${mems} are near its GPUs 0=0000:00:06.0`, `${r.title}: ${line.trim()}`);
    }
  });
}
