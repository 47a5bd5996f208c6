// Seeded generator of random, physically plausible variants of the real-system trees that NVIDIA's rdma_topo knows
// (the Direct NIC ones: GB300 ConnectX-8 Data Direct, GB300 tray on Grace root ports, GH200, HGX B300 inline; and the
// classic HGX ones, where it must find no supported topology). Used by the differential fuzzer
// (test/checks/acs-fuzz-oracle.test.ts, scripts in test/gen/acs-fuzz-loop.ts): one seed → one tree, the same every time.
// Each mutation family below names the real system it is modelled on.
import { allDevices, type GenDevice, type GenHostBridge, type GenNode } from './sysfs-tree.js';
import { busOf } from './config-space.js';
import { bdfOf, dom, freeDev, freshBus, freshGroup, isBridgeKind, places, rehome, resetGroups, Rng, siblings, Skip, type Where } from './acs-fuzz-tree.js';
import { node as gb300Dma } from './topologies/gb300-cx8-dma-direct.js';
import { node as gb300Tray } from './topologies/gb300-tray-numa.js';
import { node as gh200 } from './topologies/gh200-cx7.js';
import { node as hgxB200 } from './topologies/hgx-b200-cx7.js';
import { hgxB300 } from './topologies/hgx-b300-cx8-inline.js';
import { node as hgxH100 } from './topologies/sglang30401-hgx-h100.js';
import { node as a100 } from './topologies/simai-hgx-8xa100-cx6dx-bond.js';
import { node as twoSocket } from './topologies/two-socket-2gpu-2nic.js';

type Family = 'dma' | 'numa' | 'inline' | 'classic';
/** The bases: [name, family, tree]. */
export const BASES: readonly [string, Family, () => GenNode][] = [
  ['gb300-cx8-dma-direct', 'dma', () => structuredClone(gb300Dma)],
  ['gb300-tray-numa', 'numa', () => structuredClone(gb300Tray)],
  ['gh200-cx7', 'numa', () => structuredClone(gh200)],
  ['hgx-b300-cx8-inline', 'inline', () => hgxB300()],
  ['hgx-b300-cx8-inline-virt', 'inline', () => virtB300()],
  ['hgx-b200-cx7', 'classic', () => structuredClone(hgxB200)],
  ['sglang30401-hgx-h100', 'classic', () => structuredClone(hgxH100)],
  ['simai-hgx-8xa100-cx6dx-bond', 'classic', () => structuredClone(a100)],
  ['two-socket-2gpu-2nic', 'classic', () => structuredClone(twoSocket)],
];

/**
 * HGX B300 set up for virtual machines (NVIDIA AI Enterprise, "optimizing VM configuration on Blackwell Ultra HGX":
 * ATS on the CX8, the kernel's isolation on the GPU port and root port, 1x111x1 on the NIC port, NIC and GPU in
 * groups of their own). A healthy start for the virtualized inline rules.
 */
function virtB300(): GenNode {
  const n = hgxB300(true);
  for (const hb of n.hostBridges) {
    const rp = hb.devices[0]!;
    rp.acsCtl = 0x001d;
    const [nicDsp, gpuDsp] = rp.children![0]!.children!;
    nicDsp!.acsCtl = 0x005d;
    gpuDsp!.acsCtl = 0x001d;
    for (const d of allDevices({ ...n, hostBridges: [hb] })) if (d.kind === 'gpu') d.iommuGroup = (d.iommuGroup ?? 0) + 100;
  }
  return n;
}

/** ACS words seen on real ports: 0x1d/0x1f (the kernel's isolation, with TransBlk), 0x5d (1x111x1), rdma_topo's DMA masks, off. */
const COMMON_ACS = [0x0000, 0x001d, 0x001f, 0x005d, 0x0015, 0x0019, 0x001c, 0x0011, 0x007f, 0x0004, 0x0008, 0x0020, 0x0040];

export interface Variant { seed: number; base: string; mutations: string[]; node: GenNode }

