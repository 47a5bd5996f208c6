// rdma_topo as an oracle, shared by the differential fuzzer's test and its loop script (not a test): the same invocation
// and output parsing as acs-oracle.test.ts (RDMA_TOPO_DEVDIR at a generated tree, `rdma_topo check`), and the same
// agreement rule, made into a value (the two sides as sorted lists) so a loop can count and classify disagreements.
import { type ChildProcessWithoutNullStreams, spawn, spawnSync } from 'node:child_process';
import { createInterface } from 'node:readline';
import path from 'node:path';
import { existsSync, rmSync } from 'node:fs';
import { CHECKS } from '../../src/checks/index.js';
import { FsHost } from '../../src/host/fs-host.js';
import { buildInventory } from '../../src/inventory/build.js';
import type { CheckId, Finding } from '../../src/model/finding.js';
import type { Inventory } from '../../src/model/inventory.js';
import { parentOf, typeOf } from '../../src/pcie/pci-kind.js';
import { buildTree, type GenNode } from '../gen/sysfs-tree.js';
import { shared } from '../helpers/paths.js';
import { scratchDirAsync, TREE_TMP } from '../helpers/scratch.js';

/** The oracle: GDRGATE_RDMA_TOPO, else shared/oracles/rdma_topo/rdma_topo beside the repo. */
export const ORACLE = process.env.GDRGATE_RDMA_TOPO ?? shared('oracles/rdma_topo/rdma_topo');
const python = spawnSync('python3', ['--version'], { encoding: 'utf8', timeout: 20_000 }).status === 0;
/** Why the comparison with rdma_topo cannot run, or false when it can. */
export const noOracle: string | false = existsSync(ORACLE) ? (python ? false : 'rdma_topo oracle not available (no python3)') : `rdma_topo oracle not available (${ORACLE} absent)`;

/** numaBased: rdma_topo took the tree for a NUMA-based (Grace root port) topology (its check's OK line, or its refusal's words). */
export interface Oracle { ports: Map<string, { ok: boolean | null; mask: string | null; type: string }>; groups: string[]; error: string | null; numaBased: boolean; stdout: string }

/** `rdma_topo check` on a tree, in a process of its own (as acs-oracle.test.ts runs it). */
export function oracleSpawn(root: string): { stdout: string; stderr: string; status: number | null } {
  return spawnSync('python3', [ORACLE, 'check'], { env: { PATH: process.env.PATH ?? '', RDMA_TOPO_DEVDIR: `${root}/sys/bus/pci/devices/` }, encoding: 'utf8', timeout: 60_000 });
}

/** The same through test/gen/rdma-topo-driver.py: one Python process for every tree (GDRGATE_FUZZ_SPAWN=1: one each). */
let driver: { p: ChildProcessWithoutNullStreams; next: (line: string) => void; queue: ((l: string) => void)[] } | null = null;
async function oracleDriver(root: string): Promise<{ stdout: string; stderr: string; status: number | null }> {
  if (process.env.GDRGATE_FUZZ_SPAWN) return oracleSpawn(root);
  if (!driver) {
    const p = spawn('python3', [path.join(import.meta.dirname, '../gen/rdma-topo-driver.py'), ORACLE], { env: { PATH: process.env.PATH ?? '' } });
    const queue: ((l: string) => void)[] = [];
    createInterface({ input: p.stdout }).on('line', (l) => queue.shift()?.(l));
    driver = { p, next: (l) => p.stdin.write(`${l}\n`), queue };
  }
  const d = driver;
  const answer = await new Promise<string>((res) => { d.queue.push(res); d.next(JSON.stringify({ devdir: `${root}/sys/bus/pci/devices/` })); });
  return JSON.parse(answer) as { stdout: string; stderr: string; status: number };
}

/** Ends the driver process (its stdin closed), so the caller's process can exit. */
export function closeOracle(): void {
  driver?.p.stdin.end();
  driver = null;
}

