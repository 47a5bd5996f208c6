// Gathers the node once per run into the typed Inventory that every check reads.
import type { Host } from '../host/host.js';
import { pacedHost } from '../host/paced.js';
import { requireListingWithin, requireWithin } from './limits.js';
import { type Bdf, type Inventory, type NumaNode, type PciDevice, UNPLACED } from '../model/inventory.js';
import { parseKernelRelease, parseModuleStates } from '../parsers/procfs.js';
import { type CpuRanges, parseCpuList } from '../parsers/sysfs.js';
import { kernelCmdline } from '../parsers/pci-cmdline.js';
import { readGpudirect } from './gpudirect.js';
import { readIommu } from './iommu.js';
import { readMemlock } from './memlock.js';
import { findSlurmd, slurmdConfOf } from './slurmd.js';
import type { SlurmdConf } from '../parsers/slurmd-conf.js';
import { platformExtra } from './platform-extra.js';
import { readAdapterV3 } from './adapter-v3.js';
import { besideConnectX, detailPci, isGpu, listPci, unaccountedOf, unidentified, unlistedBridges } from './pci.js';
import { listRdma } from './rdma.js';
import { readGpus } from './resource.js';
import { readPcieCooling } from './thermal.js';
import { readPayload } from './payload.js';
import { readAreas } from '../areas/index.js';
import { readCores, readGres, readMinors } from './placement.js';
import { ABSENT } from '../model/fact.js';
import type { Placement } from '../model/inventory.js';
import { slurmGresConf } from './gres-path.js';
import { factParsed, factText, listWhole, Notes, Pacer } from './read.js';
import { type Fact, nul, present, unknown, valueOf } from '../model/fact.js';
import { byNatural, byText } from '../model/order.js';

export interface BuildOptions {
  /** Where slurmd may have written its pid (slurm.conf SlurmdPidFile). */
  readonly slurmdPidFiles?: readonly string[];
  /** The process whose limits are judged: this one (default), or the Prolog's pid when the agent answers it. */
  readonly selfPid?: number;
  /** Slurm's gres.conf (the config's gresConf); none: the one slurmd reads (gres-path.ts). */
  readonly gresConf?: string;
  /** The hook's environment: SLURM_CONF, slurmd's slurm.conf, places gres.conf on a live root. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** The run's deadline: asked before every read, which throws once it has passed (inventory/read.ts Pacer). */
  readonly deadline?: { check(where: string): void };
}

export { DEFAULT_GRES_CONF } from './gres-path.js';

const DEFAULT_PIDFILES = ['/run/slurmd.pid', '/var/run/slurmd.pid'];

async function readNuma(host: Host, notes: Notes): Promise<NumaNode[]> {
  const ids = (await listWhole(host, '/sys/devices/system/node', notes)).filter((n) => /^node\d+$/.test(n)).map((n) => Number(n.slice(4)));
  const lists = await Promise.all(ids.map((id) => factText(host, `/sys/devices/system/node/node${id}/cpulist`, notes)));
  return ids
    .map((id, i) => {
      // Unread (the read's note says why) or unparsable: the node's CPUs are unknown, never none (a device whose
      // local CPUs span two nodes would then be placed on the other one, its paths SYS instead of NODE).
      const file = `/sys/devices/system/node/node${id}/cpulist`;
      const text = valueOf(lists[i]!);
      const p = text === undefined ? null : parseCpuList(text);
      if (p && !p.ok) notes.add(file, p.error);
      const cpus: Fact<CpuRanges> = p === null ? (lists[i]!.state === 'unknown' ? lists[i]! : unknown(`${file}: absent`)) : p.ok ? present(p.value) : unknown(`${file}: ${p.error}`);
      return { id, cpuList: text ?? '', cpus };
    })
    .sort((a, b) => a.id - b.id);
}

/** gres.conf (the config's, else slurmd's), and what comparing it needs only when it names GPUs and cores (no read otherwise). */
async function readPlacement(host: Host, given: string | undefined, env: Readonly<Record<string, string | undefined>>, slurmd: () => Promise<SlurmdConf | null>): Promise<Placement> {
  const gresPath = given ?? (await slurmGresConf(host, env, host.root === '/', slurmd));
  const gres = await readGres(host, gresPath);
  const lines = gres.state === 'present' ? gres.value.lines : [];
  const [minors, cores] = await Promise.all([
    lines.some((l) => l.files.length) ? readMinors(host) : ABSENT,
    lines.some((l) => l.cores !== null) ? readCores(host) : ABSENT,
  ]);
  return { gresPath, gres, minors, cores };
}

const BOOT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** utsname's release: printable, no blank, at most __NEW_UTS_LEN (64) bytes; anything else is no release. */
const RELEASE = /^[\x21-\x7e]{1,64}$/;

async function readKernel(host: Host, notes: Notes): Promise<Fact<string>> {
  const rel = await factText(host, '/proc/sys/kernel/osrelease', notes);
  if (rel.state === 'present' && RELEASE.test(rel.value)) return rel;
  if (rel.state === 'present') notes.add('/proc/sys/kernel/osrelease', `not a kernel release: ${JSON.stringify(rel.value.slice(0, 40))}`);
  const v = await factText(host, '/proc/version', notes);
  if (v.state !== 'present') return v.state === 'absent' && rel.state === 'unknown' ? rel : v;
  const p = parseKernelRelease(v.value);
  return p.ok ? present(p.value) : unknown(`/proc/version: ${p.error}`);
}

