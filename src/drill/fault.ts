// The one fault a drill stages, `<check>:<subject>=<value>`: parsed and printed here, answered by overlay.ts.
import { parseSize } from '../parsers/limits.js';
import { BDF_RE, type Parsed } from '../parsers/sysfs.js';

/** ACS Control bits a drill may set, with their bit numbers (PCIe Base 6.3 §7.7.11.3). */
export const ACS_BITS = { ReqRedir: 2, CmpltRedir: 3, EgressCtrl: 5 } as const;
export type AcsBit = keyof typeof ACS_BITS;

export type Fault =
  | { readonly kind: 'pcie-link'; readonly bdf: string; readonly width: number }
  | { readonly kind: 'pcie-acs'; readonly bdf: string; readonly bit: AcsBit }
  | { readonly kind: 'pcie-relaxed-ordering'; readonly bdf: string }
  | { readonly kind: 'pcie-throttle'; readonly bdf: string; readonly state: number }
  | { readonly kind: 'pcie-payload'; readonly bdf: string; readonly field: 'mps' | 'mrrs'; readonly bytes: number }
  | { readonly kind: 'gpu-bar1'; readonly bdf: string; readonly bytes: number }
  /** fatal / nonfatal: one uncorrectable error since boot; cor: `n` more correctable errors than the node counts. */
  | { readonly kind: 'pcie-aer'; readonly bdf: string; readonly error: 'fatal' | 'nonfatal' | 'cor'; readonly n: number }
  | { readonly kind: 'memlock'; readonly bytes: number }
  | { readonly kind: 'gpudirect-mechanism'; readonly value: 'none' };

const WIDTHS = new Set([1, 2, 4, 8, 12, 16, 32]);
const isAcsBit = (s: string): s is AcsBit => Object.hasOwn(ACS_BITS, s);

