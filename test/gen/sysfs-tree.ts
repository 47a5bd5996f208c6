// Test-side generator: writes the sysfs/procfs subset a kernel exposes for a declared PCIe tree (drivers/pci/pci-sysfs.c,
// drivers/infiniband/core/sysfs.c, fs/proc/base.c), laid out and linked like a live /sys, under a temporary root.
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { aerFiles, type GenKernelRegs, type GenRegs, kernelFiles, linkFiles, resourceText } from './pci-regs-gen.js';
import { type GenVpd, vpdBytes } from './vpd-gen.js';
import { type GenRebar, rebarFiles } from './rebar-gen.js';
import { busOf, busRange, configSpace, DEFAULTS, hx, isBridge, linkOf } from './config-space.js';

export { configSpace } from './config-space.js';

export type GenKind = 'rootport' | 'switch-up' | 'switch-down' | 'gpu' | 'nic' | 'other';
export interface GenIbPort {
  state: string;
  physState: string;
  rate: string;
  linkLayer: string;
  /**
   * ports/N/counters/port_xmit_data and port_rcv_data (4-octet units); absent: the values of a real ConnectX-3 port
   * (hwloc's 32em64t-2n8c capture, mlx4_0 port 1); null: no counters directory (a driver that keeps none).
   */
  counters?: { xmit: string; rcv: string } | null;
}

/** hwloc tests/hwloc/linux/32em64t-2n8c+dax+nvme+mic+dimms: mlx4_0/ports/1/counters, as captured. */
export const REAL_PORT_COUNTERS = { xmit: '8039908\n', rcv: '5550796\n' };

export interface GenDevice extends GenRegs, GenRebar {
  bdf: string;
  kind: GenKind;
  vendor?: number; device?: number; classCode?: number; revision?: number;
  subsystem?: [vendor: number, device: number];
  /** GT/s and lanes, current and max (max defaults to current). */
  speed?: number; width?: number; maxSpeed?: number; maxWidth?: number;
  /** Link Control 2 Target Link Speed, GT/s: defaults to maxSpeed, as a port comes out of reset (a throttled port's is lower). */
  targetSpeed?: number;
  /** 16-bit ACS Control register; bridges only (root ports, switch downstream ports). */ acsCtl?: number;
  /** The header type's multi-function bit (the device has other functions); unset unless asked. */ multiFunction?: boolean;
  /** ATS capability present, enabled or not (endpoints). */ ats?: boolean;
  /** Defaults to the host bridge's node; -1 = firmware gave none. */
  numaNode?: number;
  /** Defaults to the node's CPUs (all CPUs for -1), as cpumask_of_pcibus gives. */
  localCpuList?: string;
  children?: GenDevice[];
  /** Bound driver; null for none. Defaults: nvidia, mlx5_core, pcieport. */
  driver?: string | null;
  ib?: { name: string; fwVer?: string; nodeGuid?: string; ports?: GenIbPort[] };
  iommuGroup?: number;
  /** 4096 as root reads it; 256 for conventional space only; 64 for an unprivileged read. */
  configBytes?: 64 | 256 | 4096;
  /** The `vpd` file (ConnectX functions: board name, serial, the V3 UUID tying a DMA function to its PF). */ vpd?: GenVpd;
  /**
   * An SR-IOV VF's PF (its PCI address; a sibling written before it): the VF gets `physfn` and the PF `virtfn<N>`, N
   * counting the PF's VFs from 0 (drivers/pci/iov.c pci_iov_sysfs_link).
   */
  physfn?: string;
}

export interface GenHostBridge { domainBus: string; numaNode: number; devices: GenDevice[] }

