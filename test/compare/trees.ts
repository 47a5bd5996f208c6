// Test-side: a compact two-pair HGX-style node (GPU+NIC per PCIe switch) to mutate one dimension at a time.
import path from 'node:path';
import { allDevices, buildTree, type GenDevice, type GenHostBridge, type GenNode } from '../gen/sysfs-tree.js';
import { FsHost } from '../../src/host/fs-host.js';
import { buildInventory } from '../../src/inventory/build.js';
import type { Inventory } from '../../src/model/inventory.js';

const b = (bus: number, dev = 0, fn = 0): string => `0000:${bus.toString(16).padStart(2, '0')}:${dev.toString(16).padStart(2, '0')}.${fn}`;

/**
 * Pair i on host bridge h = 0x10 + 0x20·i: root port h:01.0 → switch upstream (h+1):00.0 → downstream (h+2):00.0
 * → GPU (h+3):00.0 and downstream (h+2):01.0 → NIC (h+6):00.0. Buses h+4, h+5 stay free for an extra switch.
 */
export function pair(i: number, numaNode = 0): GenHostBridge {
  const h = 0x10 + 0x20 * i;
  const gpu: GenDevice = { bdf: b(h + 3), kind: 'gpu', device: 0x2330, subsystem: [0x10de, 0x16c1], speed: 32, iommuGroup: 10 + 2 * i };
  const nic: GenDevice = { bdf: b(h + 6), kind: 'nic', speed: 32, iommuGroup: 11 + 2 * i, ats: true, ib: { name: `mlx5_${i}`, fwVer: '28.39.1002' } };
  return {
    domainBus: `0000:${h.toString(16)}`,
    numaNode,
    devices: [{
      bdf: b(h, 1), kind: 'rootport', speed: 32, acsCtl: 0x001d, children: [{
        bdf: b(h + 1), kind: 'switch-up', speed: 32, children: [
          { bdf: b(h + 2, 0), kind: 'switch-down', speed: 32, acsCtl: 0, children: [gpu] },
          { bdf: b(h + 2, 1), kind: 'switch-down', speed: 32, acsCtl: 0, children: [nic] },
        ],
      }],
    }],
  };
}

/** Two sockets; both pairs on socket 0 (socket 1 holds CPUs only, so a NUMA move is visible). */
export function base(): GenNode {
  return {
    hostBridges: [pair(0), pair(1)],
    numa: [{ id: 0, cpus: '0-31' }, { id: 1, cpus: '32-63' }],
    driver: { version: '535.183.01', open: false },
    kernel: '5.15.0-119-generic',
    peermem: true,
    memlockKiB: 'unlimited',
    iommu: { units: ['dmar0', 'dmar1'], groupType: 'identity' },
    cmdline: 'BOOT_IMAGE=/boot/vmlinuz-5.15.0-119-generic root=UUID=7d1e6a43-0c55-4a47-9b1e-2f7e8b0f5c11 ro intel_iommu=on iommu=pt',
  };
}

export function dev(n: GenNode, bdf: string): GenDevice {
  const d = allDevices(n).find((x) => x.bdf === bdf);
  if (!d) throw new Error(`no ${bdf} in the description`);
  return d;
}

/** Parent of a device in the description (to remove or re-hang it). */
export function parentOf(n: GenNode, bdf: string): GenDevice {
  const p = allDevices(n).find((x) => x.children?.some((c) => c.bdf === bdf));
  if (!p) throw new Error(`no parent for ${bdf}`);
  return p;
}

export async function tree(dir: string, name: string, n: GenNode): Promise<{ root: string; inv: Inventory }> {
  const root = path.join(dir, name);
  await buildTree(root, n);
  return { root, inv: await buildInventory(new FsHost(root)) };
}
