// NCCL's own limits on a topology file, beyond its values (nccl-xml.ts): where its IB transport files each adapter
// (NCCL_IB_MERGE_VFS), and how many elements its table holds. Pure.
import { BDF_RE } from '../parsers/sysfs.js';
import { NcclXmlError, type XmlNode } from './nccl-xml.js';

const baseOf = (p: string): string => p.slice(p.lastIndexOf('/') + 1);

/**
 * The element NCCL's IB transport files an adapter function under (net_ib/init.cc ncclIbGetPciPath): the realpath of
 * its device with the function digit made 0 (the ports of one card are one device) and, with NCCL_IB_MERGE_VFS (on by
 * default), the two device digits made 0 too (a card's VFs are that device as well). NCCL counts those characters from
 * the path's end, whatever the domain's width: a VMD domain's `10000:01:00.1` is merged as `0000:01:00.1` is. A path
 * whose last part is no bus id the kernel names is left as it is.
 */
export function ncclMergedPath(sysPath: string): string {
  if (!BDF_RE.test(baseOf(sysPath))) return sysPath;
  return `${sysPath.slice(0, -4)}00.0`;
}

/** NCCL_TOPO_XML_MAX_NODES (src/graph/topo.h, NCCL 2.21.5+; 1024 before): the elements one node's topology holds, the file's and NCCL's own. */
export const NCCL_MAX_NODES = 256;
/** The RDMA devices NCCL's IB transport takes at most (net_ib/common.h MAX_IB_DEVS). */
const NCCL_MAX_IB_DEVS = 32;

const countNodes = (n: XmlNode): number => 1 + n.subs.reduce((k, s) => k + countNodes(s), 0);

/**
 * What NCCL adds to the file's elements in the same table of NCCL_MAX_NODES: per GPU its `gpu` and an `nvlink` per
 * NVLink peer (every other GPU, or the NVSwitches as one) and one to the CPU (`nvlink` or `c2c`); per adapter whose net
 * the file leaves to it a `nic` and a `net` (at most MAX_IB_DEVS adapters). Throws NcclXmlError when the file would not
 * leave that room: NCCL fails its topology load on a larger one ("XML parser is limited to 256 nodes"), every job's
 * communicator with it.
 */
export function checkNodeRoom(root: XmlNode, gpus: number, netsLeft: number): void {
  const file = countNodes(root);
  const theirs = gpus * (gpus + 1) + 2 * Math.min(netsLeft, NCCL_MAX_IB_DEVS);
  if (file + theirs > NCCL_MAX_NODES) {
    throw new NcclXmlError(`${file} elements, and NCCL adds up to ${theirs} of its own (${gpus} GPUs' gpu and nvlink elements, ${Math.min(netsLeft, NCCL_MAX_IB_DEVS)} adapters' nets): more than the ${NCCL_MAX_NODES} NCCL's topology reader holds (NCCL_TOPO_XML_MAX_NODES)`);
  }
}
