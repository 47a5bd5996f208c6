// A Host that answers exactly one drill fault differently and passes every other read through unchanged.
import { valueOf } from '../model/fact.js';
import type { AccessAnswer, Host, ReadResult, StatInfo } from '../host/host.js';
import { PEERMEM_FILES } from '../inventory/gpudirect.js';
import { parsePciConfig } from '../parsers/pci-config.js';
import { bar1Window, parseResource, shrinkResource } from '../parsers/pci-resource.js';
import { ACS_BITS, type Fault } from './fault.js';

const GONE = { ok: false, missing: true, reason: 'ENOENT: hidden by the drill' } as const;
const LIMITS_RE = /^\/proc\/(?:self|\d+)\/limits$/;
/** The peermem module as /sys/module and /proc/modules name it (drivers/nvidia-peermem). */
const PEERMEM_MOD = 'nvidia_peermem';

/** pcie-throttle: one extra cooling device, as drivers/thermal/pcie_cooling.c registers it for the port. */
const THERMAL = '/sys/class/thermal';
const DRILL_CDEV = 'cooling_device999999';
function drillCooling(fault: Fault, p: string): string | null {
  if (fault.kind !== 'pcie-throttle' || !p.startsWith(`${THERMAL}/${DRILL_CDEV}/`)) return null;
  const file = { type: `PCIe_Port_Link_Speed_${fault.bdf}`, cur_state: `${fault.state}`, max_state: `${Math.max(3, fault.state)}` }[p.slice(THERMAL.length + DRILL_CDEV.length + 2)];
  return file === undefined ? null : `${file}\n`;
}

const base = (p: string): string => p.slice(p.lastIndexOf('/') + 1);
/** `/sys/devices/pci0000:15/…/0000:18:00.0/config` → `0000:18:00.0`. */
const devOf = (p: string): string => base(p.slice(0, p.lastIndexOf('/')));

const plus = (o: number | undefined, n: number): number | undefined => (o === undefined ? undefined : o + n);

/** Config space with one 16-bit register rewritten; a blob too short to hold it is returned as it is. */
function patch16(b: Uint8Array, at: number | undefined, f: (v: number) => number): Uint8Array {
  if (at === undefined || at + 2 > b.length) return b;
  const out = Uint8Array.from(b);
  const v = f(out[at]! | (out[at + 1]! << 8));
  out[at] = v & 0xff;
  out[at + 1] = (v >> 8) & 0xff;
  return out;
}

/** Config space with 32-bit register bits set and cleared; a blob too short to hold it is returned as it is. */
function patch32(b: Uint8Array, at: number | undefined, set: number, clear = 0): Uint8Array {
  if (at === undefined || at + 4 > b.length) return b;
  const out = Uint8Array.from(b);
  const v = new DataView(out.buffer);
  v.setUint32(at, ((v.getUint32(at, true) | set) & ~clear) >>> 0, true);
  return out;
}

/** Malformed TLP (fatal by the spec's default severity), Completion Timeout (non-fatal), Bad TLP (correctable). */
const AER_BIT = { fatal: 18, nonfatal: 14, cor: 6 } as const;
const AER_FILE = { fatal: 'aer_dev_fatal', nonfatal: 'aer_dev_nonfatal', cor: 'aer_dev_correctable' } as const;

/**
 * pcie-aer: the error recorded where the node records it. The sticky status bit in the AER capability (UESta with
 * its severity set or cleared; CESta), so a device without counters (a VM) shows it too; and the kernel's counter
 * file, when there is one: the bit's line and the TOTAL_ERR_* line raised by `n`.
 */
function aerRewrite(fault: Extract<Fault, { kind: 'pcie-aer' }>, p: string, b: Uint8Array): Uint8Array {
  const bit = 1 << AER_BIT[fault.error];
  if (base(p) === 'config') {
    const at = valueOf(parsePciConfig(b).aer)?.offset;
    if (at === undefined) return b;
    if (fault.error === 'cor') return patch32(b, at + 0x10, bit);
    const severed = patch32(b, at + 0x0c, fault.error === 'fatal' ? bit : 0, fault.error === 'fatal' ? 0 : bit);
    return patch32(patch32(severed, at + 0x08, 0, bit), at + 0x04, bit);
  }
  if (base(p) !== AER_FILE[fault.error]) return b;
  const lines = Buffer.from(b).toString('utf8').split('\n');
  const bump = (l: string): string => l.replace(/(\d+)$/, (d) => String(Number(d) + fault.n));
  // The bit's line is the one naming it in either kernel's wording; the total line always.
  const names = { fatal: /^(MalfTLP|Malformed TLP) /, nonfatal: /^(CmpltTO|Completion Timeout) /, cor: /^(BadTLP|Bad TLP) / }[fault.error];
  return Buffer.from(lines.map((l) => (names.test(l) || l.startsWith('TOTAL_ERR_') ? bump(l) : l)).join('\n'));
}

