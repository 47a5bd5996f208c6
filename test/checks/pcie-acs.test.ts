// pcie-acs: ACS control words on the bridges between each GPU and NIC (the two downstream ports of each HGX switch).
import { allDevices, type GenDevice, type GenNode } from '../gen/sysfs-tree.js';
import { node as DGX1 } from '../gen/topologies/dgx1v-8xv100-4nic.js';
import { node as P40 } from '../gen/topologies/paddle-8xp40-plx-cascade.js';
import { node as SIMAI } from '../gen/topologies/simai-hgx-8xa100-cx6dx-bond.js';
import { node as GB300 } from '../gen/topologies/gb300-cx8-dma-direct.js';
import { node as B300 } from '../gen/topologies/hgx-b300-cx8-inline.js';
import { symlink } from 'node:fs/promises';
import path from 'node:path';
import { remove } from './_patches.js';
import { acsCap, dev, detach, extAllOnes, extLoop, HGX, P0, parentOf, patches, put, table, unreadable as unreadableFile, type Want } from './_trees.js';

const DOWN = allDevices(HGX).filter((d) => d.kind === 'switch-down').map((d) => d.bdf);
const setAcs = (bdf: string, ctl: number) => (n: GenNode): void => void (dev(n, bdf).acsCtl = ctl);
const allConfigs = (bytes: 64 | 256) => (n: GenNode): void => allDevices(n).forEach((d) => (d.configBytes = bytes));
const redirect = (subject: string, actual: string): Want => ({ status: 'fail', code: 'acs-redirect', subject, expected: 'no redirect', actual });
const clean = (subject: string): Want => ({ status: 'pass', code: 'acs-ok', subject, expected: 'no redirect', actual: 'no redirect' });
const unreadable = (subject: string): Want => ({ status: 'skip', code: 'acs-unreadable', subject });
const na: Want = { status: 'skip', code: 'acs-na', subject: 'node' };
const masked = (subject: string, expected: string, actual: string, ok: boolean): Want => ({ status: ok ? 'pass' : 'fail', code: ok ? 'acs-mask-ok' : 'acs-mask', subject, expected, actual });
/** GB300 Data Direct complex of GPU 0009:06:00.0: Grace root port, DMA-side and GPU-side switch ports. */
/** The kernel's isolation set (SrcValid ReqRedir CmpltRedir UpstreamFwd) on every root port and switch downstream port. */
const isolateDownstream = (n: GenNode): void => allDevices(n).forEach((d) => void ((d.kind === 'switch-down' || d.kind === 'rootport') && (d.acsCtl = 0x1d)));
const DD = { rp: '0009:00:00.0', dmaPort: '0009:02:00.0', gpuPort: '0009:02:01.0', dma: '0009:03:00.0' } as const;

/** Each NIC leaves its switch for a second root port of the same host bridge: GPU↔NIC is PHB, through the root complex. */
function nicsOnOwnRootPorts(n: GenNode): void {
  for (const hb of n.hostBridges) {
    const nic = allDevices({ ...n, hostBridges: [hb] }).find((d) => d.kind === 'nic')!;
    const port = parentOf(n, nic.bdf)!;
    detach(n, port.bdf);
    const rp = hb.devices[0]!;
    const rp2: GenDevice = { ...rp, bdf: rp.bdf.replace(/:01\.0$/, ':02.0'), children: [nic] };
    hb.devices.push(rp2);
  }
}

