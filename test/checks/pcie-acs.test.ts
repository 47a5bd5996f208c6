// pcie-acs: ACS control words on the bridges between each GPU and NIC (the two downstream ports of each HGX switch).
import { allDevices, type GenDevice, type GenNode } from '../gen/sysfs-tree.js';
import { node as DGX1 } from '../gen/topologies/dgx1v-8xv100-4nic.js';
import { node as P40 } from '../gen/topologies/paddle-8xp40-plx-cascade.js';
import { acsCap, dev, detach, extLoop, HGX, P0, parentOf, table, type Want } from './_trees.js';

const DOWN = allDevices(HGX).filter((d) => d.kind === 'switch-down').map((d) => d.bdf);
const setAcs = (bdf: string, ctl: number) => (n: GenNode): void => void (dev(n, bdf).acsCtl = ctl);
const allConfigs = (bytes: 64 | 256) => (n: GenNode): void => allDevices(n).forEach((d) => (d.configBytes = bytes));
const redirect = (subject: string, actual: string): Want => ({ status: 'fail', code: 'acs-redirect', subject, expected: 'no redirect', actual });
const clean = (subject: string): Want => ({ status: 'pass', code: 'acs-ok', subject, expected: 'no redirect', actual: 'no redirect' });
const unreadable = (subject: string): Want => ({ status: 'skip', code: 'acs-unreadable', subject });
const na: Want = { status: 'skip', code: 'acs-na', subject: 'node' };

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
