// GPUDirect RDMA facts exactly as NCCL decides them (src/transport/net_ib.cc: ncclIbGdrSupport, ncclIbDmaBufSupport).
// Each is present, absent or unknown: a file that could not be read never reads as "no such mechanism".
import type { Host } from '../host/host.js';
import { ABSENT, type Fact, present, unknown } from '../model/fact.js';
import type { Gpudirect } from '../model/inventory.js';
import { inTransit, kernelMajorMinor, type NvidiaDriver, parseNvidiaVersion } from '../parsers/procfs.js';
import { factParsed, factText, Notes } from './read.js';
import { parseRegistryDwords } from '../parsers/nvidia-params.js';

export const PEERMEM_FILES = {
  nvMem: '/sys/kernel/mm/memory_peers/nv_mem/version',
  nvMemNc: '/sys/kernel/mm/memory_peers/nv_mem_nc/version',
  nvidiaPeermem: '/sys/module/nvidia_peermem/version',
} as const;
const VERSION = '/proc/driver/nvidia/version';

/** DMA-BUF import by RDMA drivers arrived in Linux 5.12; the NVIDIA open module exports GPU memory as DMA-BUF from R515. */
export function dmabufPossible(flavour: 'open' | 'proprietary' | null, driver: string | null, kernel: string | null): boolean {
  if (flavour !== 'open' || !driver || !kernel) return false;
  const k = kernelMajorMinor(kernel);
  const major = Number(driver.split('.')[0]);
  return k !== null && (k[0] > 5 || (k[0] === 5 && k[1] >= 12)) && major >= 515;
}

/** DMA-BUF as a fact: no driver (absent) or a proprietary one is a definite no; an unread driver or kernel is unknown. */
export function dmabufFact(driver: Fact<NvidiaDriver>, kernel: Fact<string>): Fact<boolean> {
  if (driver.state === 'unknown') return unknown(`DMA-BUF: ${driver.why}`);
  if (driver.state === 'absent' || driver.value.flavour !== 'open') return present(false);
  if (kernel.state !== 'present' || kernelMajorMinor(kernel.value) === null) return unknown('DMA-BUF: kernel release not read');
  return present(dmabufPossible('open', driver.value.version, kernel.value));
}

/** The modules whose peer-memory client NCCL's files show: nvidia_peermem, and MOFED's nv_peer_mem before it. */
const PEER_MODULES = ['nvidia_peermem', 'nv_peer_mem'] as const;

/** "nvidia_peermem is Unloading in /proc/modules" for the first of `names` caught loading or unloading; else null. */
function transit(names: readonly string[], states: ReadonlyMap<string, string>): string | null {
  const m = names.find((n) => inTransit(states.get(n)));
  return m === undefined ? null : `${m} is ${states.get(m)} in /proc/modules, so whether it is there for the job cannot be told`;
}

/**
 * Loaded when a file reads or the module is listed; unknown when neither and a file could not be read; else not loaded.
 * `moving`: a peer-memory module caught in its init or exit (its files there, its client perhaps not): unknown.
 */
export function peermemFact(files: readonly Fact<string>[], listed: boolean, moving: string | null = null): Fact<boolean> {
  if (moving !== null) return unknown(`nvidia_peermem: ${moving}`);
  if (listed || files.some((f) => f.state === 'present')) return present(true);
  const bad = files.find((f) => f.state === 'unknown');
  return bad?.state === 'unknown' ? unknown(`nvidia_peermem: ${bad.why}`) : present(false);
}

/** `states`: the state /proc/modules gives each module it lists (Live, Loading, Unloading). */
export async function readGpudirect(host: Host, kernelRelease: Fact<string>, modules: ReadonlySet<string>, notes: Notes, states: ReadonlyMap<string, string>): Promise<Gpudirect> {
  const [nvMem, nvMemNc, nvidiaPeermem, nvVersion, ibUverbs, registryDwords] = await Promise.all([
    factText(host, PEERMEM_FILES.nvMem, notes),
    factText(host, PEERMEM_FILES.nvMemNc, notes),
    factText(host, PEERMEM_FILES.nvidiaPeermem, notes),
    factText(host, VERSION, notes),
    host.lstat('/sys/module/ib_uverbs'),
    factParsed(host, '/proc/driver/nvidia/params', parseRegistryDwords, notes, 'absent'),
  ]);
  let driver: Fact<NvidiaDriver> = nvVersion.state === 'present' ? unknown(`${VERSION}: not parsed`) : nvVersion.state === 'absent' ? ABSENT : nvVersion;
  if (nvVersion.state === 'present') {
    const p = parseNvidiaVersion(nvVersion.value);
    if (p.ok) driver = present(p.value);
    else {
      notes.add(VERSION, p.error);
      driver = unknown(`${VERSION}: ${p.error}`);
    }
  }
  // Built in (CONFIG_INFINIBAND_USER_ACCESS=y), ib_uverbs is not listed and has no /sys/module directory (kernel/params.c
  // makes one for a built-in only with parameters or a version, and uverbs_main.c declares neither): its class's uverbs<N>
  // entries (drivers/infiniband/core/uverbs_main.c) show it running. Read only when the two cheaper looks said no.
  const listedOrDir = ibUverbs.ok || modules.has('ib_uverbs');
  const cls = listedOrDir || !ibUverbs.missing ? null : await host.list('/sys/class/infiniband_verbs');
  const inClass = cls?.ok === true && cls.value.some((n) => /^uverbs\d+$/.test(n));
  const uverbsMoving = transit(['ib_uverbs'], states);
  return {
    nvMem,
    nvMemNc,
    nvidiaPeermem,
    driver,
    kernelRelease,
    // Listed, its /sys/module directory there, or its class's nodes; a look that failed is no "not loaded".
    // The class is evidence for, never against: one that cannot be listed (a snapshot taken before it was recorded)
    // leaves the answer the two looks gave.
    // One caught loading or unloading is neither.
    ibUverbs: uverbsMoving !== null ? unknown(uverbsMoving) : listedOrDir || inClass ? present(true) : !ibUverbs.missing ? unknown(`/sys/module/ib_uverbs: ${ibUverbs.reason}`) : present(false),
    dmabuf: dmabufFact(driver, kernelRelease),
    peermem: peermemFact([nvMem, nvMemNc, nvidiaPeermem], modules.has('nvidia_peermem'), transit(PEER_MODULES, states)),
    registryDwords,
  };
}
