// Whether this process could open a file read-write, asked of the Host (Host.access: access(2) under its root,
// so `--root` applies to /dev as to /sys): a device is never opened (opening a GPU or verbs node has side
// effects). "rw" means permitted by the file's mode and, for a device node, by the cgroup's device rule, which access(2)
// asks as open(2) does (inode_permission → devcgroup_inode_permission); not "will open" (a driver may still refuse).
import type { Access, AccessAnswer, Host } from '../host/host.js';

export type { Access };

export interface AccessProbe {
  rw(kpath: string): Promise<AccessAnswer>;
}

export function accessProbe(host: Host): AccessProbe {
  return { rw: (kpath) => host.access(kpath) };
}