function rewrite(fault: Fault, p: string, b: Uint8Array): Uint8Array {
  const text = (): string => Buffer.from(b).toString('utf8');
  switch (fault.kind) {
    case 'pcie-link':
      if (devOf(p) !== fault.bdf) return b;
      if (base(p) === 'current_link_width') return Buffer.from(`${fault.width}\n`);
      // Link Status, PCIe capability +0x12, bits 9:4 (PCIe Base 6.3 §7.5.3.8): sysfs and config agree, as on a node.
      if (base(p) === 'config') return patch16(b, plus(valueOf(parsePciConfig(b).pcie)?.offset, 0x12), (v) => (v & ~0x03f0) | (fault.width << 4));
      return b;
    case 'pcie-acs':
      if (devOf(p) !== fault.bdf || base(p) !== 'config') return b;
      // ACS Control register, ACS capability +6 (PCIe Base 6.3 §7.7.11.3).
      return patch16(b, plus(valueOf(parsePciConfig(b).acs)?.offset, 6), (v) => v | (1 << ACS_BITS[fault.bit]));
    case 'pcie-relaxed-ordering':
      if (devOf(p) !== fault.bdf || base(p) !== 'config') return b;
      // Device Control, PCIe capability +0x08, bit 4 Enable Relaxed Ordering (PCIe Base 6.3 §7.5.3.4).
      return patch16(b, plus(valueOf(parsePciConfig(b).pcie)?.offset, 0x08), (v) => v & ~0x0010);
    case 'pcie-throttle':
      return b; // answered by drillCooling
    case 'pcie-aer':
      return devOf(p) === fault.bdf ? aerRewrite(fault, p, b) : b;
    case 'pcie-payload': {
      if (devOf(p) !== fault.bdf || base(p) !== 'config') return b;
      // Device Control, PCIe capability +0x08: MPS bits 7:5, MRRS bits 14:12, 128 << code bytes (PCIe Base 6.3 §7.5.3.4).
      const [shift, code] = [fault.field === 'mps' ? 5 : 12, Math.log2(fault.bytes / 128)];
      return patch16(b, plus(valueOf(parsePciConfig(b).pcie)?.offset, 0x08), (v) => (v & ~(7 << shift)) | (code << shift));
    }
    case 'gpu-bar1': {
      if (devOf(p) !== fault.bdf || base(p) !== 'resource') return b;
      // The GPUDirect window (drivers/pci/pci-sysfs.c resource_show) ends `bytes` after its start, as a BIOS gives it.
      const rs = parseResource(text());
      const w = rs.ok ? bar1Window(rs.value) : null;
      return w ? Buffer.from(shrinkResource(text(), w.index, BigInt(fault.bytes))) : b;
    }
    case 'memlock':
      if (!LIMITS_RE.test(p)) return b;
      return Buffer.from(text().replace(/^(Max locked memory\s+)\S+(\s+)\S+/m, `$1${fault.bytes}$2${fault.bytes}`));
    case 'gpudirect-mechanism':
      // DMA-BUF made impossible through the kernel release (RDMA imports DMA-BUF from 5.12): the driver keeps its
      // identity, so device-inventory does not fail too and the drill stays one fault (a kernel change only warns).
      if (p === '/proc/sys/kernel/osrelease') return Buffer.from('5.4.0-gdrgate-drill\n');
      if (p === '/proc/version') return Buffer.from(text().replace(/^Linux version \S+/, 'Linux version 5.4.0-gdrgate-drill'));
      if (p === '/proc/modules') return Buffer.from(text().split('\n').filter((l) => l.split(' ')[0] !== PEERMEM_MOD).join('\n'));
      return b;
  }
}

function hidden(fault: Fault, p: string): boolean {
  if (fault.kind !== 'gpudirect-mechanism') return false;
  const peer = `/sys/module/${PEERMEM_MOD}`;
  return Object.values(PEERMEM_FILES).includes(p as never) || p === peer || p.startsWith(`${peer}/`) || p.startsWith('/sys/kernel/mm/memory_peers/');
}

export class DrillHost implements Host {
  readonly root: string;

  constructor(
    private readonly inner: Host,
    readonly fault: Fault,
  ) {
    this.root = inner.root;
  }

  async list(p: string): Promise<ReadResult<string[]>> {
    if (hidden(this.fault, p)) return GONE;
    const r = await this.inner.list(p);
    if (this.fault.kind === 'pcie-throttle' && p === THERMAL) return { ok: true, value: [...(r.ok ? r.value : []), DRILL_CDEV] };
    if (!r.ok || this.fault.kind !== 'gpudirect-mechanism') return r;
    return { ok: true, value: r.value.filter((n) => !hidden(this.fault, `${p === '/' ? '' : p}/${n}`)) };
  }

  async readBytes(p: string, max?: number): Promise<ReadResult<Uint8Array>> {
    if (hidden(this.fault, p)) return GONE;
    const staged = drillCooling(this.fault, p);
    if (staged !== null) return { ok: true, value: Buffer.from(staged) };
    const r = await this.inner.readBytes(p, max);
    return r.ok ? { ok: true, value: rewrite(this.fault, p, r.value) } : r;
  }

  async readText(p: string): Promise<ReadResult<string>> {
    const r = await this.readBytes(p);
    return r.ok ? { ok: true, value: Buffer.from(r.value).toString('utf8') } : r;
  }

  readLink(p: string): Promise<ReadResult<string>> {
    return hidden(this.fault, p) ? Promise.resolve(GONE) : this.inner.readLink(p);
  }

  realPath(p: string): Promise<ReadResult<string>> {
    return hidden(this.fault, p) ? Promise.resolve(GONE) : this.inner.realPath(p);
  }

  lstat(p: string): Promise<ReadResult<StatInfo>> {
    return hidden(this.fault, p) ? Promise.resolve(GONE) : this.inner.lstat(p);
  }

  stat(p: string): Promise<ReadResult<StatInfo>> {
    return hidden(this.fault, p) ? Promise.resolve(GONE) : this.inner.stat(p);
  }

  access(p: string): Promise<AccessAnswer> {
    return hidden(this.fault, p) ? Promise.resolve({ access: 'unknown', why: 'ENOENT' }) : this.inner.access(p);
  }
}
