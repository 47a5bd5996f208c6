// /proc/driver/nvidia/gpus/<BDF>/information, written by the NVIDIA kernel module (open-gpu-kernel-modules
// kernel-open/nvidia/nv-procfs.c, nv_procfs_read_gpu_info): "Device Minor:" is the N of /dev/nvidiaN and
// "Bus Location:" the GPU's PCI address. Minor order is not PCI order, so this is the only safe minor → BDF map.
import { BDF_RE, type Parsed } from './sysfs.js';

export interface GpuInformation {
  readonly minor: number;
  /** Lower-case, as sysfs names the device (`0000:18:00.0`). */
  readonly bdf: string;
  readonly model: string | null;
}

/** The `Key: \t value` lines of the file (keys as the module prints them). */
function fields(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split('\n')) {
    const i = line.indexOf(':');
    if (i > 0) out.set(line.slice(0, i).trim(), line.slice(i + 1).trim());
  }
  return out;
}

export function parseGpuInformation(text: string): Parsed<GpuInformation> {
  const f = fields(text);
  const minor = f.get('Device Minor');
  const bus = f.get('Bus Location')?.toLowerCase();
  // The module's minors are 0..254 (NV_MAX_DEVICES, /dev/nvidia255 is nvidiactl).
  if (minor === undefined) return { ok: false, error: 'no Device Minor line' };
  if (!/^\d{1,3}$/.test(minor) || Number(minor) > 254) return { ok: false, error: `Device Minor ${JSON.stringify(minor)} is no GPU's (the module's GPUs are 0 to 254)` };
  if (bus === undefined) return { ok: false, error: 'no Bus Location line' };
  if (!BDF_RE.test(bus)) return { ok: false, error: `Bus Location ${JSON.stringify(bus)} is no PCI address` };
  return { ok: true, value: { minor: Number(minor), bdf: bus, model: f.get('Model') || null } };
}