/** The mutation families. Each returns a description of what it did, or throws Skip when it does not apply. */
const FAMILIES: Record<string, { on: readonly Family[]; weight: number; run: (n: GenNode, r: Rng, fam: Family) => string }> = {
  // Every real port: BIOS/firmware or a script sets ACS Control (NVIDIA's GB300 guide's setpci, HGX BIOS "ACS off").
  // One bit flipped, a common word, or any 7-bit / 16-bit word (bits 7..15 exist on PCIe 6 ports: I/O Request Blocking...).
  acsBits: { on: ['dma', 'numa', 'inline', 'classic'], weight: 6, run: (n, r) => {
    const ports = places(n).filter((w) => w.d.acsCtl !== undefined);
    const w = r.pick(ports);
    const old = w.d.acsCtl!;
    const how = r.int(4);
    w.d.acsCtl = how === 0 ? old ^ (1 << r.int(7)) : how === 1 ? r.pick(COMMON_ACS) : how === 2 ? r.int(0x80) : r.int(0x10000);
    return `acsBits ${w.d.bdf} 0x${old.toString(16)}→0x${w.d.acsCtl.toString(16)}`;
  } },
  // A port without an ACS capability (PEX upstream-side ports, older root ports; a CX switch port on early firmware).
  acsMissing: { on: ['dma', 'numa', 'inline', 'classic'], weight: 2, run: (n, r) => {
    const w = r.pick(places(n).filter((x) => x.d.acsCtl !== undefined));
    delete w.d.acsCtl;
    return `acsMissing ${w.d.bdf}`;
  } },
  // A function that is neither GPU nor NIC: an NVMe drive (GB200/GB300 tray E1.S on a Grace root port; DGX H100 U.2
  // behind the PCIe switches), on a new downstream port of an existing switch or a new root port of its own.
  addOther: { on: ['dma', 'numa', 'inline', 'classic'], weight: 3, run: (n, r, fam) => {
    const nvme: GenDevice = { bdf: '', kind: 'other', vendor: 0x144d, device: 0xa80a, classCode: 0x010802, driver: 'nvme', speed: 16, width: 4 };
    if (r.chance(0.5)) { // a new root port with the drive (on Grace: a Grace root port; on x86: an Intel one)
      const hb = r.pick(n.hostBridges);
      const domain = hb.domainBus.slice(0, 4);
      const grace = fam === 'dma' || fam === 'numa';
      const rp: GenDevice = { bdf: bdfOf(domain, busOf(`${hb.domainBus}:00.0`), freeDev(hb.devices)), kind: 'rootport', speed: 16, acsCtl: r.pick([0x1d, 0x1f, 0]), children: [nvme], ...(grace ? { vendor: 0x10de, device: 0x22b1 } : {}) };
      hb.devices.push(rp);
      nvme.bdf = bdfOf(domain, freshBus(n, domain), 0);
      nvme.iommuGroup = freshGroup();
      return `addOther nvme ${nvme.bdf} on new root port ${rp.bdf}`;
    }
    const ups = places(n).filter((w) => w.d.kind === 'switch-up' && w.d.children?.length);
    const w = r.pick(ups);
    const domain = dom(w.d.bdf);
    const sib = w.d.children![0]!;
    const dsp: GenDevice = { bdf: bdfOf(domain, busOf(sib.bdf), freeDev(w.d.children!)), kind: 'switch-down', vendor: sib.vendor, device: sib.device, speed: 16, acsCtl: sib.acsCtl ?? 0x1d, children: [nvme] };
    w.d.children!.push(dsp);
    nvme.bdf = bdfOf(domain, freshBus(n, domain), 0);
    nvme.iommuGroup = r.chance(0.5) ? freshGroup() : (sib.iommuGroup ?? freshGroup());
    return `addOther nvme ${nvme.bdf} below new port ${dsp.bdf} of ${w.d.bdf}`;
  } },
  // A second PF of a NIC (dual-port ConnectX-7 as on DGX H100's storage NICs; ConnectX-8 with two PFs): a
  // multi-function device, same VPD (SN, V3), its own RDMA device.
  multiFunctionNic: { on: ['dma', 'numa', 'inline', 'classic'], weight: 2, run: (n, r) => {
    const w = r.pick(places(n).filter((x) => x.d.kind === 'nic' && x.d.bdf.endsWith('.0')));
    const sib = siblings(w);
    const fn1 = w.d.bdf.replace(/\.0$/, '.1');
    if (sib.some((s) => s.bdf === fn1)) throw new Skip('has .1');
    const pf: GenDevice = { ...structuredClone(w.d), bdf: fn1, multiFunction: true, ...(w.d.ib ? { ib: { ...w.d.ib, name: `${w.d.ib.name}_1` } } : {}) };
    if (r.chance(0.3)) pf.iommuGroup = freshGroup();
    w.d.multiFunction = true;
    sib.splice(sib.indexOf(w.d) + 1, 0, pf);
    return `multiFunctionNic ${fn1}`;
  } },
  // A GPU with an HDMI audio function .1 (NVIDIA RTX PRO 6000 Blackwell Server Edition in the RTX PRO Server with
  // ConnectX-8 switches; workstation GPUs): NVIDIA vendor, class 0x0403, same group.
  gpuAudio: { on: ['dma', 'numa', 'inline', 'classic'], weight: 1, run: (n, r) => {
    const w = r.pick(places(n).filter((x) => x.d.kind === 'gpu' && x.d.bdf.endsWith('.0')));
    const sib = siblings(w);
    const fn1 = w.d.bdf.replace(/\.0$/, '.1');
    if (sib.some((s) => s.bdf === fn1)) throw new Skip('has .1');
    w.d.multiFunction = true;
    sib.splice(sib.indexOf(w.d) + 1, 0, { bdf: fn1, kind: 'other', vendor: 0x10de, device: 0x22e8, classCode: 0x040300, driver: 'snd_hda_intel', speed: w.d.speed ?? 16, multiFunction: true, ...(w.d.iommuGroup !== undefined ? { iommuGroup: w.d.iommuGroup } : {}) });
    return `gpuAudio ${fn1}`;
  } },
  // IOMMU groups as the kernel may build them (iommu=pt or not, ACS as set): a device joins another's group, gets a
  // group of its own, or none (no IOMMU for it).
  regroup: { on: ['dma', 'numa', 'inline', 'classic'], weight: 2, run: (n, r) => {
    const eps = places(n).filter((x) => !isBridgeKind(x.d));
    const w = r.pick(eps);
    const how = r.int(3);
    const old = w.d.iommuGroup;
    if (how === 0) w.d.iommuGroup = r.pick(eps.map((e) => e.d.iommuGroup).filter((g): g is number => g !== undefined));
    else if (how === 1) w.d.iommuGroup = freshGroup();
    else delete w.d.iommuGroup;
    return `regroup ${w.d.bdf} ${old}→${w.d.iommuGroup}`;
  } },
  // One more switch level above a GPU or NIC (a Broadcom PEX between CPU and CX8 as on some HGX B300 OEM boards; a
  // second CX switch; a Microchip retimer-switch), its downstream port with a random common ACS word.
  addSwitchLevel: { on: ['dma', 'numa', 'inline', 'classic'], weight: 2, run: (n, r) => {
    const w = r.pick(places(n).filter((x) => x.d.kind === 'gpu' || x.d.kind === 'nic' || x.d.kind === 'switch-up'));
    if (!w.d.bdf.endsWith('.0') || siblings(w).some((s) => s !== w.d && busOf(s.bdf, 3) === busOf(w.d.bdf, 3))) throw new Skip('multi-function');
    const [vendor, device] = r.pick([[0x1000, 0xc030], [0x15b3, 0x197c], [0x11f8, 0x4052]] as const);
    const domain = dom(w.d.bdf);
    const top = w.d.bdf;
    const sib = siblings(w);
    const dsp: GenDevice = { bdf: '', kind: 'switch-down', vendor, device, speed: 32, acsCtl: r.pick(COMMON_ACS), children: [] };
    const usp: GenDevice = { bdf: top, kind: 'switch-up', vendor, device, speed: 32, children: [dsp] };
    if (w.d.iommuGroup !== undefined && r.chance(0.5)) { usp.iommuGroup = w.d.iommuGroup; dsp.iommuGroup = w.d.iommuGroup; }
    sib[sib.indexOf(w.d)] = usp;
    dsp.bdf = bdfOf(domain, freshBus(n, domain), 0);
    dsp.children = [w.d];
    rehome(n, w.d, domain, freshBus(n, domain), 0);
    return `addSwitchLevel ${vendor.toString(16)}:${device.toString(16)} above ${top} (now ${w.d.bdf})`;
  } },
  // One switch level less: a switch with a single downstream port spliced out (an HGX board without the PEX, the
  // NIC or GPU straight on the root port; a GB300 GPU without its second CX switch).
  removeSwitchLevel: { on: ['dma', 'numa', 'inline', 'classic'], weight: 2, run: (n, r) => {
    const ws = places(n).filter((x) => x.d.kind === 'switch-up' && x.d.children?.length === 1 && x.d.children[0]!.kind === 'switch-down' && x.d.children[0]!.children?.length);
    const w = r.pick(ws);
    const sib = siblings(w);
    const dsp = w.d.children![0]!;
    const moved = dsp.children!;
    const [domain, bus, dev0] = [dom(w.d.bdf), busOf(w.d.bdf), busOf(w.d.bdf, 3)];
    sib.splice(sib.indexOf(w.d), 1, ...moved);
    moved.forEach((m) => (m.bdf = bdfOf(domain, bus, dev0 + busOf(m.bdf, 3), Number(m.bdf.slice(-1)))));
    return `removeSwitchLevel ${w.d.bdf}+${dsp.bdf}`;
  } },
  // A GPU or NIC cabled/slotted elsewhere: below a new downstream port of another switch, or on a new root port
  // (OEM HGX boards differ in which PEX a NIC hangs off; a GB300 tray's CX8 on another Grace root port).
  moveEndpoint: { on: ['dma', 'numa', 'inline', 'classic'], weight: 3, run: (n, r, fam) => {
    const w = r.pick(places(n).filter((x) => x.d.kind === 'gpu' || x.d.kind === 'nic'));
    const group = siblings(w).filter((s) => s.bdf.slice(0, -1) === w.d.bdf.slice(0, -1)); // the device's functions
    const from = w.d.bdf;
    const sib = siblings(w);
    for (const g of group) sib.splice(sib.indexOf(g), 1);
    if (sib.length === 0 && w.parent) {
      // The port left empty stays (a slot with nothing in it).
    }
    const grace = fam === 'dma' || fam === 'numa';
    if (r.chance(0.4)) {
      const hb = r.pick(n.hostBridges);
      const domain = hb.domainBus.slice(0, 4);
      const rp: GenDevice = { bdf: bdfOf(domain, busOf(`${hb.domainBus}:00.0`), freeDev(hb.devices)), kind: 'rootport', speed: 32, acsCtl: r.pick([0x1d, 0x1f, 0, 0x1c]), children: group, ...(grace && r.chance(0.8) ? { vendor: 0x10de, device: 0x22b1 } : {}) };
      hb.devices.push(rp);
      const bus = freshBus(n, domain);
      group.forEach((g) => rehome(n, g, domain, bus, 0, Number(g.bdf.slice(-1))));
      return `moveEndpoint ${from} → new root port ${rp.bdf} (${w.d.bdf})`;
    }
    const ups = places(n).filter((x) => x.d.kind === 'switch-up' && x.d.children?.length);
    const u = r.pick(ups);
    const domain = dom(u.d.bdf);
    const s0 = u.d.children![0]!;
    const dsp: GenDevice = { bdf: bdfOf(domain, busOf(s0.bdf), freeDev(u.d.children!)), kind: 'switch-down', vendor: s0.vendor, device: s0.device, speed: 32, acsCtl: s0.acsCtl ?? 0x1d, children: group };
    if (s0.iommuGroup !== undefined) dsp.iommuGroup = s0.iommuGroup;
    u.d.children!.push(dsp);
    const bus = freshBus(n, domain);
    group.forEach((g) => rehome(n, g, domain, bus, 0, Number(g.bdf.slice(-1))));
    return `moveEndpoint ${from} → below new port ${dsp.bdf} of ${u.d.bdf} (${w.d.bdf})`;
  } },
  // A GPU or NIC gone from the bus (Xid 79 "GPU has fallen off the bus", a CX8 that failed to link up): its port stays.
  removeEndpoint: { on: ['dma', 'numa', 'inline', 'classic'], weight: 1, run: (n, r) => {
    const w = r.pick(places(n).filter((x) => x.d.kind === 'gpu' || x.d.kind === 'nic'));
    const sib = siblings(w);
    sib.splice(sib.indexOf(w.d), 1);
    return `removeEndpoint ${w.d.bdf}`;
  } },
  // NUMA affinity as firmware gives it (GB300/GH200: numa_node per socket; a BIOS that gives -1).
  numaNode: { on: ['numa', 'dma', 'inline'], weight: 1, run: (n, r) => {
    const w = r.pick(places(n).filter((x) => x.d.kind === 'gpu' || x.d.kind === 'nic' || x.d.kind === 'other'));
    w.d.numaNode = r.pick([-1, ...n.numa.map((x) => x.id)]);
    return `numaNode ${w.d.bdf} ${w.d.numaNode}`;
  } },
  // mlx5_ib not loaded for one NIC (Ethernet-only setup): the PF is there, no RDMA device.
  nicNoIb: { on: ['dma', 'numa', 'inline', 'classic'], weight: 1, run: (n, r) => {
    const w = r.pick(places(n).filter((x) => x.d.kind === 'nic' && x.d.ib));
    delete w.d.ib;
    return `nicNoIb ${w.d.bdf}`;
  } },
  // ConnectX-8 Data Direct pairing by VPD V3 (NVIDIA GB300 CX8 guide: the DMA function and PF carry the adapter UUID):
  // V3 dropped, mismatched, swapped between two DMA functions, the whole VPD unreadable.
  dmaVpd: { on: ['dma'], weight: 3, run: (n, r) => {
    const dmas = allDevices(n).filter((d) => d.classCode === 0x020700 && d.device === 0x2100);
    const d = r.pick(dmas);
    const how = r.int(4);
    if (how === 0) { d.vpd = { ...d.vpd!, v3: undefined } as GenDevice['vpd']; delete d.vpd!.v3; return `dmaVpd ${d.bdf} no V3`; }
    if (how === 1) { d.vpd = { ...d.vpd!, v3: 'deadbeef-0000-4000-8000-000000000000' }; return `dmaVpd ${d.bdf} V3 with no PF`; }
    if (how === 2) { const o = r.pick(dmas.filter((x) => x !== d)); const t = d.vpd!.v3; d.vpd = { ...d.vpd!, v3: o.vpd!.v3 }; o.vpd = { ...o.vpd!, v3: t }; return `dmaVpd swap V3 ${d.bdf}<->${o.bdf}`; }
    delete d.vpd;
    return `dmaVpd ${d.bdf} no vpd`;
  } },
  // A NIC's V3/SN changed (a replaced CX8 board: the PF's serial differs from its DMA function's).
  nicVpd: { on: ['dma', 'numa'], weight: 1, run: (n, r) => {
    const w = r.pick(places(n).filter((x) => x.d.kind === 'nic' && x.d.vpd));
    if (r.chance(0.5)) { w.d.vpd = { ...w.d.vpd!, sn: 'MT9999XZ99Z9' }; return `nicVpd ${w.d.bdf} other SN`; }
    delete w.d.vpd;
    return `nicVpd ${w.d.bdf} no vpd`;
  } },
  // Vera root ports (Vera Rubin: rdma_topo's vera_rp, CmpltRedir read-only off) in place of Grace ones.
  veraRp: { on: ['dma', 'numa'], weight: 1, run: (n, r) => {
    const rps = places(n).filter((x) => x.d.kind === 'rootport' && (x.d.device === 0x22b1 || x.d.device === 0x22b2));
    const all = r.chance(0.5);
    for (const w of all ? rps : [r.pick(rps)]) { w.d.device = 0x2f95; if (w.d.acsCtl !== undefined && r.chance(0.7)) w.d.acsCtl &= ~0x8; }
    return `veraRp ${all ? 'all' : 'one'}`;
  } },
  // ATS on a CX NIC (the VM guide's mlxconfig ATS_ENABLED=1), on one or on all.
  nicAts: { on: ['inline', 'numa'], weight: 2, run: (n, r) => {
    const nics = places(n).filter((x) => x.d.kind === 'nic');
    const on = r.chance(0.5);
    const all = r.chance(0.5);
    for (const w of all ? nics : [r.pick(nics)]) w.d.ats = on;
    return `nicAts ${all ? 'all' : 'one'} ${on ? 'present' : 'absent'}`;
  } },
};

/** The variant of one seed: a base and 1..4 mutations that applied. */
export function variant(seed: number): Variant {
  const r = new Rng(seed);
  resetGroups();
  const [base, fam, make] = r.pick(BASES);
  const node = make();
  const fams = Object.entries(FAMILIES).filter(([, f]) => f.on.includes(fam));
  const weighted = fams.flatMap(([k, f]) => Array.from({ length: f.weight }, () => k));
  const want = 1 + r.int(r.chance(0.3) ? 4 : 2);
  const mutations: string[] = [];
  for (let tries = 0; mutations.length < want && tries < 20; tries++) {
    const k = r.pick(weighted);
    const snapshot = structuredClone(node);
    try {
      mutations.push(FAMILIES[k]!.run(node, r, fam));
    } catch (e) {
      if (!(e instanceof Skip) && !(e instanceof Error && /pick from nothing/.test(e.message))) throw e;
      Object.assign(node, snapshot);
    }
  }
  return { seed, base, mutations, node };
}