export interface GenNode extends GenKernelRegs {
  hostBridges: GenHostBridge[];
  numa: { id: number; cpus: string }[];
  driver?: { version: string; open: boolean; builtBy?: string; date?: string; gcc?: string };
  /** Kernel release (`uname -r`); procVersion overrides the whole /proc/version text. */
  kernel?: string; procVersion?: string;
  /** /proc/modules names (default: nvidia's and mlx5/ib_* when present); peermem adds nvidia_peermem. */
  modules?: string[]; peermem?: boolean;
  /**
   * A module caught while its init or exit runs (kernel/module/procfs.c m_show prints Loading for MODULE_STATE_COMING,
   * Unloading for MODULE_STATE_GOING; kernel/module/sysfs.c initstate "coming"/"going"): modprobe or rmmod under way.
   * Its /sys/module directory is there in both (mod_sysfs_setup runs before its init, teardown after its exit).
   */
  moduleStates?: Record<string, 'Loading' | 'Unloading'>;
  memlockKiB?: number | 'unlimited';
  /** The hard limit when it differs from the soft one (memlockKiB); the kernel keeps soft <= hard. */
  memlockHardKiB?: number | 'unlimited';
  /** IOMMU units in /sys/class/iommu and the type every group reports. */
  iommu?: { units: string[]; groupType: string };
  cmdline?: string; hostname?: string;
  /** /proc/sys/kernel/random/boot_id (drivers/char/random.c: a UUID, "%pU"); every kernel has one. */
  bootId?: string;
  /** /sys/devices/system/cpu/modalias ("cpu:type:x86,ven0000fam0006mod008F:feature:…"); not written when unset. */
  cpuModalias?: string;
  /** `*_link_speed` as kernels before pci_speed_string() printed it ("16 GT/s", not "16.0 GT/s PCIe"). */ legacyLinkSpeedText?: boolean;
}

export const speedText = (gts: number, legacy = false): string => (legacy ? `${gts} GT/s` : `${gts === 2.5 ? '2.5' : gts.toFixed(1)} GT/s PCIe`);

/** Kernel cpulist ("0-47,96-143") → CPU numbers. */
const cpus = (list: string): number[] =>
  list.split(',').filter(Boolean).flatMap((p) => {
    const [a, b = a] = p.split('-').map(Number);
    return Array.from({ length: b! - a! + 1 }, (_, i) => a! + i);
  });

/** cpumap/local_cpus: bitmap_print_to_pagebuf(false): nr_cpu_ids bits in hex, comma every 32 bits. */
function cpuMask(list: string, nrCpus: number): string {
  let digits = '';
  const set = new Set(cpus(list));
  for (let nib = Math.ceil(nrCpus / 4) - 1; nib >= 0; nib--) {
    let v = 0;
    for (let b = 0; b < 4; b++) if (set.has(nib * 4 + b)) v |= 1 << b;
    digits += v.toString(16);
    if (nib % 8 === 0 && nib > 0) digits += ',';
  }
  return digits;
}

// Synchronous and with the directories made remembered: a tree of thousands of functions (topologies/hgx-h100-sriov.ts)
// is ~100,000 entries, which awaited one by one through the thread pool took a minute on a loaded machine.
const madeDirs = new Set<string>();
function mkdirOnce(dir: string): void {
  if (madeDirs.has(dir)) return;
  mkdirSync(dir, { recursive: true });
  madeDirs.add(dir);
}

async function write(root: string, p: string, data: string | Buffer): Promise<void> {
  mkdirOnce(path.join(root, path.posix.dirname(p)));
  writeFileSync(path.join(root, p), data);
}

async function writeAll(root: string, dir: string, files: Record<string, string | Buffer>): Promise<void> {
  for (const [name, data] of Object.entries(files)) await write(root, `${dir}/${name}`, data);
}

async function link(root: string, p: string, target: string): Promise<void> {
  mkdirOnce(path.join(root, path.posix.dirname(p)));
  // Relative, as kernfs_get_target_path() writes it: up to the common ancestor of the target's parent, then down.
  const up = path.posix.relative(path.posix.dirname(p), path.posix.dirname(target));
  symlinkSync(`${up ? `${up}/` : ''}${path.posix.basename(target)}`, path.join(root, p));
}