export const cases = table('pcie-acs', [
  {
    name: 'valid: healthy HGX, ACSCtl 0 on every switch downstream port (root port redirect is off the peer path)',
    subjects: [P0.rp, P0.downGpu, P0.downNic],
    bare: [clean(P0.downGpu), clean(P0.downNic)],
    based: [clean(P0.downGpu), clean(P0.downNic)],
  },
  {
    name: 'invalid: ReqRedir on the switch downstream port above GPU0',
    change: setAcs(P0.downGpu, 0x0004),
    bare: [redirect(P0.downGpu, 'ReqRedir')],
    based: [redirect(P0.downGpu, 'ReqRedir')],
  },
  {
    name: 'invalid: CmpltRedir alone',
    change: setAcs(P0.downGpu, 0x0008),
    bare: [redirect(P0.downGpu, 'CmpltRedir')],
    based: [redirect(P0.downGpu, 'CmpltRedir')],
  },
  {
    name: 'invalid: EgressCtrl alone (on a port whose ACSCap has EgressCtrl+)',
    change: setAcs(P0.downNic, 0x0020),
    patch: acsCap(P0.downNic, 0x0020),
    bare: [redirect(P0.downNic, 'EgressCtrl')],
    based: [redirect(P0.downNic, 'EgressCtrl')],
  },
  {
    name: 'invalid: the kernel\'s ACS set (SrcValid ReqRedir CmpltRedir UpstreamFwd) on every downstream port',
    change: (n) => DOWN.forEach((b) => setAcs(b, 0x001d)(n)),
    bare: DOWN.map((b) => redirect(b, 'ReqRedir+CmpltRedir')),
    based: DOWN.map((b) => redirect(b, 'ReqRedir+CmpltRedir')),
  },
  {
    name: 'valid: SrcValid+UpstreamFwd only (they do not redirect peer traffic)',
    change: setAcs(P0.downGpu, 0x0011),
    subjects: [P0.downGpu],
    bare: [clean(P0.downGpu)],
    based: [clean(P0.downGpu)],
  },
  {
    name: 'skip: non-root read (64-byte configs): ACS unreadable on every bridge, never pass',
    change: allConfigs(64),
    subjects: DOWN,
    bare: DOWN.map(unreadable),
    based: DOWN.map(unreadable),
  },
  {
    name: 'skip: conventional space only (256-byte configs): ACS lies beyond it, never pass',
    change: (n) => {
      allConfigs(256)(n);
      setAcs(P0.downGpu, 0x0004)(n);
    },
    subjects: DOWN,
    bare: DOWN.map(unreadable),
    based: DOWN.map(unreadable),
  },
  {
    name: 'skip: ReqRedir set, but the extended capability list loops back to 0x100 before ACS: never "no ACS"',
    change: setAcs(P0.downGpu, 0x0004),
    patch: extLoop(P0.downGpu),
    subjects: [P0.downGpu],
    bare: [unreadable(P0.downGpu)],
    based: [unreadable(P0.downGpu)],
  },
  {
    name: 'skip: the port\'s extended space reads all ones from 0x100 (it stopped answering): never "no ACS capability"',
    patch: extAllOnes(P0.downGpu),
    subjects: [P0.downGpu],
    bare: [unreadable(P0.downGpu)],
    based: [unreadable(P0.downGpu)],
  },
  {
    name: 'valid with baseline: ReqRedir where the class says acsRedirectAllowed true',
    change: setAcs(P0.downGpu, 0x0004),
    edit: { acsRedirectAllowed: true },
    subjects: [P0.downGpu],
    bare: [redirect(P0.downGpu, 'ReqRedir')],
    based: [{ status: 'pass', code: 'acs-ok', subject: P0.downGpu, expected: 'redirect allowed', actual: 'ReqRedir' }],
  },
  {
    name: 'skip: no RDMA adapter on the node (acs-na)',
    change: (n) => allDevices(HGX).filter((d) => d.kind === 'nic').forEach((d) => detach(n, d.bdf)),
    bare: [na],
    based: [na],
  },
  {
    name: 'skip: GPU and NIC under different root ports (PHB: no bridge on the peer path)',
    change: nicsOnOwnRootPorts,
    bare: [na],
    based: [na],
  },
  {
    name: 'valid: GB300 Data Direct complex, each port holds the mask rdma_topo computes',
    from: GB300,
    subjects: [DD.rp, DD.dmaPort, DD.gpuPort],
    bare: [masked(DD.rp, 'xx111x0', '0011100', true), masked(DD.dmaPort, 'xx110x1', '0011001', true), masked(DD.gpuPort, 'xx101x1', '0010101', true)],
    based: [masked(DD.rp, 'xx111x0', '0011100', true), masked(DD.dmaPort, 'xx110x1', '0011001', true), masked(DD.gpuPort, 'xx101x1', '0010101', true)],
  },
  {
    name: 'invalid: GB300 Data Direct, the GPU-side switch port lost ReqRedir (the classic rule would pass it)',
    from: GB300,
    change: setAcs(DD.gpuPort, 0x0011),
    bare: [masked(DD.gpuPort, 'xx101x1', '0010001', false)],
    based: [masked(DD.gpuPort, 'xx101x1', '0010001', false)],
  },
  {
    name: 'invalid: GB300 Data Direct, the NIC\'s Grace root port with ACS off (the previous generation\'s bare-metal advice)',
    from: GB300,
    change: setAcs('0000:00:00.0', 0),
    bare: [masked('0000:00:00.0', 'xx111x1', '0000000', false)],
    based: [masked('0000:00:00.0', 'xx111x1', '0000000', false)],
  },
  {
    name: 'skip: GB300 Data Direct with a second function below a GPU segment\'s root port: no mask can be told',
    from: GB300,
    change: (n) => dev(n, DD.dmaPort).children!.push({ bdf: '0009:03:00.1', kind: 'other', vendor: 0x15b3, device: 0x2100 }),
    bare: [{ status: 'skip', code: 'acs-platform-unexpected', subject: 'node' }],
    based: [{ status: 'skip', code: 'acs-platform-unexpected', subject: 'node' }],
  },
  // What a function is (its IDs: config space, else sysfs) that could not be read was "something else": the DMA
  // function's complex was left out (its ports judged by the isolation mask: three fails with setpci advice that
  // would undo correct settings), or a ConnectX switch port's loss made the node "not Direct NIC" (a mismatch fail).
  ...[DD.dma, DD.gpuPort].map((bdf) => ({
    name: `skip: GB300 Data Direct with ${bdf}'s config space and device ID unreadable: which platform cannot be told`,
    from: GB300,
    patch: patches(unreadableFile(`sys/bus/pci/devices/${bdf}/config`), unreadableFile(`sys/bus/pci/devices/${bdf}/device`)),
    bare: [{ status: 'skip', code: 'acs-platform-unexpected', subject: 'node' } as Want],
    based: [{ status: 'skip', code: 'acs-platform-unexpected', subject: 'node' } as Want],
  })),
  {
    name: 'valid: GB300 Data Direct whose upstream ConnectX switch port\'s class reads empty: told by its IDs, its DMA function still read, each mask as before',
    from: GB300,
    patch: put('sys/bus/pci/devices/0009:01:00.0/class', '\n'),
    subjects: [DD.rp, DD.dmaPort, DD.gpuPort],
    bare: [masked(DD.rp, 'xx111x0', '0011100', true), masked(DD.dmaPort, 'xx110x1', '0011001', true), masked(DD.gpuPort, 'xx101x1', '0010101', true)],
    based: [masked(DD.rp, 'xx111x0', '0011100', true), masked(DD.dmaPort, 'xx110x1', '0011001', true), masked(DD.gpuPort, 'xx101x1', '0010101', true)],
  },
  {
    name: 'invalid with baseline: the class says Direct NIC (acsPolicy), the node is an HGX H100 with no Direct NIC topology',
    edit: { acsPolicy: 'direct-nic' },
    subjects: ['node'],
    bare: [],
    based: [{ status: 'fail', code: 'acs-platform-mismatch', subject: 'node', expected: 'direct-nic', actual: 'classic' }],
  },
  {
    name: 'valid: HGX B300 with ConnectX-8 inline on bare metal, no ACS bit on the complex\'s ports',
    from: B300,
    subjects: ['0000:14:01.0', '0000:16:00.0', '0000:16:01.0'],
    bare: ['0000:14:01.0', '0000:16:00.0', '0000:16:01.0'].map((b) => masked(b, 'xx000x0', '0000000', true)),
    based: ['0000:14:01.0', '0000:16:00.0', '0000:16:01.0'].map((b) => masked(b, 'xx000x0', '0000000', true)),
  },
  {
    name: 'invalid with baseline: a class set to virtualized by hand keeps isolation: ACSCtl 0 on the HGX H100 switch ports fails',
    edit: { acsPolicy: 'virtualized' },
    subjects: [P0.downGpu, P0.downNic],
    bare: [clean(P0.downGpu), clean(P0.downNic)],
    based: [masked(P0.downGpu, 'xx111x1', '0000000', false), masked(P0.downNic, 'xx111x1', '0000000', false)],
  },
  {
    name: 'invalid with baseline: a virtualized class, the switch port above GPU0 without an ACS capability: no isolation, never a pass',
    change: (n) => void delete dev(n, P0.downGpu).acsCtl,
    edit: { acsPolicy: 'virtualized' },
    subjects: [P0.downGpu],
    bare: [{ status: 'pass', code: 'acs-ok', subject: P0.downGpu, expected: 'no redirect', actual: 'no ACS' }],
    based: [{ status: 'fail', code: 'acs-mask', subject: P0.downGpu, expected: 'xx111x1', actual: 'no ACS' }],
  },
  {
    // drivers/pci/pci.c: pci_std_enable_acs sets only the controls ACS Capability has, and pci_acs_flags_enabled takes
    // a missing one as hard-wired enabled; this port implements no Upstream Forwarding (its Control bit reads 0).
    name: 'valid with baseline: a virtualized class, HGX H100 switch ports without Upstream Forwarding in ACSCap, the kernel\'s isolation set: isolated',
    change: (n) => [P0.downGpu, P0.downNic].forEach((b) => void (dev(n, b).acsCtl = 0x000d)),
    patch: patches(acsCap(P0.downGpu, 0, 0x0010), acsCap(P0.downNic, 0, 0x0010)),
    edit: { acsPolicy: 'virtualized' },
    subjects: [P0.downGpu, P0.downNic],
    bare: [redirect(P0.downGpu, 'ReqRedir+CmpltRedir'), redirect(P0.downNic, 'ReqRedir+CmpltRedir')],
    based: [masked(P0.downGpu, 'xxx11x1', '0001101', true), masked(P0.downNic, 'xxx11x1', '0001101', true)],
  },
  {
    // PCIe Base 6.3 §6.12.1.2, drivers/pci/pci.c pci_acs_enabled: a single-function upstream port is isolated whatever
    // its ACS; the HGX A100's lower switches' upstream ports (no ACS capability) failed "no isolation" before.
    name: 'valid with baseline: a virtualized HGX A100 cascade, isolation on every root and downstream port: the lower switches\' upstream ports need none',
    from: SIMAI,
    change: isolateDownstream,
    ref: isolateDownstream,
    edit: { acsPolicy: 'virtualized' },
    subjects: ['0000:0e:00.0', '0000:11:00.0'],
    bare: [{ status: 'pass', code: 'acs-ok', subject: '0000:0e:00.0', expected: 'no redirect', actual: 'no ACS' }, { status: 'pass', code: 'acs-ok', subject: '0000:11:00.0', expected: 'no redirect', actual: 'no ACS' }],
    based: ['0000:0e:00.0', '0000:11:00.0'].map((b) => masked(b, 'xx111x1', 'not applicable', true)),
  },
  {
    name: 'invalid with baseline: the same, one upstream port a multi-function device without ACS: no isolation there',
    from: SIMAI,
    change: (n) => {
      isolateDownstream(n);
      dev(n, '0000:0e:00.0').multiFunction = true;
    },
    ref: isolateDownstream,
    edit: { acsPolicy: 'virtualized' },
    subjects: ['0000:0e:00.0', '0000:11:00.0'],
    bare: [{ status: 'pass', code: 'acs-ok', subject: '0000:0e:00.0', expected: 'no redirect', actual: 'no ACS' }, { status: 'pass', code: 'acs-ok', subject: '0000:11:00.0', expected: 'no redirect', actual: 'no ACS' }],
    based: [{ status: 'fail', code: 'acs-mask', subject: '0000:0e:00.0', expected: 'xx111x1', actual: 'no ACS' }, masked('0000:11:00.0', 'xx111x1', 'not applicable', true)],
  },
  {
    // A function that cannot be told counts against the platform only where it may lie below a ConnectX switch unseen.
    name: 'invalid: ReqRedir above GPU0, and a function on a root bus of its own whose class is gone: the classic rule still judges',
    change: (n) => {
      dev(n, P0.downGpu).acsCtl = 0x0004;
      n.hostBridges.unshift({ domainBus: '0000:00', numaNode: 0, devices: [{ bdf: '0000:00:05.0', kind: 'other' }] });
    },
    patch: remove('sys/bus/pci/devices/0000:00:05.0/class'),
    bare: [redirect(P0.downGpu, 'ReqRedir')],
    based: [redirect(P0.downGpu, 'ReqRedir')],
  },
  {
    name: 'skip: GB300 Data Direct and a function whose class is gone below a root port not read: it may be a complex\'s, which platform cannot be told',
    from: GB300,
    change: (n) => void n.hostBridges.push({ domainBus: '0030:00', numaNode: 1, devices: [{ bdf: '0030:00:00.0', kind: 'rootport', children: [{ bdf: '0030:01:00.0', kind: 'other' }] }] }),
    patch: remove('sys/bus/pci/devices/0030:01:00.0/class'),
    bare: [{ status: 'skip', code: 'acs-platform-unexpected', subject: 'node' }],
    based: [{ status: 'skip', code: 'acs-platform-unexpected', subject: 'node' }],
  },
  {
    name: 'skip: GB300 Data Direct and a function whose place cannot be read (its link loops): which platform cannot be told',
    from: GB300,
    change: (n) => void n.hostBridges.push({ domainBus: '0030:00', numaNode: 1, devices: [{ bdf: '0030:00:05.0', kind: 'other' }] }),
    patch: patches(remove('sys/bus/pci/devices/0030:00:05.0'), async (root) => symlink('0030:00:05.0', path.join(root, 'sys/bus/pci/devices/0030:00:05.0'))),
    bare: [{ status: 'skip', code: 'acs-platform-unexpected', subject: 'node' }],
    based: [{ status: 'skip', code: 'acs-platform-unexpected', subject: 'node' }],
  },
  {
    // A port the platform rules whose `config` file is missing (a capture without it) is unread, never dropped.
    name: 'skip: GB300 Data Direct, the config file of a ConnectX switch port off the complex\'s three rules missing: said unreadable',
    from: GB300,
    patch: remove('sys/bus/pci/devices/0009:05:00.0/config'),
    bare: [unreadable('0009:05:00.0')],
    based: [unreadable('0009:05:00.0')],
  },
  {
    name: 'skip: GB300 Data Direct, the config file of the switch port toward a DMA function missing: said unreadable, never "no ACS capability"',
    from: GB300,
    patch: remove(`sys/bus/pci/devices/${DD.dmaPort}/config`),
    bare: [unreadable(DD.dmaPort)],
    based: [unreadable(DD.dmaPort)],
  },
  {
    name: 'valid: DGX-1 (PLX switches with NIC + 2 GPUs, ACSCtl 0)',
    from: DGX1,
    bare: [],
    based: [],
  },
  {
    name: 'skip: 8x P40 cascade with its only NIC on the other socket (acs-na)',
    from: P40,
    bare: [na],
    based: [na],
  },
]);
