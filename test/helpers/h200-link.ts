// The bundled H200 capture's GPU (0000:00:06.0) retrained: what a node shows when a link trains down. The kernel's
// current_link_width and the Link Status register (PCIe capability +0x12, bits 9:4) say the same; both are written.
import { nul } from '../../src/model/fact.js';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parsePciConfig } from '../../src/parsers/pci-config.js';

export const H200_GPU_DIR = 'sys/devices/pci0000:00/0000:00:06.0';

export function linkStatusWidth(tree: string): number {
  const cfg = readFileSync(path.join(tree, H200_GPU_DIR, 'config'));
  const pcie = nul(parsePciConfig(cfg).pcie);
  if (!pcie) throw new Error('no PCI Express capability in config space');
  return (cfg.readUInt16LE(pcie.offset + 0x12) >> 4) & 0x3f;
}

export function trainGpuTo(tree: string, width: number): void {
  writeFileSync(path.join(tree, H200_GPU_DIR, 'current_link_width'), `${width}\n`);
  const file = path.join(tree, H200_GPU_DIR, 'config');
  const cfg = readFileSync(file);
  const pcie = nul(parsePciConfig(cfg).pcie);
  if (!pcie) throw new Error('no PCI Express capability in config space');
  const at = pcie.offset + 0x12;
  cfg.writeUInt16LE((cfg.readUInt16LE(at) & ~0x03f0) | ((width & 0x3f) << 4), at);
  writeFileSync(file, cfg);
}