interface Ctx { root: string; node: GenNode; nrCpus: number; allCpus: string; vfs: Map<string, number> }

async function writeDevice(ctx: Ctx, d: GenDevice, parentDir: string, parentBus: number, hb: GenHostBridge): Promise<void> {
  if (busOf(d.bdf) !== parentBus) throw new Error(`${d.bdf} cannot sit on bus ${hx(parentBus, 2)}`);
  if (d.children?.length && !isBridge(d.kind)) throw new Error(`${d.bdf} (${d.kind}) is not a bridge but has children`);
  const dir = `${parentDir}/${d.bdf}`;
  const def = DEFAULTS[d.kind];
  const { vendor = def.vendor, device = def.device, classCode: cls = def.cls } = d;
  const [sv, sd] = d.subsystem ?? [vendor, 0];
  const numa = d.numaNode ?? hb.numaNode;
  const local = d.localCpuList ?? (numa < 0 ? ctx.allCpus : (ctx.node.numa.find((n) => n.id === numa)?.cpus ?? ctx.allCpus));
  const l = linkOf(d);
  const driver = d.driver === undefined ? def.driver : d.driver;
  const HX = (n: number, w: number): string => hx(n, w).toUpperCase();
  const modalias = `pci:v0000${HX(vendor, 4)}d0000${HX(device, 4)}sv0000${HX(sv, 4)}sd0000${HX(sd, 4)}bc${HX(cls >> 16, 2)}sc${HX((cls >> 8) & 0xff, 2)}i${HX(cls & 0xff, 2)}`;
  const attrs: Record<string, string | Buffer> = {
    vendor: `0x${hx(vendor, 4)}\n`, device: `0x${hx(device, 4)}\n`, class: `0x${hx(cls, 6)}\n`,
    subsystem_vendor: `0x${hx(sv, 4)}\n`, subsystem_device: `0x${hx(sd, 4)}\n`, revision: `0x${hx(d.revision ?? 0xa1, 2)}\n`,
    numa_node: `${numa}\n`, local_cpulist: `${local}\n`, local_cpus: `${cpuMask(local, ctx.nrCpus)}\n`, enable: '1\n',
    current_link_speed: `${speedText(l.speed, ctx.node.legacyLinkSpeedText)}\n`, current_link_width: `${l.width}\n`,
    max_link_speed: `${speedText(l.maxSpeed, ctx.node.legacyLinkSpeedText)}\n`, max_link_width: `${l.maxWidth}\n`, modalias: `${modalias}\n`,
    uevent: `${driver ? `DRIVER=${driver}\n` : ''}PCI_CLASS=${cls.toString(16).toUpperCase()}\nPCI_ID=${HX(vendor, 4)}:${HX(device, 4)}\nPCI_SUBSYS_ID=${HX(sv, 4)}:${HX(sd, 4)}\nPCI_SLOT_NAME=${d.bdf}\nMODALIAS=${modalias}\n`,
    config: configSpace(d), resource: resourceText(d, isBridge(d.kind)), ...aerFiles(d, d.kind === 'rootport'), ...linkFiles(d), ...rebarFiles(d), ...(d.vpd ? { vpd: vpdBytes(d.vpd) } : {}),
  };
  if (isBridge(d.kind)) busRange(d).forEach((n, i) => (attrs[i ? 'subordinate_bus_number' : 'secondary_bus_number'] = `${n}\n`));
  await writeAll(ctx.root, dir, attrs);
  await link(ctx.root, `sys/bus/pci/devices/${d.bdf}`, dir);
  await link(ctx.root, `${dir}/subsystem`, 'sys/bus/pci');
  if (driver) await link(ctx.root, `${dir}/driver`, `sys/bus/pci/drivers/${driver}`);
  if (driver) await link(ctx.root, `sys/bus/pci/drivers/${driver}/${d.bdf}`, dir);
  if (d.iommuGroup !== undefined) {
    const g = `sys/kernel/iommu_groups/${d.iommuGroup}`;
    await link(ctx.root, `${dir}/iommu_group`, g);
    await link(ctx.root, `${g}/devices/${d.bdf}`, dir);
    await write(ctx.root, `${g}/type`, `${ctx.node.iommu?.groupType ?? 'identity'}\n`);
  }
  if (d.physfn !== undefined) {
    const n = ctx.vfs.get(d.physfn) ?? 0;
    ctx.vfs.set(d.physfn, n + 1);
    await link(ctx.root, `${dir}/physfn`, `${parentDir}/${d.physfn}`);
    await link(ctx.root, `${parentDir}/${d.physfn}/virtfn${n}`, dir);
  }
  if (d.ib) await writeIb(ctx, d, dir, device);
  for (const c of d.children ?? []) await writeDevice(ctx, c, dir, busRange(d)[0], hb);
}

