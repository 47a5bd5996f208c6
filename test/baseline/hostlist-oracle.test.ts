// Slurm hostlists in class patterns mean what Slurm means: generated bracket expressions (mixed widths, wide
// numbers, lists) are expanded by the real `scontrol show hostnames`, and every name it lists, and the near misses
// around them (a zero more or less, the neighbours of each bound), must match exactly when Slurm lists them. Skips
// where scontrol is absent (CI installs Slurm).
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { compilePattern } from '../../src/baseline/match.js';
import { seeded } from '../helpers/seeded.js';

const SCONTROL = '/usr/bin/scontrol';

/** One part of a bracket: a low bound written with its own width, a high bound at or above it. */
function part(r: ReturnType<typeof seeded>): string {
  const lo = r.pick([0, 1, 2, 7, 9, 10, 64, 99, 100, 998]);
  const width = Math.max(String(lo).length, r.pick([1, 1, 2, 3, 4]));
  const hi = lo + r.pick([0, 1, 3, 9, 11, 95, 150]);
  const loText = String(lo).padStart(width, '0');
  const hiText = r.int(4) === 0 ? String(hi).padStart(width + 1, '0') : String(hi);
  return hi === lo && r.int(2) === 0 ? loText : `${loText}-${hiText}`;
}

function pattern(r: ReturnType<typeof seeded>): string {
  const bracket = (): string => `[${Array.from({ length: 1 + r.int(3) }, () => part(r)).join(',')}]`;
  const one = (): string => r.pick(['gpu', 'node-', 'r']) + bracket() + (r.int(4) === 0 ? `g${bracket()}` : '');
  // The separators scontrol takes between names (a comma most often; a space, a tab: hostlist.c _hostlist_create).
  return Array.from({ length: 1 + r.int(2) }, one).reduce((a, b) => `${a}${r.pick([',', ',', ' ', '\t', ', '])}${b}`);
}

/** The names Slurm lists, and for each: with a leading zero more, one less, and the numbers beside it. */
function probes(names: readonly string[]): string[] {
  const out = new Set<string>(names);
  for (const n of names) {
    const m = /^(.*?)(\d+)$/.exec(n);
    if (!m) continue;
    const [, head, digits] = m as unknown as [string, string, string];
    out.add(`${head}0${digits}`);
    if (digits.startsWith('0')) out.add(`${head}${digits.slice(1)}`);
    for (const d of [-1, 1]) out.add(`${head}${String(Number(digits) + d).padStart(digits.length, '0')}`);
  }
  return [...out];
}

t.test('generated hostlists against scontrol show hostnames', { skip: existsSync(SCONTROL) ? false : `${SCONTROL} absent` }, async (t) => {
  const conf = path.join(t.testdir(), 'slurm.conf');
  writeFileSync(conf, 'ClusterName=hostlist\nSlurmctldHost=localhost\nNodeName=gpu1\nPartitionName=p Nodes=gpu1\n');
  const r = seeded(20261204);
  let compared = 0;
  for (let i = 0; i < 60; i++) {
    const p = pattern(r);
    const s = spawnSync(SCONTROL, ['show', 'hostnames', p], { encoding: 'utf8', env: { SLURM_CONF: conf }, timeout: 30_000 });
    if (s.status !== 0) {
      t.fail(`scontrol refused ${p}: ${s.stderr.trim()}`);
      continue;
    }
    const listed = new Set(s.stdout.split('\n').filter(Boolean));
    const compiled = compilePattern(p);
    const wrong = probes([...listed]).filter((h) => compiled.test(h) !== listed.has(h));
    compared += listed.size;
    t.same(wrong, [], `${p}: names where gdrgate and Slurm disagree`);
  }
  t.ok(compared > 1000, `names compared: ${compared}`);
});

/** A bracket of digits, dashes and commas in any order: ranges, and the ways a range is mistyped. */
function anyBracket(r: ReturnType<typeof seeded>): string {
  return `gpu[${Array.from({ length: 1 + r.int(6) }, () => r.pick(['0', '1', '2', '9', '1', '-', '-', ','])).join('')}]`;
}

t.test('brackets of digits, dashes and commas: gdrgate refuses, or reads them as Slurm does', { skip: existsSync(SCONTROL) ? false : `${SCONTROL} absent` }, async (t) => {
  const conf = path.join(t.testdir(), 'slurm.conf');
  writeFileSync(conf, 'ClusterName=hostlist\nSlurmctldHost=localhost\nNodeName=gpu1\nPartitionName=p Nodes=gpu1\n');
  const r = seeded(20261208);
  const seen = new Set<string>();
  let [refusedBoth, refusedHere, read] = [0, 0, 0];
  for (let i = 0; i < 400 && seen.size < 120; i++) {
    const p = anyBracket(r);
    if (seen.has(p)) continue;
    seen.add(p);
    const s = spawnSync(SCONTROL, ['show', 'hostnames', p], { encoding: 'utf8', env: { SLURM_CONF: conf }, timeout: 30_000 });
    // scontrol exits 0 either way: a hostlist it refuses lists nothing and says "Invalid hostlist".
    const listed = new Set(s.stdout.split('\n').filter(Boolean));
    const slurmReads = s.status === 0 && listed.size > 0 && !s.stderr.includes('Invalid hostlist');
    let compiled: ReturnType<typeof compilePattern> | null = null;
    try {
      compiled = compilePattern(p);
    } catch {
      if (slurmReads) refusedHere++; // stricter than Slurm (gpu[1-], which scontrol reads as gpu1): said at validate
      else refusedBoth++;
      continue;
    }
    t.equal(slurmReads, true, `${p}: gdrgate reads what scontrol refuses (${s.stderr.trim().split('\n').at(-1)})`);
    t.same(probes([...listed, 'gpu-', 'gpu,']).filter((h) => compiled.test(h) !== listed.has(h)), [], `${p}: names where gdrgate and Slurm disagree`);
    read++;
  }
  t.ok(refusedBoth > 10 && read > 10, `refused by both ${refusedBoth}, by gdrgate alone ${refusedHere}, read by both ${read}`);
});
