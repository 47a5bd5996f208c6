// pcie-acs: the Direct NIC platform told from every ID rdma_topo lists and from every complex, not the first: a
// ConnectX switch port by its second device ID (0x1979), GPUs and NICs on Vera root ports, and an odd inline complex
// beside one that is not inline at all.
import { allDevices } from '../gen/sysfs-tree.js';
import { node as GB300 } from '../gen/topologies/gb300-cx8-dma-direct.js';
import { node as TRAY } from '../gen/topologies/gb300-tray-numa.js';
import { node as B300 } from '../gen/topologies/hgx-b300-cx8-inline.js';
import { dev, detach, table, type Want } from './_trees.js';

const masked = (subject: string, expected: string, actual: string): Want => ({ status: 'pass', code: 'acs-mask-ok', subject, expected, actual });
/** GB300 Data Direct complex of GPU 0009:06:00.0: Grace root port, DMA-side and GPU-side switch ports. */
const DD = { rp: '0009:00:00.0', dmaPort: '0009:02:00.0', gpuPort: '0009:02:01.0' } as const;
const DD_MASKS = [masked(DD.rp, 'xx111x0', '0011100'), masked(DD.dmaPort, 'xx110x1', '0011001'), masked(DD.gpuPort, 'xx101x1', '0010101')];
const TRAY_PORTS = allDevices(TRAY).filter((d) => d.kind === 'rootport').map((d) => d.bdf);
const unexpected: Want = { status: 'skip', code: 'acs-platform-unexpected', subject: 'node' };

export const cases = table('pcie-acs', [
  {
    name: 'valid: GB300 Data Direct whose ConnectX switch ports carry device ID 0x1979: the same complex, each mask as with 0x197c',
    from: GB300,
    change: (n) => allDevices(n).filter((d) => d.device === 0x197c).forEach((d) => (d.device = 0x1979)),
    subjects: [DD.rp, DD.dmaPort, DD.gpuPort],
    bare: DD_MASKS,
    based: DD_MASKS,
  },
  {
    name: 'valid: GPUs and ConnectX-8 on Vera root ports (CmpltRedir read-only off, ACSCtl 0x15): the NUMA platform, Vera\'s isolation mask',
    from: TRAY,
    change: (n) => allDevices(n).filter((d) => d.kind === 'rootport').forEach((d) => Object.assign(d, { device: 0x2f95, acsCtl: 0x15 })),
    subjects: TRAY_PORTS,
    bare: TRAY_PORTS.map((b) => masked(b, 'xx101x1', '0010101')),
    based: TRAY_PORTS.map((b) => masked(b, 'xx101x1', '0010101')),
  },
  {
    name: 'skip: HGX B300 with GPU0 moved onto its root port (not inline) and NIC 1 gone from its complex (odd): odd wins, no rule is told',
    from: B300,
    change: (n) => {
      const gpu0 = dev(n, '0000:1a:00.0');
      detach(n, gpu0.bdf);
      dev(n, '0000:14:01.0').children!.push({ ...gpu0, bdf: '0000:15:01.0' });
      detach(n, '0000:39:00.0');
    },
    subjects: ['node'],
    bare: [unexpected],
    based: [unexpected],
  },
]);