/** /sys/class/infiniband/<name> → the ib_device under its PCI function (drivers/infiniband/core/sysfs.c). */
async function writeIb(ctx: Ctx, d: GenDevice, pciDir: string, device: number): Promise<void> {
  const ib = d.ib!;
  const dir = `${pciDir}/infiniband/${ib.name}`;
  const g = hx(parseInt(d.bdf.replace(/\W/g, '').slice(-8), 16) >>> 0, 8); // stable per function
  const nodeGuid = ib.nodeGuid ?? `b83f:d203:${g.slice(0, 4)}:${g.slice(4)}`;
  await writeAll(ctx.root, dir, { fw_ver: `${ib.fwVer ?? '28.39.1002'}\n`, node_guid: `${nodeGuid}\n`, node_type: '1: CA\n', hca_type: `MT${device}\n` });
  const ports = ib.ports ?? [{ state: '4: ACTIVE', physState: '5: LinkUp', rate: '400 Gb/sec (4X NDR)', linkLayer: 'InfiniBand' }];
  for (const [i, p] of ports.entries()) {
    await writeAll(ctx.root, `${dir}/ports/${i + 1}`, { state: `${p.state}\n`, phys_state: `${p.physState}\n`, rate: `${p.rate}\n`, link_layer: `${p.linkLayer}\n` });
    const c = p.counters === undefined ? REAL_PORT_COUNTERS : p.counters;
    if (c) await writeAll(ctx.root, `${dir}/ports/${i + 1}/counters`, { port_xmit_data: c.xmit, port_rcv_data: c.rcv });
  }
  await link(ctx.root, `${dir}/device`, pciDir);
  await link(ctx.root, `sys/class/infiniband/${ib.name}`, dir);
}

/** fs/proc/base.c proc_pid_limits(): "%-25s %-20s %-20s %-10s\n", rows as on the captured H200 node. */
const LIMITS: [string, string, string, string][] = [
  ['Max cpu time', 'unlimited', 'unlimited', 'seconds'], ['Max file size', 'unlimited', 'unlimited', 'bytes'],
  ['Max data size', 'unlimited', 'unlimited', 'bytes'], ['Max stack size', '8388608', 'unlimited', 'bytes'],
  ['Max core file size', '0', 'unlimited', 'bytes'], ['Max resident set', 'unlimited', 'unlimited', 'bytes'],
  ['Max processes', '515506', '515506', 'processes'], ['Max open files', '20000', '20000', 'files'],
  ['Max locked memory', '', '', 'bytes'], ['Max address space', 'unlimited', 'unlimited', 'bytes'],
  ['Max file locks', 'unlimited', 'unlimited', 'locks'], ['Max pending signals', '515506', '515506', 'signals'],
  ['Max msgqueue size', '819200', '819200', 'bytes'], ['Max nice priority', '0', '0', ''],
  ['Max realtime priority', '0', '0', ''], ['Max realtime timeout', 'unlimited', 'unlimited', 'us'],
];

