// A small POSIX ustar reader/writer (IEEE 1003.1-2001 `pax` format): regular files, directories, symlinks, PAX 'x' long names; reads GNU tar's 'L'/'K' too.
export type TarKind = 'file' | 'dir' | 'link' | 'hardlink' | 'char' | 'block' | 'fifo';

export interface TarEntry {
  /** Relative path without leading `./` or trailing `/` (`sys/bus/pci/devices/0000:17:00.0`). */
  readonly path: string;
  readonly kind: TarKind;
  readonly mode: number;
  readonly mtime: number;
  readonly data?: Uint8Array;
  /** Link target: symlink text, or the path a hard link names. */
  readonly target?: string;
}

export class TarError extends Error {
  override readonly name = 'TarError';
}

const BLOCK = 512;
const RECORD = 20 * BLOCK; // GNU tar's default blocking factor
const TYPE: Record<string, TarKind> = { '0': 'file', '\0': 'file', '7': 'file', '1': 'hardlink', '2': 'link', '3': 'char', '4': 'block', '5': 'dir', '6': 'fifo' };
const FLAG: Record<TarKind, string> = { file: '0', hardlink: '1', link: '2', char: '3', block: '4', dir: '5', fifo: '6' };

const enc = new TextEncoder();
const dec = new TextDecoder();

function octal(b: Uint8Array, off: number, len: number, n: number): void {
  const s = Math.trunc(n).toString(8).padStart(len - 1, '0');
  if (s.length > len - 1) throw new TarError(`value ${n} does not fit a ${len}-byte tar field`);
  b.set(enc.encode(s), off); // the last byte stays NUL
}

function str(b: Uint8Array, off: number, len: number, s: string): void {
  const bytes = enc.encode(s);
  if (bytes.length > len) throw new TarError(`"${s}" does not fit a ${len}-byte tar field`);
  b.set(bytes, off);
}

/** Splits a name too long for the 100-byte field into ustar prefix (≤155) and name (≤100) at a '/'; null when impossible. */
function splitName(name: string): [prefix: string, name: string] | null {
  const bytes = enc.encode(name);
  if (bytes.length <= 100) return ['', name];
  if (bytes.length > 256 || bytes.length !== name.length) return null;
  for (let i = name.length - 101; i < name.length; i++) {
    if (i > 0 && name[i] === '/' && i <= 155 && name.length - i - 1 <= 100 && name.length - i - 1 > 0) return [name.slice(0, i), name.slice(i + 1)];
  }
  return null;
}

function header(name: string, prefix: string, flag: string, mode: number, size: number, mtime: number, linkname: string): Uint8Array {
  const h = new Uint8Array(BLOCK);
  str(h, 0, 100, name);
  octal(h, 100, 8, mode & 0o7777);
  octal(h, 108, 8, 0);
  octal(h, 116, 8, 0);
  octal(h, 124, 12, size);
  octal(h, 136, 12, mtime);
  h.fill(0x20, 148, 156); // checksum counted as spaces
  h[156] = flag.charCodeAt(0);
  str(h, 157, 100, linkname);
  str(h, 257, 8, 'ustar\x0000');
  str(h, 265, 32, 'root');
  str(h, 297, 32, 'root');
  str(h, 345, 155, prefix);
  const sum = h.reduce((a, x) => a + x, 0);
  str(h, 148, 8, sum.toString(8).padStart(6, '0') + '\0 ');
  return h;
}

/** One PAX record: "<len> key=value\n", len counting itself. */
function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  let len = enc.encode(body).length + 1;
  while (String(len).length + enc.encode(body).length !== len) len++;
  return `${len}${body}`;
}

/** A stand-in name for readers that ignore PAX: printable ASCII only, so it always fits its field. */
const ascii = (s: string): string => s.replace(/[^\x20-\x7e]/g, '_');
const pad = (n: number): number => (BLOCK - (n % BLOCK)) % BLOCK;

