// Whether this process could open a file read-write, by access(2) on the Host's path: a device is never
// opened (opening a GPU or verbs node has side effects). access(2) checks the mode bits for the real uid;
// a cgroup device rule only shows at open(2), so "rw" means "permitted by the file", not "will open".
import fs from 'node:fs';
import { FsHost } from '../host/fs-host.js';
import type { Host } from '../host/host.js';

export type Access = 'rw' | 'denied' | 'unknown';

export interface AccessProbe {
  rw(kpath: string): Promise<{ readonly access: Access; readonly why?: string }>;
}

/**
 * The Host interface has no access(): this builds one on FsHost's own path mapping (so `--root` applies to
 * /dev as to /sys). Any other Host answers "unknown".
 */
export function accessProbe(host: Host): AccessProbe {
  return {
    rw(kpath) {
      if (!(host instanceof FsHost)) return Promise.resolve({ access: 'unknown', why: 'this root cannot answer access(2)' });
      return new Promise((resolve) =>
        fs.access(host.join(kpath), fs.constants.R_OK | fs.constants.W_OK, (err) =>
          resolve(err ? { access: err.code === 'EACCES' || err.code === 'EPERM' || err.code === 'EROFS' ? 'denied' : 'unknown', why: err.code ?? err.message } : { access: 'rw' }),
        ),
      );
    },
  };
}
