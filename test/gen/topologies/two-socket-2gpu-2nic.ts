// Two sockets, one GPU and one ConnectX-7 under a PCIe switch on each (PIX inside a socket, SYS across): the
// smallest tree where a job can land near, far or split. Shaped like one pair of the HGX H100 tree
// (sglang30401-hgx-h100.ts) per socket; the CPU numbers are a parameter so a test can use the machine's real ones.
import type { GenDevice, GenHostBridge, GenNode } from '../sysfs-tree.js';

export const GPUS = ['0000:18:00.0', '0000:9a:00.0'] as const;
export const NICS = ['mlx5_0', 'mlx5_1'] as const;

const b = (bus: number, dev = 0): string => `0000:${bus.toString(16).padStart(2, '0')}:${dev.toString(16).padStart(2, '0')}.0`;

function socket(i: 0 | 1): GenHostBridge {
  const g = i === 0 ? 0x18 : 0x9a;
  const h = g - 3;
  const gpu: GenDevice = { bdf: b(g), kind: 'gpu', device: 0x2330, subsystem: [0x10de, 0x16c1], speed: 32 };
  const nic: GenDevice = { bdf: b(g + 1), kind: 'nic', device: 0x1021, subsystem: [0x15b3, 0x0041], speed: 32, ib: { name: NICS[i], fwVer: '28.39.1002' } };
  return {
    domainBus: `0000:${h.toString(16)}`,
    numaNode: i,
    devices: [{
      bdf: b(h, 1), kind: 'rootport', speed: 32, children: [{
        bdf: b(h + 1), kind: 'switch-up', speed: 32, children: [
          { bdf: b(h + 2, 0), kind: 'switch-down', speed: 32, acsCtl: 0, children: [gpu] },
          { bdf: b(h + 2, 1), kind: 'switch-down', speed: 32, acsCtl: 0, children: [nic] },
        ],
      }],
    }],
  };
}

/** `cpus`: node 0's and node 1's cpulists. */
export function twoSocket(cpus: readonly [string, string]): GenNode {
  return {
    hostBridges: [socket(0), socket(1)],
    numa: [{ id: 0, cpus: cpus[0] }, { id: 1, cpus: cpus[1] }],
    driver: { version: '580.159.04', open: true },
    kernel: '6.8.0-49-generic',
    peermem: false,
    memlockKiB: 'unlimited',
  };
}

/** A Sapphire Rapids pair of 48-core sockets with SMT, numbered as Linux does (threads of socket 0 are 96-143). */
export const node: GenNode = twoSocket(['0-47,96-143', '48-95,144-191']);
