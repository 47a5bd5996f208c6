// /proc/driver/nvidia/params (the NVIDIA kernel module's procfs, nv-procfs.c): one "Name: value" line per module
// parameter; RegistryDwords holds the NVreg_RegistryDwords string, quoted ("PeerMappingOverride=1;").
import type { Parsed } from './sysfs.js';

/** RegistryDwords' keys and values; an absent line is an error (not this file), an empty string no keys. */
export function parseRegistryDwords(text: string): Parsed<Readonly<Record<string, string>>> {
  const m = /^RegistryDwords: "([^"\n]*)"$/m.exec(text);
  if (!m) return { ok: false, error: 'no RegistryDwords line' };
  const out: Record<string, string> = {};
  for (const kv of m[1]!.split(';')) {
    const eq = kv.indexOf('=');
    if (eq > 0) out[kv.slice(0, eq).trim()] = kv.slice(eq + 1).trim();
  }
  return { ok: true, value: out };
}
