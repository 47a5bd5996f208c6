// IOMMU state: units in /sys/class/iommu, group types in /sys/kernel/iommu_groups/*/type, kernel parameters.
import type { Host } from '../host/host.js';
import type { Iommu } from '../model/inventory.js';
import { parseIommuCmdline } from '../parsers/procfs.js';
import { factText, Notes } from './read.js';
import { valueOf } from '../model/fact.js';

/**
 * Reads the type of the given groups only (those of GPUs and NICs): a big node has hundreds of groups.
 * `cmdline`: /proc/cmdline as build.ts read it once for every reader of it (null: absent or unreadable).
 */
export async function readIommu(host: Host, groups: readonly string[], notes: Notes, cmdline: string | null): Promise<Iommu> {
  const [units, all] = await Promise.all([host.list('/sys/class/iommu'), host.list('/sys/kernel/iommu_groups')]);
  const wanted = [...new Set(groups)].sort();
  const types = await Promise.all(wanted.map(async (g) => valueOf(await factText(host, `/sys/kernel/iommu_groups/${g}/type`, notes))));
  const groupTypes: Record<string, string> = {};
  wanted.forEach((g, i) => {
    const t = types[i];
    if (t) groupTypes[g] = t;
  });
  return {
    units: units.ok ? units.value : [],
    groupCount: all.ok ? all.value.length : 0,
    cmdline: cmdline === null ? {} : parseIommuCmdline(cmdline),
    groupTypes,
  };
}