/** The modules there (listed, or built in), and the state /proc/modules gives each it lists (Live, Loading, Unloading). */
async function readModules(host: Host, notes: Notes): Promise<{ names: Set<string>; states: ReadonlyMap<string, string> }> {
  const [procMods, sysMods] = await Promise.all([factText(host, '/proc/modules', notes), listWhole(host, '/sys/module', notes)]);
  const states = procMods.state === 'present' ? parseModuleStates(procMods.value) : new Map<string, string>();
  const names = new Set(states.keys());
  // Built-in modules appear only under /sys/module (e.g. mlx5_core on some kernels).
  for (const m of sysMods) names.add(m);
  return { names, states };
}

export async function buildInventory(raw: Host, opts: BuildOptions = {}): Promise<Inventory> {
  const notes = new Notes();
  // Every read paced and under the deadline; every listing the reads grow with capped before its entries are read.
  const pacer = new Pacer(10, opts.deadline);
  const host = pacedHost(raw, pacer, requireListingWithin);
  const [skeletons, nics, numa, cpusOnline, kernelRelease, modules, hostname, bootId, cmdline] = await Promise.all([
    listPci(host, notes),
    listRdma(host, notes),
    readNuma(host, notes),
    factParsed(host, '/sys/devices/system/cpu/online', parseCpuList, notes, 'absent'),
    readKernel(host, notes),
    readModules(host, notes),
    factText(host, '/proc/sys/kernel/hostname', notes).then(async (h) => (h.state === 'present' ? h : await factText(host, '/etc/hostname', notes))),
    // Which boot the AER counters count from (pcie-aer's growth); one small read. A UUID ("%pU", drivers/char/random.c)
    // or unknown: an empty or torn one is no boot, and would read as another boot (a reset) or the same one.
    factParsed(host, '/proc/sys/kernel/random/boot_id', (s) => (BOOT_ID.test(s) ? { ok: true, value: s } : { ok: false, error: `not a boot id: ${JSON.stringify(s.slice(0, 40))}` }), notes, 'absent'),
    // Read once, and judged a command line once: the IOMMU and the payload readers both use it.
    factParsed(host, '/proc/cmdline', kernelCmdline, notes, 'absent'),
  ]);
  const byBdf = new Map(skeletons.map((s) => [s.bdf, s]));
  const gpuSk = skeletons.filter(isGpu);
  requireWithin('paths', gpuSk.length * nics.length);
  const wanted = new Set<Bdf>();
  for (const s of gpuSk) wanted.add(s.bdf);
  for (const n of nics) if (n.bdf.state === 'present') wanted.add(n.bdf.value);
  const endpoints = new Set(wanted);
  for (const b of endpoints) for (const br of byBdf.get(b)?.bridges ?? []) wanted.add(br);
  const onPaths = new Map([...byBdf, ...(await unlistedBridges(host, byBdf, endpoints, notes)).map((s) => [s.bdf, s] as const)]);
  const detailed = await Promise.all(
    [...wanted].filter((b) => onPaths.has(b)).map((b) => detailPci(host, onPaths.get(b)!, notes, endpoints.has(b), pacer)),
  );
  // Direct NIC platforms: what else hangs below a ConnectX switch on those paths (the ConnectX-8 DMA function).
  const near = besideConnectX(detailed, skeletons, wanted);
  // And what the platform's rules cover off every path (platform-extra.ts): nothing more on an x86 node.
  const extra = await platformExtra(host, detailed, skeletons, new Set([...wanted, ...near.map((s) => s.bdf)]), notes);
  const beside = [...near, ...extra];
  detailed.push(...(await Promise.all(beside.map((s) => detailPci(host, s, notes, valueOf(s.classCode) !== 0x060400, pacer)))));
  const pci = new Map<Bdf, PciDevice>(detailed.sort((a, b) => byText(a.bdf, b.bdf)).map((d) => [d.bdf, d]));
  const groups = [...gpuSk.map((g) => g.bdf), ...nics.map((n) => valueOf(n.bdf) ?? ''), ...beside.map((s) => s.bdf)]
    .map((b) => valueOf(pci.get(b)?.iommuGroup ?? ABSENT))
    .filter((g): g is string => !!g);
  const slurmd = findSlurmd(host, notes, opts.slurmdPidFiles ?? DEFAULT_PIDFILES, opts.selfPid === undefined ? '/proc/self' : `/proc/${opts.selfPid}`);
  const [iommu, gpudirect, memlock, gpus, pcieCooling, placement, payload, adapterV3] = await Promise.all([
    readIommu(host, groups, notes, cmdline),
    readGpudirect(host, kernelRelease, modules.names, notes, modules.states),
    readMemlock(host, notes, slurmd, opts.selfPid ?? null),
    readGpus(host, gpuSk.map((s) => s.bdf).sort(byText), pci, notes),
    readPcieCooling(host, notes, pci),
    readPlacement(host, opts.gresConf, opts.env ?? {}, async () => {
      const pid = await slurmd;
      return typeof pid === 'number' ? slurmdConfOf(host, pid, notes) : null;
    }),
    readPayload(host, pci, cmdline, notes),
    readAdapterV3(host, pci, notes),
  ]);
  const areas = await readAreas(host, { gpus: gpus.map((g) => g.bdf), pci, notes });
  return {
    root: host.root,
    hostname,
    kernelRelease,
    pci,
    unidentified: skeletons.filter(unidentified).map((s) => s.bdf).sort(byText),
    unaccounted: unaccountedOf(skeletons, pci).sort(byText),
    adapterV3,
    gpus,
    nics: [...nics].sort((a, b) => byNatural(a.name, b.name)),
    numa,
    cpusOnline,
    iommu,
    gpudirect,
    memlock,
    modules: modules.names,
    pcieCooling,
    bootId,
    placement,
    payload,
    areas,
    notes: notes.list,
  };
}
