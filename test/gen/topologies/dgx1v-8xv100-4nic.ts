// DGX-1 with V100 (8 GPUs, 4x 100 Gb/s InfiniBand): the tree behind pytorch's DDP benchmark README `nvidia-smi topo -m`.
// Modelled on the NVIDIA DGX-1 System Architecture white paper (WP-08437-001): four PLX PCIe switches, two per
// CPU, each with two GPUs and one ConnectX IB NIC; all of a socket's PCIe hangs off one host bridge (Broadwell-EP),
// so a NIC is PIX to its switch's two GPUs, PHB to the other switch's, SYS across sockets. GPU bus ids are the
// DGX-1-class V100-SXM2 nodes' `nvidia-smi` bus ids 06,07,0A,0B,85,86,89,8A; NICs sit beside them in bus order
// (mlx5_0..3 = 05,0c,84,8b).
// Quirk kept from the output: every GPU row, GPU4-7 included, shows CPU affinity 0-19,40-59 although GPU4-7 are
// on NUMA node 1 (SYS to mlx5_0/1). A kernel would report 20-39,60-79 for them; the capture was presumably taken
// by a process confined to socket 0 (another DGX-1 `topo -m`, gist ashwin/e139748b "GPU topology examples", shows
// GPU4-7 at 20-39,60-79). local_cpulist is set as printed; numa_node stays 1.
import type { GenDevice, GenNode } from '../sysfs-tree.js';

export const source = 'pytorch_ddp_readme_dgx1v_8xV100_4nic_old_mlx5_columns.txt';

const PLX = { vendor: 0x10b5, device: 0x8796, speed: 8 } as const;
const SOCKET0 = '0-19,40-59';
const b = (bus: number, dev = 0): string => `0000:${bus.toString(16).padStart(2, '0')}:${dev.toString(16).padStart(2, '0')}.0`;

const gpu = (bus: number): GenDevice => ({
  bdf: b(bus), kind: 'gpu', device: 0x1db1, subsystem: [0x10de, 0x1212], speed: 8, localCpuList: SOCKET0,
});
const nic = (bus: number, i: number): GenDevice => ({
  bdf: b(bus), kind: 'nic', device: 0x1013, subsystem: [0x15b3, 0x0008], speed: 8,
  ib: { name: `mlx5_${i}`, fwVer: '12.23.1020', ports: [{ state: '4: ACTIVE', physState: '5: LinkUp', rate: '100 Gb/sec (4X EDR)', linkLayer: 'InfiniBand' }] },
});

/** Root port rp on host bus h → PLX upstream on bus s → downstream ports 08,10,11 on s+1 → the three ends on s+2 … s+4. */
function plx(h: number, rp: number, s: number, ends: GenDevice[]): GenDevice {
  return {
    bdf: b(h, rp), kind: 'rootport', vendor: 0x8086, device: rp === 2 ? 0x6f04 : 0x6f08, speed: 8, children: [{
      bdf: b(s), kind: 'switch-up', ...PLX, children: [0x08, 0x10, 0x11].map((dev, k) => ({
        bdf: b(s + 1, dev), kind: 'switch-down' as const, ...PLX, acsCtl: 0, children: [ends[k]!],
      })),
    }],
  };
}

export const node: GenNode = {
  hostBridges: [
    { domainBus: '0000:00', numaNode: 0, devices: [plx(0x00, 2, 0x03, [nic(0x05, 0), gpu(0x06), gpu(0x07)]), plx(0x00, 3, 0x08, [gpu(0x0a), gpu(0x0b), nic(0x0c, 1)])] },
    { domainBus: '0000:80', numaNode: 1, devices: [plx(0x80, 2, 0x82, [nic(0x84, 2), gpu(0x85), gpu(0x86)]), plx(0x80, 3, 0x87, [gpu(0x89), gpu(0x8a), nic(0x8b, 3)])] },
  ],
  numa: [{ id: 0, cpus: SOCKET0 }, { id: 1, cpus: '20-39,60-79' }],
  driver: { version: '418.67', open: false },
  kernel: '4.15.0-55-generic',
  memlockKiB: 'unlimited',
  cmdline: 'BOOT_IMAGE=/boot/vmlinuz-4.15.0-55-generic root=UUID=1b4b7c4e-6d2f-4f0e-a1a3-9d1c3e2f6a10 ro quiet',
};
