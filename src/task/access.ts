// Whether this process could open a file read-write, asked of the Host (Host.access: access(2) under its root,
// so `--root` applies to /dev as to /sys): a device is never opened (opening a GPU or verbs node has side
// effects), and "rw" means "permitted by the file", not "will open" (a cgroup device rule shows at open(2)).
import type { Access, AccessAnswer, Host } from '../host/host.js';

export type { Access };

export interface AccessProbe {
  rw(kpath: string): Promise<AccessAnswer>;
}

export function accessProbe(host: Host): AccessProbe {
  return { rw: (kpath) => host.access(kpath) };
}
