// 4x Tesla V100-SXM2-16GB + 4 ConnectX-5, all on the second socket: the tree behind the "4x V100 node" notes'
// `nvidia-smi topo -m` (old format, mlx5 columns). The output says: each GPU pair and each NIC pair PIX to each
// other (one PCIe switch), NODE between the two groups (two host bridges of one NUMA node), CPU affinity 14-27.
// Modelled on a Skylake-SP board where socket 1's IIO stacks are pci0000:85 and pci0000:ae, each root port
// feeding a Broadcom PLX PEX 9797 (the switch family Supermicro uses to fan a x16 root port out to GPUs, per
// AnandTech's SC18 report on its 20-slot T4 server) with two GPUs and two NICs.
// Bus ids are not in the output; these follow depth-first enumeration under each stack.
import type { GenDevice, GenHostBridge, GenNode } from '../sysfs-tree.js';

export const source = 'v100sxm2_4gpu_4nic_pix_pairs_old_no_numa.txt';

const SW = { vendor: 0x10b5, device: 0x9797, speed: 8 } as const;
const b = (bus: number, dev = 0): string => `0000:${bus.toString(16).padStart(2, '0')}:${dev.toString(16).padStart(2, '0')}.0`;

/** Stack on bus h: root port h:00.0 → switch (h+1) → ports (h+2):{08,09,10,11} → GPU, GPU, NIC, NIC. */
function stack(h: number, firstNic: number): GenHostBridge {
  const ends: GenDevice[] = [
    { bdf: b(h + 3), kind: 'gpu', device: 0x1db1, subsystem: [0x10de, 0x1212], speed: 8 },
    { bdf: b(h + 4), kind: 'gpu', device: 0x1db1, subsystem: [0x10de, 0x1212], speed: 8 },
    ...[0, 1].map((k): GenDevice => ({
      bdf: b(h + 5 + k), kind: 'nic', device: 0x1017, subsystem: [0x15b3, 0x0007], speed: 8,
      ib: { name: `mlx5_${firstNic + k}`, fwVer: '16.26.1040', ports: [{ state: '4: ACTIVE', physState: '5: LinkUp', rate: '100 Gb/sec (4X EDR)', linkLayer: 'InfiniBand' }] },
    })),
  ];
  return {
    domainBus: `0000:${h.toString(16)}`,
    numaNode: 1,
    devices: [{
      bdf: b(h, 0), kind: 'rootport', vendor: 0x8086, device: 0x2030, speed: 8, children: [{
        bdf: b(h + 1), kind: 'switch-up', ...SW, children: [0x08, 0x09, 0x10, 0x11].map((dev, k) => ({
          bdf: b(h + 2, dev), kind: 'switch-down' as const, ...SW, acsCtl: 0, children: [ends[k]!],
        })),
      }],
    }],
  };
}

export const node: GenNode = {
  hostBridges: [stack(0x85, 0), stack(0xae, 2)],
  numa: [{ id: 0, cpus: '0-13' }, { id: 1, cpus: '14-27' }],
  driver: { version: '410.79', open: false },
  kernel: '3.10.0-957.el7.x86_64',
  peermem: false,
  memlockKiB: 'unlimited',
  cmdline: 'BOOT_IMAGE=/vmlinuz-3.10.0-957.el7.x86_64 root=/dev/mapper/centos-root ro crashkernel=auto rhgb quiet',
  // Skylake-SP, as the board above: family 6, model 0x55 (the kernel's INTEL_SKYLAKE_X), the x86 modalias's form.
  cpuModalias: 'cpu:type:x86,ven0000fam0006mod0055:feature:,0000,0001,0002,0003',
};