export function limitsText(memlockKiB: number | 'unlimited', hardKiB: number | 'unlimited' = memlockKiB): string {
  const bytes = (k: number | 'unlimited'): string => (k === 'unlimited' ? 'unlimited' : String(k * 1024));
  const row = (a: string, b: string, c: string, d: string): string =>
    `${a.padEnd(25)} ${b.padEnd(20)} ${c.padEnd(20)} ${d ? d.padEnd(10) : ''}\n`;
  return row('Limit', 'Soft Limit', 'Hard Limit', 'Units') + LIMITS.map(([a, b, c, d]) => (a === 'Max locked memory' ? row(a, bytes(memlockKiB), bytes(hardKiB), d) : row(a, b, c, d))).join('');
}

export function nvidiaVersionText(drv: NonNullable<GenNode['driver']>): string {
  const gcc = `GCC version:  ${drv.gcc ?? 'gcc version 12.3.0 (Ubuntu 12.3.0-1ubuntu1~22.04)'} \n`;
  if (drv.open) return `NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  ${drv.version}  Release Build  (${drv.builtBy ?? 'dvs-builder@U16-I3-B03-4-3'})  ${drv.date ?? 'Thu Oct 19 18:42:12 UTC 2023'}\n${gcc}`;
  return `NVRM version: NVIDIA UNIX x86_64 Kernel Module  ${drv.version}  ${drv.date ?? 'Thu Oct 19 18:56:32 UTC 2023'}\n${gcc}`;
}

const INITSTATE = { Live: 'live', Loading: 'coming', Unloading: 'going' } as const;

/** /proc/modules (kernel/module/procfs.c m_show): "name size refcnt deps state address taint". */
function modulesText(names: string[], node: GenNode): string {
  const taint = (m: string): string => (!m.startsWith('nvidia') ? '' : node.driver?.open === false ? ' (POE)' : ' (OE)');
  return names.map((m, i) => {
    const users = m === 'nvidia' ? names.filter((n) => n.startsWith('nvidia_')) : [];
    return `${m} ${m === 'nvidia' ? 56180736 : 16384 * (i + 1)} ${users.length} ${users.length ? `${users.join(',')},` : '-'} ${node.moduleStates?.[m] ?? 'Live'} 0xffffffffc${hx(0x0400000 + i * 0x40000, 7)}${taint(m)}\n`;
  }).join('');
}

/** Every device of the description, depth first. */
export function allDevices(node: GenNode): GenDevice[] {
  const walk = (ds: GenDevice[]): GenDevice[] => ds.flatMap((d) => [d, ...walk(d.children ?? [])]);
  return node.hostBridges.flatMap((hb) => walk(hb.devices));
}

