// Pure parsers for small procfs files: /proc/modules, /proc/driver/nvidia/version, /proc/version, /proc/cmdline.
import type { Parsed } from './sysfs.js';
import { cmdlineParams } from './pci-cmdline.js';

/** /proc/modules: "name size refcount deps state address [taint]" → names of loaded modules. */
export function parseModules(text: string): Set<string> {
  return new Set(parseModuleStates(text).keys());
}

/**
 * /proc/modules → each module's state (kernel/module/procfs.c m_show): Live, or Loading while its init runs
 * (MODULE_STATE_COMING: it may yet fail) and Unloading while its exit runs (MODULE_STATE_GOING). The state is the
 * fifth field with or without CONFIG_MODULE_UNLOAD (" %i " refcount and its users, or " - -"); '' where a line has none.
 */
export function parseModuleStates(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split('\n')) {
    const fields = line.split(' ');
    const name = fields[0];
    if (name && /^[A-Za-z0-9_]+$/.test(name)) out.set(name, fields[4] ?? '');
  }
  return out;
}

/** A module whose init or exit is running: neither there for a job nor gone. */
export const inTransit = (state: string | undefined): state is 'Loading' | 'Unloading' => state === 'Loading' || state === 'Unloading';

export interface NvidiaDriver {
  readonly flavour: 'open' | 'proprietary';
  readonly version: string;
}

/**
 * /proc/driver/nvidia/version first line:
 *   "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  (…)"
 *   "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.129.03  Thu Oct 19 …"
 */
export function parseNvidiaVersion(text: string): Parsed<NvidiaDriver> {
  const line = text.split('\n').find((l) => /^(NVRM version: )?NVIDIA UNIX /.test(l));
  if (!line) return { ok: false, error: 'no "NVRM version: NVIDIA UNIX" line' };
  // The field right after "Kernel Module" (and its " for <arch>"): a number further on (a date, a build host) is none.
  const v = /\bKernel Module(?: for \S+)?\s+(\d+\.\d+(?:\.\d+)?)(?:\s|$)/.exec(line);
  if (!v) return { ok: false, error: `no version number after "Kernel Module" in ${JSON.stringify(line.slice(0, 120))}` };
  return { ok: true, value: { flavour: /\bOpen Kernel\b/.test(line) ? 'open' : 'proprietary', version: v[1]! } };
}

/** /proc/version → kernel release ("6.18.44-fc-v657-gpu"). */
export function parseKernelRelease(text: string): Parsed<string> {
  const m = /^Linux version (\S+)/.exec(text.trim());
  return m ? { ok: true, value: m[1]! } : { ok: false, error: 'not a /proc/version line' };
}

/** "5.15.0-91-generic" → [5, 15]; null if unparsable. */
export function kernelMajorMinor(release: string): [number, number] | null {
  const m = /^(\d+)\.(\d+)/.exec(release);
  return m ? [Number(m[1]), Number(m[2])] : null;
}

/** /proc/cmdline → the IOMMU-related parameters (iommu=, intel_iommu=, amd_iommu=, iommu.passthrough=). */
export function parseIommuCmdline(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  // Words as the kernel reads them (quotes kept together and dropped), none after a bare `--` (init's arguments), a
  // name's `-` read as `_` as the kernel matches names (intel-iommu=on is intel_iommu=on).
  for (const [key, value] of cmdlineParams(text)) {
    if (/^(iommu|intel_iommu|amd_iommu|iommu\.passthrough|iommu\.strict)$/.test(key)) out[key] = value;
  }
  return out;
}