export async function oracle(root: string): Promise<Oracle> {
  const r = await oracleDriver(root);
  const ports = new Map<string, { ok: boolean | null; mask: string | null; type: string }>();
  for (const m of r.stdout.matchAll(/^(OK|FAIL)\tACS for (\S+) (\S+) has (?:in)?correct values [01]+ !?= ([01x]{7})/gm)) ports.set(m[3]!, { ok: m[1] === 'OK', mask: m[4]!, type: m[2]! });
  for (const m of r.stdout.matchAll(/^FAIL\tCould not read ACS control register for (\S+) (\S+)$/gm)) ports.set(m[2]!, { ok: null, mask: null, type: m[1]! });
  const v = (m: RegExpMatchArray, who: string): string => `${who} ${m[1] === 'OK' ? 'pass' : 'fail'}`;
  // An inline complex whose NIC or GPU has no group says "Kernel iommu_group is missing for cx_nic X" / "nvgpu Y"
  // (NVCX_Inline_Complex.__check_iommu_group), which acs-oracle.test.ts's pattern misses: that complex's verdict is
  // then a fail of its NIC, named by the ATS line __check_ats printed just before.
  const missing: string[] = [];
  let lastNic = '';
  for (const l of r.stdout.split('\n')) {
    const ats = /^(?:OK|FAIL)\tATS capability for cx_nic (\S+)/.exec(l);
    if (ats) lastNic = ats[1]!;
    if (/^FAIL\tKernel iommu_group is missing for (?:cx_nic|nvgpu) /.test(l)) missing.push(`${lastNic} fail`);
  }
  const groups = [
    ...missing,
    ...[...r.stdout.matchAll(/^(OK|FAIL)\tKernel iommu_group for (?:DMA|cx_nic) (\S+) and (?:GPU|nvgpu)/gm)].map((m) => v(m, m[2]!)),
    ...[...r.stdout.matchAll(/^(OK|FAIL)\t(?:All kernel iommu_groups|Multiple devices share|Kernel iommu_group missing).* NUMA node (\d+)/gm)].map((m) => v(m, `numa${m[2]}`)),
  ].sort();
  const tail = r.stderr.trim().split('\n').at(-1) ?? '';
  const err = /^E: (.*)$/m.exec(r.stdout)?.[1] ?? (r.status !== 0 && r.status !== 100 ? `exit ${r.status}: ${tail}` : null);
  return { ports, groups, error: err, numaBased: /NUMA-based/.test(r.stdout), stdout: r.stdout };
}

const run = (id: CheckId, inv: Inventory): Finding[] => CHECKS.find((c) => c.id === id)!.run({ inv, baseline: null });

/** gpuPorts: what the port right above each GPU is (pcie/pci-kind.ts: generic_rp, grace_rp, cx_switch…). */
export interface Judged { oracle: Oracle | null; findings: Finding[]; iommu: Finding[]; gpuPorts: string[] }

