// What a snapshot holds beyond the inventory's own reads (attributes an engineer or hwloc needs), and the allowlist nothing passes without.
import type { Host } from '../host/host.js';
import type { Inventory } from '../model/inventory.js';
import { BDF_RE } from '../parsers/sysfs.js';
import type { Request } from './memo.js';
import { ASPM_POLICY } from '../inventory/payload.js';
import { typeOf } from '../pcie/pci-kind.js';

/**
 * Only these paths are ever stored (links and files; directories are structure). Anything else the inventory
 * reads is recorded in the manifest as skipped: no environment, no command lines, no job or user files.
 */
const ALLOW: readonly RegExp[] = [
  /^\/sys\/(bus\/pci\/devices|class\/(infiniband|infiniband_verbs|iommu|thermal)|devices|module|kernel\/(iommu_groups|mm\/memory_peers))(\/|$)/,
  /^\/proc\/(cmdline|modules|version|cpuinfo|driver\/nvidia\/(version|params)|sys\/kernel\/(hostname|osrelease|random\/boot_id))$/,
  // This process and the ancestors the slurmd search walks: name, status and limits only (memlock.ts).
  /^\/proc\/(self|\d+)(\/(limits|status|comm))?$/,
  /^\/etc\/hostname$/,
  // job-placement's inputs: Slurm's gres.conf where the snapshot's inventory reads it (DEFAULT_GRES_CONF; a site's own
  // path is its config's, which a snapshot does not read), and each GPU's minor (placement.ts). Neither a secret nor a
  // job's file; without them a snapshot's replay skipped job-placement where the node failed it.
  /^\/etc\/slurm(\/gres\.conf)?$/,
  /^\/proc\/driver\/nvidia\/gpus(\/[0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7](\/information)?)?$/,
  /^\/(var\/)?run(\/slurmd\.pid)?$/, // /var/run is a link to /run on current distributions
];

export function allowed(kpath: string): boolean {
  return ALLOW.some((re) => re.test(kpath));
}

/** Every PCI function, cheaply: enough for hwloc's tree (topology-linux.c reads these and the first 256 config bytes). */
export const PCI_ALL = ['class', 'vendor', 'device', 'subsystem_vendor', 'subsystem_device', 'revision', 'numa_node', 'local_cpus', 'local_cpulist', 'current_link_speed', 'current_link_width'];
/** GPUs, NICs and bridges on their paths: what an engineer compares with the reference node (AER counters included). */
export const PCI_PATH = [
  ...PCI_ALL, 'max_link_speed', 'max_link_width', 'secondary_bus_number', 'subordinate_bus_number', 'enable', 'modalias', 'uevent',
  'aer_dev_correctable', 'aer_dev_fatal', 'aer_dev_nonfatal', 'ari_enabled', 'd3cold_allowed', 'power_state', 'sriov_numvfs', 'sriov_totalvfs', 'resource',
];
/** drivers/pci/pcie/aspm.c aspm_ctrl_attrs (and the LTR pair of newer kernels). */
const LINK_ATTR_RE = /^(clkpm|l0s_aspm|l1_aspm|l1_[12]_aspm|l1_[12]_pcipm|ltr_max_(no)?snoop_lat)$/;
export const IB_ATTRS = ['fw_ver', 'node_guid', 'sys_image_guid', 'node_type', 'hca_type', 'hw_rev', 'board_id'];
export const IB_PORT_ATTRS = ['state', 'phys_state', 'rate', 'link_layer', 'lid', 'sm_lid', 'lid_mask_count', 'cap_mask'];
export const MODULES = ['nvidia', 'nvidia_peermem', 'ib_uverbs', 'ib_core', 'mlx5_core', 'mlx5_ib'];
export const PROC = ['/proc/cmdline', '/proc/modules', '/proc/version', '/proc/cpuinfo', '/proc/driver/nvidia/version', '/proc/driver/nvidia/params', '/proc/self/limits', '/proc/self/status', '/proc/sys/kernel/hostname', '/proc/sys/kernel/osrelease'];
/**
 * hwloc (topology-linux.c, HWLOC_FSROOT) aborts its Linux discovery without CPU topology files, and places
 * PCI devices and NUMA nodes from these; `modalias` is the CPU's identity the NCCL topology file carries (its
 * arch, vendor, family and model: NCCL requires them, topo/nccl-read.ts).
 */
