// IOMMU state: units in /sys/class/iommu, group types in /sys/kernel/iommu_groups/*/type, kernel parameters.
import type { Host } from '../host/host.js';
import type { Iommu } from '../model/inventory.js';
import { parseIommuCmdline } from '../parsers/procfs.js';
import { factText, listWhole, Notes } from './read.js';
import { type Fact, present, unknown, valueOf } from '../model/fact.js';

/**
 * Reads the type of the given groups only (those of GPUs and NICs): a big node has hundreds of groups.
 * `cmdline`: /proc/cmdline as build.ts read it once for every reader of it.
 */
export async function readIommu(host: Host, groups: readonly string[], notes: Notes, cmdline: Fact<string>): Promise<Iommu> {
  // Failed listings are noted (and the node not judged: pci-known.ts), never "no IOMMU".
  const [units, all] = await Promise.all([listWhole(host, '/sys/class/iommu', notes), listWhole(host, '/sys/kernel/iommu_groups', notes)]);
  const wanted = [...new Set(groups)].sort();
  const types = await Promise.all(wanted.map(async (g) => valueOf(await factText(host, `/sys/kernel/iommu_groups/${g}/type`, notes))));
  const groupTypes: Record<string, string> = {};
  wanted.forEach((g, i) => {
    const t = types[i];
    if (t) groupTypes[g] = t;
  });
  return {
    units,
    groupCount: all.length,
    // Absent is no answer either: every kernel has a command line, so a tree without one could not tell.
    cmdline: cmdline.state === 'present' ? present(parseIommuCmdline(cmdline.value)) : unknown(cmdline.state === 'unknown' ? cmdline.why : '/proc/cmdline absent'),
    groupTypes,
  };
}