/** gdrgate's pcie-acs and iommu-mode findings on the tree, and rdma_topo's answer (null without the oracle). */
export async function judge(n: GenNode): Promise<Judged> {
  const dir = await scratchDirAsync('gdrgate-fuzz-', TREE_TMP);
  try {
    await buildTree(dir, n);
    const inv = await buildInventory(new FsHost(dir));
    const gpuPorts = inv.gpus.map((g) => { const d = inv.pci.get(g.bdf); return d ? typeOf(parentOf(inv, d)) : 'unknown'; });
    return { oracle: noOracle ? null : await oracle(dir), findings: run('pcie-acs', inv), iommu: run('iommu-mode', inv), gpuPorts };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** iommu-mode's group verdicts, as rdma_topo gives them (as in acs-oracle.test.ts). */
export function dmaVerdicts(fs: Finding[]): string[] {
  const group = fs.filter((f) => f.code.startsWith('iommu-group') || (f.code === 'iommu-ok' && /^(group of|a group)/.test(f.expected ?? '')));
  const byNode = new Map<string, string>();
  const out: string[] = [];
  for (const f of group) {
    const n = /on NUMA node (\d+)/.exec(f.message)?.[1];
    if (n === undefined) out.push(`${f.subject} ${f.status}`);
    else if (byNode.get(n) !== 'fail') byNode.set(n, f.status);
  }
  return [...out, ...[...byNode].map(([n, st]) => `numa${n} ${st}`)].sort();
}

const MASKED = new Set(['acs-mask', 'acs-mask-ok']);
const verdict = (f: Finding): string => `${f.subject} ${f.status} ${f.expected ?? ''}`;

/** The two sides of the agreement acs-oracle.test.ts asks for, and what it compares ('ports', 'none', 'skips'). */
export interface Sides { what: 'ports' | 'no-topology' | 'oracle-error'; ours: string[]; theirs: string[] }

export function sides(o: Oracle, fs: Finding[]): Sides {
  if (o.error?.startsWith('No supported topology')) return { what: 'no-topology', ours: fs.filter((f) => MASKED.has(f.code)).map(verdict).sort(), theirs: [] };
  if (o.error) return { what: 'oracle-error', ours: fs.filter((f) => f.status !== 'skip').map(verdict).sort(), theirs: [] };
  const ours = fs.filter((f) => MASKED.has(f.code) || (o.ports.size > 0 && f.code === 'acs-unreadable')).map(verdict).sort();
  const theirs = [...o.ports].sort(([a], [b]) => (a < b ? -1 : 1)).map(([bdf, p]) => (p.ok === null ? `${bdf} skip ` : `${bdf} ${p.ok ? 'pass' : 'fail'} ${p.mask}`));
  return { what: 'ports', ours, theirs };
}

/** One line per port where they differ ("bdf: ours=… theirs=…"), or the whole-node difference. */
export function differences(s: Sides): string[] {
  const by = (xs: string[]): Map<string, string> => new Map(xs.map((x) => [x.split(' ')[0]!, x.split(' ').slice(1).join(' ').trim()]));
  const [a, b] = [by(s.ours), by(s.theirs)];
  return [...new Set([...a.keys(), ...b.keys()])].sort().filter((k) => a.get(k) !== b.get(k)).map((k) => `${k}: gdrgate=${a.get(k) ?? '-'} rdma_topo=${b.get(k) ?? '-'}`);
}

/** The disagreement classes recognised by their shape (acs-fuzz-oracle.test.ts's header says what each is and why). */
export const C2 = 'C2 rdma_topo limitation: a GPU on a generic x86 root port makes it a NUMA-based (Grace) topology (__detect_topo_type)';
export const C7 = 'C7 rdma_topo limitation: of an inline multi-function ConnectX adapter it judges one function\'s IOMMU group (the first of a set), gdrgate every function';

/** C2's shape: rdma_topo went NUMA-based while no GPU hangs from a Grace/Vera root port and one hangs from a generic one. */
export function isC2(o: Oracle, j: Judged): boolean {
  return o.numaBased && j.gpuPorts.includes('generic_rp') && !j.gpuPorts.some((k) => k === 'grace_rp' || k === 'vera_rp');
}

/**
 * C7: gdrgate's group verdicts less those of a function whose adapter rdma_topo judged by another of its functions
 * (same domain, bus and device; rdma_topo names that one only). Equal to rdma_topo's where only C7 tells them apart.
 */
export function oneFunctionEach(ours: string[], theirs: string[]): string[] {
  const named = new Set(theirs.map((x) => x.split(' ')[0]!));
  const devOf = (b: string): string => b.replace(/\.[0-7]$/, '');
  const judged = new Set([...named].map(devOf));
  return ours.filter((x) => { const b = x.split(' ')[0]!; return named.has(b) || !judged.has(devOf(b)) || !/\.[0-7]$/.test(b); });
}