/** `pcie-link:0000:17:00.0=x8`, `pcie-aer:0000:18:00.0=fatal` (or `=nonfatal`, `=cor+150`), `pcie-acs:0000:16:02.0=ReqRedir`, `pcie-payload:0000:17:00.0=mps512`, `gpu-bar1:0000:18:00.0=256M`, `memlock=64K`, `gpudirect-mechanism=none`. */
export function parseFault(text: string): Parsed<Fault> {
  const eq = text.lastIndexOf('=');
  if (eq < 0) return { ok: false, error: `fault ${JSON.stringify(text)}: want <check>[:<subject>]=<value>` };
  const value = text.slice(eq + 1);
  const colon = text.indexOf(':');
  const check = colon >= 0 && colon < eq ? text.slice(0, colon) : text.slice(0, eq);
  const subject = colon >= 0 && colon < eq ? text.slice(colon + 1, eq) : '';
  const bad = (why: string): Parsed<Fault> => ({ ok: false, error: `fault ${JSON.stringify(text)}: ${why}` });
  switch (check) {
    case 'pcie-link': {
      if (!BDF_RE.test(subject)) return bad('subject must be a PCI address (0000:17:00.0)');
      const w = /^x(\d+)$/.exec(value);
      if (!w || !WIDTHS.has(Number(w[1]))) return bad('value must be a link width: x1, x2, x4, x8, x12, x16, x32');
      return { ok: true, value: { kind: 'pcie-link', bdf: subject, width: Number(w[1]) } };
    }
    case 'pcie-acs':
      if (!BDF_RE.test(subject)) return bad('subject must be a bridge PCI address (0000:16:02.0)');
      if (!isAcsBit(value)) return bad(`value must be one of ${Object.keys(ACS_BITS).join(', ')}`);
      return { ok: true, value: { kind: 'pcie-acs', bdf: subject, bit: value } };
    case 'pcie-relaxed-ordering':
      if (!BDF_RE.test(subject)) return bad('subject must be an RDMA adapter PCI address (0000:19:00.0)');
      if (value !== 'off') return bad('the only pcie-relaxed-ordering fault is off');
      return { ok: true, value: { kind: 'pcie-relaxed-ordering', bdf: subject } };
    case 'pcie-throttle':
      if (!BDF_RE.test(subject)) return bad('subject must be a port PCI address (0000:17:00.0)');
      if (!/^[1-9]\d{0,2}$/.test(value)) return bad('value must be a cooling state from 1 (one speed step down)');
      return { ok: true, value: { kind: 'pcie-throttle', bdf: subject, state: Number(value) } };
    case 'pcie-aer': {
      if (!BDF_RE.test(subject)) return bad('subject must be a PCI address on a GPU↔NIC path (0000:18:00.0)');
      if (value === 'fatal' || value === 'nonfatal') return { ok: true, value: { kind: 'pcie-aer', bdf: subject, error: value, n: 1 } };
      const c = /^cor\+([1-9]\d{0,8})$/.exec(value);
      if (!c) return bad('value must be fatal, nonfatal or cor+N (N correctable errors more, 1 to 999999999)');
      return { ok: true, value: { kind: 'pcie-aer', bdf: subject, error: 'cor', n: Number(c[1]) } };
    }
    case 'pcie-payload': {
      if (!BDF_RE.test(subject)) return bad('subject must be a PCI address on a GPU↔NIC path (0000:17:00.0)');
      const m = /^(mps|mrrs)(128|256|512|1024|2048|4096)$/.exec(value);
      if (!m) return bad('value must be mps or mrrs and a size in bytes from 128 to 4096 (mps512, mrrs256)');
      return { ok: true, value: { kind: 'pcie-payload', bdf: subject, field: m[1] as 'mps' | 'mrrs', bytes: Number(m[2]) } };
    }
    case 'gpu-bar1': {
      if (!BDF_RE.test(subject)) return bad('subject must be a GPU PCI address (0000:18:00.0)');
      const s = parseSize(value);
      if (!s.ok || s.value === 'unlimited' || s.value <= 0) return bad('value must be a window size (256M, 16G)');
      return { ok: true, value: { kind: 'gpu-bar1', bdf: subject, bytes: s.value } };
    }
    case 'memlock': {
      if (subject) return bad('memlock takes no subject (memlock=64K)');
      const s = parseSize(value);
      if (!s.ok || s.value === 'unlimited') return bad('value must be a size (64K, 8M, 65536)');
      return { ok: true, value: { kind: 'memlock', bytes: s.value } };
    }
    case 'gpudirect-mechanism':
      if (subject || value !== 'none') return bad('the only gpudirect-mechanism fault is gpudirect-mechanism=none');
      return { ok: true, value: { kind: 'gpudirect-mechanism', value: 'none' } };
    default:
      return bad(`unknown check ${JSON.stringify(check)}: pcie-link, pcie-acs, pcie-relaxed-ordering, pcie-throttle, pcie-aer, pcie-payload, gpu-bar1, memlock, gpudirect-mechanism`);
  }
}

export function formatFault(f: Fault): string {
  switch (f.kind) {
    case 'pcie-link':
      return `pcie-link:${f.bdf}=x${f.width}`;
    case 'pcie-acs':
      return `pcie-acs:${f.bdf}=${f.bit}`;
    case 'pcie-relaxed-ordering':
      return `pcie-relaxed-ordering:${f.bdf}=off`;
    case 'pcie-throttle':
      return `pcie-throttle:${f.bdf}=${f.state}`;
    case 'pcie-aer':
      return `pcie-aer:${f.bdf}=${f.error === 'cor' ? `cor+${f.n}` : f.error}`;
    case 'pcie-payload':
      return `pcie-payload:${f.bdf}=${f.field}${f.bytes}`;
    case 'gpu-bar1':
      return `gpu-bar1:${f.bdf}=${sizeUnit(f.bytes)}`;
    case 'memlock':
      return `memlock=${f.bytes % 1024 === 0 ? `${f.bytes / 1024}K` : f.bytes}`;
    case 'gpudirect-mechanism':
      return 'gpudirect-mechanism=none';
  }
}

/** 256M, 16G, or bytes: the largest unit parseSize reads back exactly. */
function sizeUnit(bytes: number): string {
  for (const [u, n] of [['G', 2 ** 30], ['M', 2 ** 20], ['K', 2 ** 10]] as const) if (bytes % n === 0) return `${bytes / n}${u}`;
  return String(bytes);
}
