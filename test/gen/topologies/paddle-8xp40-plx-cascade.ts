// 8x Tesla P40 behind cascaded PLX switches on socket 0, one ConnectX-4 on socket 1: the tree behind the
// PaddlePaddle SE-ResNeXt-152 performance doc's `nvidia-smi topo -m` (very old driver: SOC for SYS).
// Modelled on Supermicro's single-root / cascade GPU servers ("4U GPU System - PCIe Root Architectures" page:
// all GPUs reach each other through PCIe switches behind one CPU x16 link): a PEX 8796 on root port 00:03.0
// feeds two PEX 8796, four GPUs each, giving PIX inside a group of four and PXB between the groups without
// crossing the host bridge; the NIC on the other socket is SOC to every GPU. Bus numbers follow depth-first
// enumeration; the PLX downstream port numbering (08, 09, 10, 11) is that of the PEX 8747 capture in our lspci corpus.
// The output's CPU affinity is 0-13 on every GPU: 2 x 14 cores (Xeon E5 v4), no SMT.
import type { GenDevice, GenNode } from '../sysfs-tree.js';

export const source = 'paddle_8xP40_plx_pix_pxb_mlx5_soc_very_old.txt';

const PLX = { vendor: 0x10b5, device: 0x8796, speed: 8 } as const;
const b = (bus: number, dev = 0): string => `0000:${bus.toString(16).padStart(2, '0')}:${dev.toString(16).padStart(2, '0')}.0`;

/** A PEX 8796 whose upstream port sits on bus `up`, with four P40s on buses up+2 … up+5. */
function gpuSwitch(up: number): GenDevice {
  return {
    bdf: b(up), kind: 'switch-up', ...PLX, children: [0x08, 0x09, 0x10, 0x11].map((dev, k) => ({
      bdf: b(up + 1, dev), kind: 'switch-down', ...PLX, acsCtl: 0, children: [{
        bdf: b(up + 2 + k), kind: 'gpu', device: 0x1b38, subsystem: [0x10de, 0x11d9], speed: 8,
      }],
    })),
  };
}

export const node: GenNode = {
  hostBridges: [
    {
      domainBus: '0000:00', numaNode: 0, devices: [{
        bdf: b(0x00, 0x03), kind: 'rootport', vendor: 0x8086, device: 0x6f08, speed: 8, children: [{
          bdf: b(0x02), kind: 'switch-up', ...PLX, children: [
            { bdf: b(0x03, 0x08), kind: 'switch-down', ...PLX, acsCtl: 0, children: [gpuSwitch(0x04)] },
            { bdf: b(0x03, 0x10), kind: 'switch-down', ...PLX, acsCtl: 0, children: [gpuSwitch(0x0a)] },
          ],
        }],
      }],
    },
    {
      domainBus: '0000:80', numaNode: 1, devices: [{
        bdf: b(0x80, 0x02), kind: 'rootport', vendor: 0x8086, device: 0x6f04, speed: 8, children: [{
          bdf: b(0x81), kind: 'nic', device: 0x1013, subsystem: [0x15b3, 0x0010], speed: 8,
          ib: { name: 'mlx5_0', fwVer: '12.17.2020', ports: [{ state: '4: ACTIVE', physState: '5: LinkUp', rate: '100 Gb/sec (4X EDR)', linkLayer: 'InfiniBand' }] },
        }],
      }],
    },
  ],
  numa: [{ id: 0, cpus: '0-13' }, { id: 1, cpus: '14-27' }],
  driver: { version: '375.26', open: false },
  kernel: '3.10.0-514.el7.x86_64',
  memlockKiB: 'unlimited',
  cmdline: 'BOOT_IMAGE=/vmlinuz-3.10.0-514.el7.x86_64 root=/dev/mapper/centos-root ro crashkernel=auto rhgb quiet',
};