/** Writes entries in the given order (parents before children is the caller's job). */
export function writeTar(entries: readonly TarEntry[]): Uint8Array {
  const parts: Uint8Array[] = [];
  let total = 0;
  const push = (u: Uint8Array): void => {
    parts.push(u);
    total += u.length;
  };
  const pushData = (d: Uint8Array): void => {
    push(d);
    if (pad(d.length)) push(new Uint8Array(pad(d.length)));
  };
  for (const e of entries) {
    const name = e.kind === 'dir' ? `${e.path}/` : e.path;
    const link = e.target ?? '';
    const split = splitName(name);
    const linkFits = enc.encode(link).length <= 100;
    let pax = '';
    if (!split) pax += paxRecord('path', name);
    if (!linkFits) pax += paxRecord('linkpath', link);
    const [prefix, short] = split ?? ['', ascii(name.slice(-100))];
    if (pax) {
      const body = enc.encode(pax);
      push(header(`PaxHeader/${ascii(short.slice(-80))}`, '', 'x', 0o644, body.length, e.mtime, ''));
      pushData(body);
    }
    const data = e.kind === 'file' ? (e.data ?? new Uint8Array(0)) : new Uint8Array(0);
    push(header(short, prefix, FLAG[e.kind], e.mode, data.length, e.mtime, linkFits ? link : 'PaxLink'));
    pushData(data);
  }
  push(new Uint8Array(2 * BLOCK));
  if (total % RECORD) push(new Uint8Array(RECORD - (total % RECORD)));
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function allZero(b: Uint8Array, at: number): boolean {
  for (let i = at, end = at + BLOCK; i < end; i++) if (b[i] !== 0) return false;
  return true;
}

/**
 * The header's checksum: its bytes summed, the checksum field itself counted as spaces. With `words` (the archive
 * as 32-bit words, where it is 4-byte aligned; every header starts at a multiple of 512), four bytes at a time:
 * two 16-bit lanes of a word, each at most 128 × 2 × 255 < 65536 over a header.
 */
function headerSum(buf: Uint8Array, words: Uint32Array | null, at: number): number {
  let sum = 8 * 0x20;
  if (words !== null) {
    let lo = 0;
    let hi = 0;
    for (let i = at >>> 2, end = i + BLOCK / 4; i < end; i++) {
      const v = words[i]!;
      lo += v & 0x00ff00ff;
      hi += (v >>> 8) & 0x00ff00ff;
    }
    sum += (lo & 0xffff) + (lo >>> 16) + (hi & 0xffff) + (hi >>> 16);
    for (let i = 148; i < 156; i++) sum -= buf[at + i]!;
    return sum;
  }
  for (let i = 0; i < 148; i++) sum += buf[at + i]!;
  for (let i = 156; i < BLOCK; i++) sum += buf[at + i]!;
  return sum;
}

/** Numeric field: octal text, or GNU base-256 when the high bit of the first byte is set. */
function num(b: Uint8Array, h: number, field: number, len: number): number {
  const off = h + field;
  if (b[off]! & 0x80) {
    let v = b[off]! & 0x7f;
    for (let i = 1; i < len; i++) v = v * 256 + b[off + i]!;
    return v;
  }
  // Octal digits between optional spaces, ended by NUL or the field's end (read byte by byte: 4 fields a header).
  let i = off;
  const end = off + len;
  while (i < end && b[i] === 0x20) i++;
  let v = 0;
  for (; i < end && b[i]! >= 0x30 && b[i]! <= 0x37; i++) v = v * 8 + (b[i]! - 0x30);
  while (i < end && b[i] === 0x20) i++;
  return i === end || b[i] === 0 ? v : badNum(b, off, field, len);
}

function badNum(b: Uint8Array, off: number, field: number, len: number): never {
  const s = dec.decode(b.subarray(off, off + len)).replace(/\0.*$/s, '').trim();
  throw new TarError(`bad numeric field "${s}" at offset ${field}`);
}

/**
 * NUL-terminated text of a field. ASCII (nearly every name) as one latin1 slice of the archive's Buffer view
 * (native, no string built a character at a time); else decoded as UTF-8.
 */
function cstr(v: Buffer, off: number, len: number): string {
  let end = off;
  let ascii = true;
  for (const stop = off + len; end < stop && v[end] !== 0; end++) if (v[end]! >= 0x80) ascii = false;
  return v.toString(ascii ? 'latin1' : 'utf8', off, end);
}

function parsePax(body: Uint8Array): Map<string, string> {
  const out = new Map<string, string>();
  let at = 0;
  while (at < body.length) {
    const sp = body.indexOf(0x20, at);
    const len = Number(dec.decode(body.subarray(at, sp)));
    if (sp < 0 || !Number.isInteger(len) || len <= 0) throw new TarError('malformed PAX header');
    const rec = dec.decode(body.subarray(sp + 1, at + len - 1));
    const eq = rec.indexOf('=');
    out.set(rec.slice(0, eq), rec.slice(eq + 1));
    at += len;
  }
  return out;
}

/** A PAX header or GNU long name holds a path and a link target of PATH_MAX each, with room for other records. */
const LONG_MAX = 3 * 4096;

const clean = (p: string): string => (p.startsWith('.') || p.startsWith('/') || p.endsWith('/') ? p.replace(/^(\.?\/)+/, '').replace(/\/+$/, '') : p);

/** One entry as the scanner meets it: file data as offsets into the archive (no view made unless asked for). */
export interface TarVisit {
  readonly path: string;
  readonly kind: TarKind;
  readonly mode: number;
  readonly mtime: number;
  /** Files: where the data lie in the archive, [start, end). */
  readonly start: number;
  readonly end: number;
  /** Links and hard links: the target (a hard link's cleaned). */
  readonly target: string;
}

/**
 * Walks the archive's headers and calls `visit` for each entry readTar would give, in order; the visit object is
 * reused between calls (copy what you keep). `maxEntries`: more entries than this (headers of every kind) is an
 * error, found before they cost memory. A long name (PAX or GNU) is limited to PATH_MAX: no reader of ours wants a
 * longer one.
 */
export function scanTar(input: Uint8Array, maxEntries: number, visit: (e: TarVisit) => void): void {
  const buf = new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
  // Names are sliced from a Buffer view of the same bytes (no copy).
  const view = Buffer.from(input.buffer, input.byteOffset, input.byteLength);
  const words = buf.byteOffset % 4 === 0 ? new Uint32Array(buf.buffer, buf.byteOffset, buf.length >>> 2) : null;
  const e = { path: '', kind: 'file' as TarKind, mode: 0, mtime: 0, start: 0, end: 0, target: '' };
  let headers = 0;
  let at = 0;
  let pax: Map<string, string> | null = null;
  let longName: string | null = null;
  let longLink: string | null = null;
  for (;;) {
    // Every tar writer ends an archive with zero blocks: one that stops without them (even at an entry's end) was cut
    // short, and would replay as a node without the rest of its tree.
    if (at >= buf.length) throw new TarError(`truncated archive: no end-of-archive block after offset ${Math.min(at, buf.length)}`);
    if (at + BLOCK > buf.length) throw new TarError(`truncated archive: partial header at offset ${at}`);
    if (allZero(buf, at)) break; // end of archive (a second zero block follows)
    if (++headers > maxEntries) throw new TarError(`more than ${maxEntries} entries`);
    const stored = num(buf, at, 148, 8);
    if (headerSum(buf, words, at) !== stored) throw new TarError(`bad header checksum at offset ${at}`);
    const flag = String.fromCharCode(buf[at + 156]!);
    const size = num(buf, at, 124, 12);
    const start = at + BLOCK;
    if (start + size > buf.length) throw new TarError(`truncated archive: entry at ${at} wants ${size} bytes`);
    const h = at;
    at = start + size + pad(size);
    if ((flag === 'x' || flag === 'L' || flag === 'K') && size > LONG_MAX) throw new TarError(`a ${size}-byte long-name header (more than ${LONG_MAX})`);
    if (flag === 'x') pax = parsePax(buf.subarray(start, start + size));
    else if (flag === 'g') continue; // global PAX header: nothing we use
    else if (flag === 'L') longName = cstr(view, start, size);
    else if (flag === 'K') longLink = cstr(view, start, size);
    else {
      const ustar = buf[h + 257] === 0x75 && buf[h + 258] === 0x73 && buf[h + 259] === 0x74 && buf[h + 260] === 0x61 && buf[h + 261] === 0x72 && buf[h + 262] === 0;
      const prefix = ustar ? cstr(view, h + 345, 155) : '';
      const name = pax?.get('path') ?? longName ?? (prefix ? `${prefix}/${cstr(view, h, 100)}` : cstr(view, h, 100));
      const kind = name.endsWith('/') && TYPE[flag] === 'file' ? 'dir' : TYPE[flag]; // pre-POSIX: a directory is a name ending in '/'
      if (kind) {
        const path = clean(name);
        e.path = path;
        e.kind = kind;
        e.mode = num(buf, h, 100, 8) & 0o7777;
        e.mtime = num(buf, h, 136, 12);
        e.start = start;
        e.end = kind === 'file' ? start + size : start;
        e.target = kind === 'link' || kind === 'hardlink' ? (pax?.get('linkpath') ?? longLink ?? cstr(view, h + 157, 100)) : '';
        if (kind === 'hardlink') e.target = clean(e.target);
        if (kind === 'file' || kind === 'link' || kind === 'hardlink' || (path !== '' && path !== '.')) visit(e);
      }
      pax = null;
      longName = longLink = null;
    }
  }
}

/** Every entry of the archive (see scanTar); file data are views into it. */
export function readTar(input: Uint8Array, maxEntries = Infinity): TarEntry[] {
  // A plain view: a Buffer's subarray builds a Buffer, several times dearer than a Uint8Array's.
  const buf = new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
  const out: TarEntry[] = [];
  scanTar(input, maxEntries, (e) => {
    const { path, kind, mode, mtime } = e;
    if (kind === 'file') out.push({ path, kind, mode, mtime, data: buf.subarray(e.start, e.end) });
    else if (kind === 'link' || kind === 'hardlink') out.push({ path, kind, mode, mtime, target: e.target });
    else out.push({ path, kind, mode, mtime });
  });
  return out;
}
