// pcie-acs: a port on the path of several GPU↔NIC pairs names the first three and counts the rest ("+N more"), with no
// tail at exactly three: extra GPUs in further ports of pair 0's switch put the NIC's port on 3, then 4 paths.
import type { GenNode } from '../gen/sysfs-tree.js';
import { dev, P0, table, type Want } from './_trees.js';

/** `count` more H100s, each in a port of its own below pair 0's switch (0000:17:02.0 on), ACSCtl 0. */
const moreGpus = (count: number) => (n: GenNode): void => {
  for (let i = 0; i < count; i++) {
    const bus = (0x1a + i).toString(16);
    dev(n, P0.up).children!.push({ bdf: `0000:17:0${i + 2}.0`, kind: 'switch-down', speed: 32, acsCtl: 0, children: [
      { bdf: `0000:${bus}:00.0`, kind: 'gpu', device: 0x2330, subsystem: [0x10de, 0x16c1], speed: 32, iommuGroup: 60 + i, ats: false },
    ] });
  }
};
/** ReqRedir on the switch port above mlx5_0: every GPU of the switch reaches the NIC through it. */
const redirectAtNic = (count: number) => (n: GenNode): void => {
  moreGpus(count)(n);
  dev(n, P0.downNic).acsCtl = 0x0004;
};
const redirect: Want = { status: 'fail', code: 'acs-redirect', subject: P0.downNic, expected: 'no redirect', actual: 'ReqRedir' };

export const cases = table('pcie-acs', [
  { name: 'invalid: ReqRedir on the NIC port of a switch with three GPUs (three pairs named, no "+0" tail)', change: redirectAtNic(2), subjects: [P0.downNic], bare: [redirect], based: [redirect] },
  { name: 'invalid: ReqRedir on the NIC port of a switch with four GPUs (three pairs named, "+1 more")', change: redirectAtNic(3), subjects: [P0.downNic], bare: [redirect], based: [redirect] },
]);
