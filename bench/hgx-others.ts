// The benchmarks' 8-GPU HGX H100 as a node has it: the generated tree plus what sits beside the GPU/NIC paths.
import type { GenDevice, GenNode } from '../test/gen/sysfs-tree.js';

/** 4 NVSwitches (class 0x068000) and 8 NVMe (0x010802) on their own host bridges, as on a DGX/HGX H100. */
export function withOthers(n: GenNode): GenNode {
  const other = (bus: number, cls: number, vendor: number, device: number): GenDevice =>
    ({ bdf: `0000:${bus.toString(16).padStart(2, '0')}:00.0`, kind: 'other', classCode: cls, vendor, device, speed: 16 }) as GenDevice;
  const extra = [0x05, 0x06, 0x07, 0x08].map((b) => other(b, 0x068000, 0x10de, 0x22a3));
  const nvme = [0x60, 0x61, 0x62, 0x63, 0xe0, 0xe1, 0xe2, 0xe3].map((b) => other(b, 0x010802, 0x144d, 0xa824));
  return { ...n, hostBridges: [...n.hostBridges, ...[...extra, ...nvme].map((d, i) => ({ domainBus: `0000:${d.bdf.slice(5, 7)}`, numaNode: i % 2, devices: [d] }))] };
}
