// Human names for the PCI ids a GPU node reports (pci.ids subset), for reports only: checks compare ids.
import { type Fact, valueOf } from './fact.js';
const NAMES: Record<string, string> = {
  '10de:2335': 'H200',
  '10de:2330': 'H100 SXM5',
  '10de:2331': 'H100 PCIe',
  '10de:2321': 'H100 NVL',
  '10de:20b0': 'A100 SXM4 40GB',
  '10de:20b2': 'A100 SXM4 80GB',
  '10de:20b5': 'A100 PCIe 80GB',
  '10de:1db1': 'V100 SXM2 16GB',
  '10de:1db5': 'V100 SXM2 32GB',
  '10de:1b38': 'Tesla P40',
  '10de:2901': 'B200',
  '15b3:1021': 'ConnectX-7',
  '15b3:101d': 'ConnectX-6 Dx',
  '15b3:101b': 'ConnectX-6',
  '15b3:1017': 'ConnectX-5',
  '15b3:a2dc': 'BlueField-3',
};

export function deviceName(vendor: number | null, device: number | null): string {
  if (vendor === null || device === null) return 'unknown device';
  const key = `${hex4(vendor)}:${hex4(device)}`;
  return NAMES[key] ?? key;
}

export function hex4(n: number): string {
  return n.toString(16).padStart(4, '0');
}

/** 32 GT/s → "Gen5". */
export function genOf(gts: number | null): string {
  const gens: Record<string, string> = { '2.5': 'Gen1', '5': 'Gen2', '8': 'Gen3', '16': 'Gen4', '32': 'Gen5', '64': 'Gen6' };
  return gts === null ? 'Gen?' : (gens[String(gts)] ?? `${gts}GT/s`);
}

/** "Gen5 x16"; "Gen? x?" for what is absent or unknown. */
export function linkText(speed: Fact<number>, width: Fact<number>): string {
  return `${genOf(valueOf(speed) ?? null)} x${valueOf(width) ?? '?'}`;
}
