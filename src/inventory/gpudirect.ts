// GPUDirect RDMA facts exactly as NCCL decides them (src/transport/net_ib.cc: ncclIbGdrSupport, ncclIbDmaBufSupport).
import type { Host } from '../host/host.js';
import type { Gpudirect } from '../model/inventory.js';
import { kernelMajorMinor, parseNvidiaVersion } from '../parsers/procfs.js';
import { parseRegistryDwords } from '../parsers/nvidia-params.js';
import { exists, factParsed, Notes, optText } from './read.js';

export const PEERMEM_FILES = {
  nvMem: '/sys/kernel/mm/memory_peers/nv_mem/version',
  nvMemNc: '/sys/kernel/mm/memory_peers/nv_mem_nc/version',
  nvidiaPeermem: '/sys/module/nvidia_peermem/version',
} as const;

/** DMA-BUF import by RDMA drivers arrived in Linux 5.12; the NVIDIA open module exports GPU memory as DMA-BUF from R515. */
export function dmabufPossible(flavour: 'open' | 'proprietary' | null, driver: string | null, kernel: string | null): boolean {
  if (flavour !== 'open' || !driver || !kernel) return false;
  const k = kernelMajorMinor(kernel);
  const major = Number(driver.split('.')[0]);
  return k !== null && (k[0] > 5 || (k[0] === 5 && k[1] >= 12)) && major >= 515;
}

export async function readGpudirect(host: Host, kernelRelease: string | null, modules: ReadonlySet<string>, notes: Notes): Promise<Gpudirect> {
  const [nvMem, nvMemNc, nvidiaPeermem, nvVersion, ibUverbs, registryDwords] = await Promise.all([
    optText(host, PEERMEM_FILES.nvMem, notes),
    optText(host, PEERMEM_FILES.nvMemNc, notes),
    optText(host, PEERMEM_FILES.nvidiaPeermem, notes),
    optText(host, '/proc/driver/nvidia/version', notes),
    exists(host, '/sys/module/ib_uverbs'),
    factParsed(host, '/proc/driver/nvidia/params', parseRegistryDwords, notes, 'absent'),
  ]);
  let driverFlavour: Gpudirect['driverFlavour'] = null;
  let driverVersion: string | null = null;
  if (nvVersion !== null) {
    const p = parseNvidiaVersion(nvVersion);
    if (p.ok) {
      driverFlavour = p.value.flavour;
      driverVersion = p.value.version;
    } else notes.add('/proc/driver/nvidia/version', p.error);
  }
  return {
    nvMem,
    nvMemNc,
    nvidiaPeermem,
    driverFlavour,
    driverVersion,
    kernelRelease,
    ibUverbs: ibUverbs || modules.has('ib_uverbs'),
    dmabufPossible: dmabufPossible(driverFlavour, driverVersion, kernelRelease),
    peermemLoaded: nvMem !== null || nvMemNc !== null || nvidiaPeermem !== null || modules.has('nvidia_peermem'),
    registryDwords,
  };
}
