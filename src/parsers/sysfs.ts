// Pure parsers for sysfs attribute text (drivers/pci/pci-sysfs.c formats).

export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

/** `current_link_speed`: "32.0 GT/s PCIe", "2.5 GT/s PCIe", "Unknown" (pci_speed_string). null = Unknown. */
export function parseLinkSpeed(text: string): Parsed<number | null> {
  const s = text.trim();
  if (s === 'Unknown' || s === '') return { ok: true, value: null };
  const m = /^(\d+(?:\.\d+)?) GT\/s(?: PCIe)?$/.exec(s);
  if (!m) return { ok: false, error: `unexpected link speed ${JSON.stringify(s)}` };
  return { ok: true, value: Number(m[1]) };
}

/** `current_link_width`: decimal lane count; 0 or 255 mean no link / not reported. */
export function parseLinkWidth(text: string): Parsed<number | null> {
  const s = text.trim();
  if (!/^\d{1,3}$/.test(s)) return { ok: false, error: `unexpected link width ${JSON.stringify(s)}` };
  const n = Number(s);
  return { ok: true, value: n === 0 || n === 255 ? null : n };
}

/** `vendor`, `device`, `class`: "0x10de". */
export function parseHex(text: string): Parsed<number> {
  const s = text.trim();
  if (!/^0x[0-9a-fA-F]{1,8}$/.test(s)) return { ok: false, error: `expected hex, got ${JSON.stringify(s)}` };
  return { ok: true, value: parseInt(s.slice(2), 16) };
}

/** `numa_node`: -1 means the firmware reported no affinity. */
export function parseNumaNode(text: string): Parsed<number | null> {
  const s = text.trim();
  if (!/^-?\d+$/.test(s)) return { ok: false, error: `unexpected numa_node ${JSON.stringify(s)}` };
  const n = Number(s);
  return { ok: true, value: n < 0 ? null : n };
}

/** Kernel cpulist ("0-15,32-47") → sorted CPU numbers. */
export function parseCpuList(text: string): Parsed<number[]> {
  const s = text.trim();
  if (s === '') return { ok: true, value: [] };
  const out: number[] = [];
  for (const part of s.split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part);
    if (!m) return { ok: false, error: `unexpected cpulist ${JSON.stringify(s)}` };
    const a = Number(m[1]);
    const b = m[2] === undefined ? a : Number(m[2]);
    if (b < a || b - a > 1 << 16) return { ok: false, error: `bad cpulist range ${part}` };
    for (let i = a; i <= b; i++) out.push(i);
  }
  return { ok: true, value: out.sort((x, y) => x - y) };
}

/** A PCI address as the kernel names it: domain:bus:device.function. */
export const BDF_RE = /^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$/;
