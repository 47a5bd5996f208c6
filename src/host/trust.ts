// Refuses files the gate must trust (config, baseline, scontrol) when anyone but root could change them:
// the file and every directory above it (after resolving links) must be root-owned and not group/world
// writable; a sticky world-writable directory (/tmp) is fine when the entry below it is root's (sshd's StrictModes).
import fs from 'node:fs';
import path from 'node:path';
import { ConfigError } from '../errors.js';

export function untrustedReason(file: string, uid = 0): string | null {
  let real: string;
  try {
    real = fs.realpathSync.native(file); // one realpath(3); the walk below stats each component once
  } catch (e) {
    return `${file}: ${(e as Error).message}`;
  }
  const parts = real.split('/').filter(Boolean);
  let cur = '/';
  let parentSticky = false;
  for (let i = 0; i <= parts.length; i++) {
    if (i > 0) cur = path.join(cur, parts[i - 1]!);
    const st = fs.statSync(cur);
    const via = real === file ? '' : ` (${file} resolves to ${real})`;
    if (st.uid !== uid && st.uid !== 0) return `${cur} is owned by uid ${st.uid}, not root${via}`;
    const writable = (st.mode & 0o022) !== 0;
    const sticky = (st.mode & 0o1000) !== 0;
    if (writable && !(st.isDirectory() && sticky)) return `${cur} is writable by ${st.mode & 0o002 ? 'anyone' : 'its group'} (mode ${(st.mode & 0o7777).toString(8)})${via}`;
    if (parentSticky && st.uid !== uid && st.uid !== 0) return `${cur} sits in a shared sticky directory and is not root's${via}`;
    parentSticky = writable && sticky;
  }
  return null;
}

/**
 * The one trust gate for every command that runs as root and acts on Slurm or writes state (prolog, health, epilog,
 * resume, drill, agent): each file must be changeable by root (or the running user) only.
 */
export function requireTrusted(files: readonly string[], uid = process.getuid?.() ?? 0): void {
  for (const f of files) {
    const why = untrustedReason(f, uid);
    if (why) throw new ConfigError(`refusing ${f}: ${why}`);
  }
}