export const HWLOC_CPU = ['online', 'possible', 'present', 'kernel_max', 'modalias'];
export const HWLOC_CPU_TOPOLOGY = ['physical_package_id', 'die_id', 'core_id', 'package_cpus', 'core_siblings', 'die_cpus', 'core_cpus', 'thread_siblings'];
export const HWLOC_NODE = ['cpulist', 'cpumap', 'distance', 'meminfo'];

const reads = (dir: string, names: readonly string[], max?: number): Request[] =>
  names.map((n) => ({ op: 'read', path: `${dir}/${n}`, ...(max !== undefined ? { max } : {}) }));

async function names(host: Host, dir: string, re: RegExp): Promise<string[]> {
  const r = await host.list(dir);
  return r.ok ? r.value.filter((n) => re.test(n)) : [];
}

export async function extraRequests(host: Host, inv: Inventory): Promise<Request[]> {
  const out: Request[] = [];
  const pciDir = '/sys/bus/pci/devices';
  for (const bdf of await names(host, pciDir, BDF_RE)) {
    const real = await host.realPath(`${pciDir}/${bdf}`);
    if (!real.ok) continue;
    const onPath = inv.pci.has(bdf);
    out.push(...reads(real.value, onPath ? PCI_PATH : PCI_ALL));
    // The inventory already read the full config of devices on the paths; hwloc reads 256 bytes of the others.
    if (!onPath) out.push({ op: 'read', path: `${real.value}/config`, max: 256 });
    else out.push({ op: 'readLink', path: `${real.value}/driver` }, { op: 'readLink', path: `${real.value}/iommu_group` });
    // A ConnectX adapter's or DMA function's VPD (its V3 ties a ConnectX-8 DMA function to its adapter: the NCCL file's
    // `_dma` nets, rdma_topo's pairs); a few KiB at most, root's to read.
    if (onPath && ['cx_nic', 'cx_dma'].includes(typeOf(inv.pci.get(bdf)))) out.push({ op: 'read', path: `${real.value}/vpd`, max: 4096 });
    // pcie-payload: the ASPM link/ attributes the kernel shows there (LTR and PCI-PM substates too, for the engineer).
    if (onPath) out.push({ op: 'list', path: `${real.value}/link` }, ...reads(`${real.value}/link`, await names(host, `${real.value}/link`, LINK_ATTR_RE)));
  }
  for (const n of inv.nics) {
    const dir = `/sys/class/infiniband/${n.name}`;
    out.push(...reads(dir, IB_ATTRS));
    for (const p of n.ports) out.push(...reads(`${dir}/ports/${p.port}`, IB_PORT_ATTRS));
  }
  for (const m of MODULES) out.push({ op: 'read', path: `/sys/module/${m}/version` });
  out.push({ op: 'read', path: ASPM_POLICY });
  out.push({ op: 'list', path: '/sys/kernel/mm/memory_peers' });
  for (const p of await names(host, '/sys/kernel/mm/memory_peers', /./)) out.push({ op: 'read', path: `/sys/kernel/mm/memory_peers/${p}/version` });
  out.push({ op: 'list', path: '/sys/class/iommu' }, { op: 'list', path: '/sys/kernel/iommu_groups' });
  for (const g of await names(host, '/sys/kernel/iommu_groups', /^\d+$/)) out.push({ op: 'read', path: `/sys/kernel/iommu_groups/${g}/type` });
  out.push({ op: 'list', path: '/sys/devices/system/node' });
  for (const n of await names(host, '/sys/devices/system/node', /^node\d+$/)) out.push(...reads(`/sys/devices/system/node/${n}`, HWLOC_NODE));
  out.push(...PROC.map((p): Request => ({ op: 'read', path: p })));
  out.push(...reads('/sys/devices/system/cpu', HWLOC_CPU));
  for (const c of await names(host, '/sys/devices/system/cpu', /^cpu\d+$/)) {
    out.push(...reads(`/sys/devices/system/cpu/${c}/topology`, HWLOC_CPU_TOPOLOGY), { op: 'read', path: `/sys/devices/system/cpu/${c}/online` });
  }
  return out;
}