export async function buildTree(dir: string, node: GenNode): Promise<void> {
  madeDirs.clear(); // a test may have removed what an earlier build made
  const allCpus = node.numa.map((n) => n.cpus).join(',');
  const nrCpus = Math.max(0, ...node.numa.flatMap((n) => cpus(n.cpus))) + 1;
  const ctx: Ctx = { root: dir, node, nrCpus, allCpus, vfs: new Map() };
  for (const hb of node.hostBridges) {
    if (!/^[0-9a-f]{4,8}:[0-9a-f]{2}$/.test(hb.domainBus)) throw new Error(`not a domain:bus: ${hb.domainBus}`);
    await write(dir, `sys/devices/pci${hb.domainBus}/uevent`, '');
    for (const d of hb.devices) await writeDevice(ctx, d, `sys/devices/pci${hb.domainBus}`, busOf(`${hb.domainBus}:00.0`), hb);
  }
  const ids = node.numa.map((n) => n.id).sort((a, b) => a - b);
  const idList = ids.length > 1 && ids.every((v, i) => v === ids[0]! + i) ? `${ids[0]}-${ids.at(-1)}` : ids.join(',');
  for (const n of node.numa) {
    const distance = `${ids.map((o) => (o === n.id ? 10 : 21)).join(' ')}\n`;
    await writeAll(dir, `sys/devices/system/node/node${n.id}`, { cpulist: `${n.cpus}\n`, cpumap: `${cpuMask(n.cpus, nrCpus)}\n`, distance });
  }
  for (const f of ['online', 'possible', 'has_cpu']) await write(dir, `sys/devices/system/node/${f}`, `${idList}\n`);
  // drivers/base/cpu.c: the online CPUs as a cpulist (every node's CPUs here), merged ranges in order.
  const online = [...new Set(node.numa.flatMap((n) => cpus(n.cpus)))].sort((a, b) => a - b);
  const ranges = online.reduce<[number, number][]>((rs, c) => (rs.length && rs.at(-1)![1] === c - 1 ? (rs.at(-1)![1] = c, rs) : [...rs, [c, c]]), []);
  await write(dir, 'sys/devices/system/cpu/online', `${ranges.map(([a, b]) => (a === b ? `${a}` : `${a}-${b}`)).join(',')}\n`);
  if (node.cpuModalias !== undefined) await write(dir, 'sys/devices/system/cpu/modalias', `${node.cpuModalias}\n`);
  for (const u of node.iommu?.units ?? []) await write(dir, `sys/devices/virtual/iommu/${u}/uevent`, '');
  for (const u of node.iommu?.units ?? []) await link(dir, `sys/class/iommu/${u}`, `sys/devices/virtual/iommu/${u}`);
  const kernel = node.kernel ?? '5.15.0-91-generic';
  await writeAll(dir, 'proc', {
    version: node.procVersion ?? `Linux version ${kernel} (buildd@lcy02-amd64-045) (gcc (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0, GNU ld (GNU Binutils for Ubuntu) 2.38) #101-Ubuntu SMP Tue Nov 14 13:30:08 UTC 2023\n`,
    'sys/kernel/osrelease': `${kernel}\n`,
    'sys/kernel/hostname': `${node.hostname ?? 'gpu001'}\n`,
    'sys/kernel/random/boot_id': `${node.bootId ?? '6f1d2c3b-8a4e-4b7f-9e21-0c5d7a9b3e18'}\n`,
    cmdline: `${node.cmdline ?? `BOOT_IMAGE=/boot/vmlinuz-${kernel} root=UUID=4f1c2a7e-2b9e-4d0a-9d55-0c1e5f3b8a21 ro quiet`}\n`,
    'self/limits': limitsText(node.memlockKiB ?? 'unlimited', node.memlockHardKiB ?? node.memlockKiB ?? 'unlimited'),
  });
  const rdma = allDevices(node).some((d) => d.ib !== undefined) ? ['mlx5_ib', 'ib_uverbs', 'ib_core', 'mlx5_core'] : [];
  const mods = [...(node.peermem ? ['nvidia_peermem'] : []), ...(node.modules ?? [...(node.driver ? ['nvidia_uvm', 'nvidia_modeset', 'nvidia'] : []), ...rdma])]
    .filter((m, i, all) => all.indexOf(m) === i);
  await write(dir, 'proc/modules', modulesText(mods, node));
  for (const [p, v] of [...mods.map((m) => [`sys/module/${m}/initstate`, `${INITSTATE[node.moduleStates?.[m] ?? 'Live']}\n`]), ...kernelFiles(node)]) await write(dir, p!, v!);
  if (node.driver) {
    await write(dir, 'proc/driver/nvidia/version', nvidiaVersionText(node.driver));
    for (const m of mods.filter((x) => /^nvidia(_uvm|_modeset|_peermem)?$/.test(x))) await write(dir, `sys/module/${m}/version`, `${node.driver.version}\n`);
  }
}
