// The kernel command line's PCI options that decide payload sizes and ASPM: `pci=pcie_bus_*` (drivers/pci/pci.c
// pci_setup) and `pcie_aspm=` (drivers/pci/pcie/aspm.c). Pure.
import type { Parsed } from './sysfs.js';

/** pcie_bus_config from the command line; null: none given, the kernel's CONFIG_PCIE_BUS_* default applies. */
export const BUS_POLICIES = ['pcie_bus_tune_off', 'pcie_bus_safe', 'pcie_bus_perf', 'pcie_bus_peer2peer'] as const;
export type BusPolicy = (typeof BUS_POLICIES)[number];

export interface PciCmdline {
  readonly busPolicy: BusPolicy | null;
  /**
   * `pcie_aspm=off` (the OS leaves ASPM as firmware set it) or `force`; null when not given or another value. Off wins
   * in any order: pcie_aspm_disable's off clears aspm_support_enabled, force only sets aspm_force, neither undoes the other.
   */
  readonly aspm: 'off' | 'force' | null;
}

/** Longest COMMAND_LINE_SIZE of the architectures the gate runs on is 4096; a longer text is not /proc/cmdline. */
const MAX = 64 * 1024;

/**
 * The text as the kernel's command line, or why it cannot be one (control characters, longer than MAX). Judged once
 * where /proc/cmdline is read (inventory/build.ts), so that every reader of it (IOMMU, PCI payload) sees one fact.
 */
export function kernelCmdline(text: string): Parsed<string> {
  if (text.length > MAX || /[\u0000-\u0008\u000b-\u001f\u007f]/.test(text)) return { ok: false, error: 'not a kernel command line (control characters, or longer than 64 KiB)' };
  return { ok: true, value: text };
}

/**
 * The kernel's own reading: words split at spaces, `"…"` kept together (lib/cmdline.c next_arg), nothing after
 * a bare `--` (arguments for init). Every `pci=` is applied in turn, each of its comma-separated options too, and
 * the options are matched by prefix as pci_setup does (strncmp): the last one given wins.
 */
export function parsePciCmdline(text: string): Parsed<PciCmdline> {
  const line = kernelCmdline(text);
  if (!line.ok) return line;
  let busPolicy: BusPolicy | null = null;
  let aspm: PciCmdline['aspm'] = null;
  for (const [key, value] of cmdlineParams(text)) {
    if (key === 'pci') {
      for (const opt of value.split(',')) {
        // pci_setup's order: pcie_bus_tune_off, _safe, _perf, _peer2peer, each by its own length.
        const hit = BUS_POLICIES.find((p) => opt.startsWith(p));
        if (hit) busPolicy = hit;
      }
    } else if (key === 'pcie_aspm' && (value === 'off' || value === 'force')) aspm = aspm === 'off' ? 'off' : value;
  }
  return { ok: true, value: { busPolicy, aspm } };
}

/**
 * The kernel's parameters as it reads them (lib/cmdline.c next_arg): whitespace separates, a double quote toggles
 * quoting and is dropped; a bare `--` ends them (what follows is init's).
 */
export function cmdlineWords(text: string): string[] {
  const all = splitWords(text);
  const end = all.indexOf('--');
  return end < 0 ? all : all.slice(0, end);
}

/**
 * The parameters given a value (`name=value`), in order, each name as the kernel matches it: `-` and `_` are one
 * character in a parameter's name (kernel/params.c parameq for early_param, parameqn in init/main.c
 * obsolete_checksetup for __setup), so `intel-iommu=on` is intel_iommu=on; read here with `_`. Values are as given.
 */
export function cmdlineParams(text: string): [name: string, value: string][] {
  const out: [string, string][] = [];
  for (const word of cmdlineWords(text)) {
    const eq = word.indexOf('=');
    if (eq > 0) out.push([word.slice(0, eq).replaceAll('-', '_'), word.slice(eq + 1)]);
  }
  return out;
}

function splitWords(text: string): string[] {
  const out: string[] = [];
  let cur = '';
  let quoted = false;
  let inToken = false;
  for (const ch of text) {
    if (ch === '"') {
      quoted = !quoted;
      inToken = true;
    } else if (!quoted && /\s/.test(ch)) {
      if (inToken) out.push(cur);
      cur = '';
      inToken = false;
    } else {
      cur += ch;
      inToken = true;
    }
  }
  if (inToken) out.push(cur);
  return out;
}
