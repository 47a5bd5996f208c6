// pcie-acs's codes: what each tells, what to do, the layer that owns it (the field matrix).
import { type Codes, finder } from '../types.js';

export const CODES = {
  'acs-ok': { tells: 'No ACS redirect on the bridges between GPU and NIC: peer traffic can stay inside the switch.', do: 'None.', layer: 'server' },
  'acs-redirect': { tells: 'ACS redirect on a bridge between a GPU and a NIC sends every GPUDirect transfer up through the CPU root complex.', do: 'Disable ReqRedir/CmpltRedir/EgressCtrl on the switch ports (BIOS ACS option or setpci at boot) on bare metal; keep only where the platform needs isolation.', layer: 'server' },
  'acs-unreadable': { tells: 'ACS control could not be read: it is in extended config space, which only root can read, or the capability list broke before it (the message names the problem).', do: 'Run the gate as root (Slurm Prolog does).', layer: 'scheduler' },
  'acs-na': { tells: 'No bridge lies between a GPU and an RDMA adapter on this node.', do: 'None.', layer: 'server' },
  'acs-mask-ok': { tells: 'The port holds the ACS bits its platform requires (Direct NIC: the mask NVIDIA\'s rdma_topo computes; virtualized: the kernel\'s isolation set).', do: 'None.', layer: 'server' },
  'acs-mask': { tells: 'The port lacks a required ACS bit or holds a forbidden one: on a Direct NIC platform GPUDirect through the ConnectX DMA function fails or crosses the root complex; on a virtualized class isolation is lost.', do: 'Apply the message\'s setpci command for this boot, then add its pci=config_acs= entry to the kernel command line (Linux 6.11+) or the BIOS setting so it lasts; NVIDIA\'s rdma_topo write-grub-acs writes the same.', layer: 'server' },
  'acs-platform-unexpected': { tells: 'A Direct NIC device (ConnectX DMA function, ConnectX switch, Grace root port) is there, but the PCIe tree around it is not one of the platform\'s topologies, so no mask can be told.', do: 'Compare gdrgate topo and rdma_topo topo with the reference node; a missing function or a moved card is the usual cause.', layer: 'server' },
  'acs-platform-mismatch': { tells: 'The class says this is a Direct NIC node, but no Direct NIC topology is on it.', do: 'Check that the node belongs to this class (device-inventory), or set the class\'s acsPolicy.', layer: 'server' },
} as const satisfies Codes;

export const f = finder('pcie-acs', CODES);
export type AcsFinding = ReturnType<typeof f>;
