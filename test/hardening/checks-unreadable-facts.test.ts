// Seeded fuzzer: on the generated 8-GPU tree (read as root, and as a normal user), one sysfs/procfs attribute a check
// reads is made garbage, empty, huge or unreadable. No check may turn that into a `fail` (or an `error`), nor into a
// `pass` the healthy tree did not give (a pass that came from the broken fact): only skip/warn, each with a reason.
// A config space of all ones is not a broken fact but the device's answer, "fallen off the bus" (device-inventory fails
// it: test/checks/device-inventory.test.ts): a huge config here is 16 KiB of zeros, no device's header.
// Bounded: a fixed number of mutations per tree (the same on an idle and a loaded machine), one tree on tmpfs at a time, each mutation undone before the next.
import t from 'tap';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CHECKS } from '../../src/checks/index.js';
import { FsHost } from '../../src/host/fs-host.js';
import { buildInventory } from '../../src/inventory/build.js';
import type { BaselineClass } from '../../src/model/baseline.js';
import type { Finding } from '../../src/model/finding.js';
import { allDevices, buildTree, type GenNode } from '../gen/sysfs-tree.js';
import { captureFrom, hgx, P0 } from '../checks/_trees.js';
import { mulberry32 } from '../helpers/seeded.js';
import { scratchDir } from '../helpers/scratch.js';

/** mulberry32 (test/helpers/seeded.ts): a fixed seed makes every failure reproducible. */
const rng = mulberry32;
const SEED = Number(process.env['GDRGATE_FUZZ_SEED'] ?? 20251201);
/** Mutations per tree (a count, not a time budget: a loaded machine runs the same cases, only slower). */
const MUTATIONS = Number(process.env['GDRGATE_FUZZ_MUTATIONS'] ?? 32);
const TMP = existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir();

type Kind = 'garbage' | 'empty' | 'huge' | 'unreadable';
const KINDS: readonly Kind[] = ['garbage', 'empty', 'huge', 'unreadable'];

/** Bytes no kernel writes there: control characters, high bytes, a stray unit; a fresh draw per mutation. */
function garbage(r: () => number): string {
  const pool = ['\u0000', '\u0007', '\u00ff', 'GT/s', '-', 'x', '9'.repeat(40), ' ', '\t', 'NaN', '\u001b[0m'];
  return Array.from({ length: 1 + Math.floor(r() * 5) }, () => pool[Math.floor(r() * pool.length)]!).join('');
}

/**
 * The attributes a check reads, per device. Not here: `vendor` and `class` (they decide what a device is, before any
 * check: an unreadable one hides the device, which device-inventory reports as missing), and random bytes in `config`
 * (they decode as registers; only its readability and length are mutated).
 */
function attributes(n: GenNode, r: () => number): string[] {
  const devs = allDevices(n);
  const ends = devs.filter((d) => d.kind === 'gpu' || d.kind === 'nic');
  const pick = [P0.gpu, P0.nic, P0.downGpu, P0.downNic, P0.up, ends[Math.floor(r() * ends.length)]!.bdf];
  const out = pick.flatMap((b) =>
    ['numa_node', 'local_cpulist', 'current_link_speed', 'current_link_width', 'max_link_speed', 'max_link_width', 'config'].map((a) => `sys/bus/pci/devices/${b}/${a}`),
  );
  const nic = devs.find((d) => d.bdf === P0.nic)!;
  const gpu = devs.find((d) => d.bdf === P0.gpu)!;
  out.push(`sys/class/infiniband/${nic.ib!.name}/fw_ver`, `sys/kernel/iommu_groups/${gpu.iommuGroup}/type`, 'proc/self/limits');
  return out;
}

/** What a check said, without the free wording: a pass must come back exactly like this or not at all. */
const key = (f: Finding): string => JSON.stringify([f.check, f.subject, f.code, f.status, f.expected ?? null, f.actual ?? null]);

async function run(root: string, baseline: BaselineClass | null): Promise<Finding[]> {
  const inv = await buildInventory(new FsHost(root));
  return CHECKS.flatMap((c) => c.run({ inv, baseline }));
}

function verdicts(healthy: readonly Finding[], now: readonly Finding[]): string[] {
  const ok = new Set(healthy.map(key));
  const bad: string[] = [];
  for (const f of now) {
    if ((f.status === 'fail' || f.status === 'error') && !ok.has(key(f))) bad.push(`${f.status}: ${f.check} ${f.code} ${f.subject}: ${f.message}`);
    if (f.status === 'pass' && !ok.has(key(f))) bad.push(`new pass: ${f.check} ${f.code} ${f.subject} (${f.expected} / ${f.actual}): ${f.message}`);
    if ((f.status === 'skip' || f.status === 'warn') && f.message.trim() === '') bad.push(`${f.status} without a reason: ${f.check} ${f.code} ${f.subject}`);
  }
  return bad;
}

for (const [label, bytes] of [['as root (4 KiB config)', 4096], ['as a normal user (64-byte config)', 64]] as const) {
  t.test(`8-GPU tree read ${label}: a broken fact is never a fail nor a new pass`, async (t) => {
    const r = rng(SEED + bytes);
    const n = hgx();
    for (const d of allDevices(n)) d.configBytes = bytes;
    const root = scratchDir('gdrgate-fuzz-', TMP);
    t.teardown(() => rmSync(root, { recursive: true, force: true }));
    await buildTree(root, n);
    const baseline = captureFrom(await buildInventory(new FsHost(root)));
    const healthy = { bare: await run(root, null), based: await run(root, baseline) };
    const jobs = attributes(n, r).flatMap((a) => KINDS.map((k) => [a, k] as const));
    // Seeded order, so that the first MUTATIONS spread over attributes and kinds.
    for (let i = jobs.length - 1; i > 0; i--) {
      const j = Math.floor(r() * (i + 1));
      [jobs[i], jobs[j]] = [jobs[j]!, jobs[i]!];
    }
    let done = 0;
    for (const [attr, kind] of jobs.slice(0, MUTATIONS)) {
      const file = path.join(root, attr);
      const before = readFileSync(file);
      rmSync(file, { recursive: true, force: true });
      if (kind === 'unreadable') mkdirSync(file); // root reads through mode bits; a directory answers EISDIR
      else if (attr.endsWith('/config')) writeFileSync(file, kind === 'empty' ? Buffer.alloc(0) : kind === 'huge' ? Buffer.alloc(16384, 0) : before.subarray(0, 1 + Math.floor(r() * 63)));
      else writeFileSync(file, kind === 'empty' ? '' : kind === 'huge' ? '9'.repeat(256 * 1024) : `${garbage(r)}\n`);
      const bad = [...verdicts(healthy.bare, await run(root, null)), ...verdicts(healthy.based, await run(root, baseline))];
      t.strictSame(bad, [], `${kind} ${attr} (seed ${SEED + bytes})`);
      rmSync(file, { recursive: true, force: true });
      writeFileSync(file, before);
      done++;
    }
    t.equal(done, Math.min(jobs.length, MUTATIONS), `${done} of ${jobs.length} mutations (seed ${SEED + bytes})`);
  });
}
