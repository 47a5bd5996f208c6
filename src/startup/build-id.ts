// The program's build id: `npm run build` writes the sha256 of dist/gdrgate.cjs's code as the file's first line, so a
// startup snapshot tells its own program from every other build with one small read at each start, where hashing the
// whole program cost 2-3 ms (1.5 MB) on every Prolog the blob answers. Two builds whose files have one size and one
// modification time (dpkg-deb and rpmbuild clamp every mtime to SOURCE_DATE_EPOCH) still differ here.
import { createHash } from 'node:crypto';
import { closeFd, fstatFd, openFd, O_RDONLY, readFd } from '../host/fd.js';
import { readBytes } from '../host/whole-file.js';

const LINE = /^\/\/ gdrgate-build sha256:([0-9a-f]{64})\n/;
/** The line's length: `// gdrgate-build sha256:` and 64 hex digits and a newline. */
const LINE_LENGTH = 24 + 64 + 1;

/** `code` with its build line (re)made: the sha256 of the rest. */
export function stampBuildId(code: string): string {
  const body = code.replace(LINE, '');
  return `// gdrgate-build sha256:${createHash('sha256').update(body, 'utf8').digest('hex')}\n${body}`;
}

/**
 * The program as it is now: its build id and its size (an edit by hand that keeps the line changes the size), read
 * with one open, one fstat and one pread; a program without the line (not made by `npm run build`), the sha256 of
 * all its bytes.
 */
export function programIdentity(file: string): string {
  try {
    const fd = openFd(file, O_RDONLY);
    try {
      const size = fstatFd(fd).size;
      const head = Buffer.alloc(LINE_LENGTH);
      const m = LINE.exec(head.subarray(0, readFd(fd, head, 0, LINE_LENGTH, 0)).toString('latin1'));
      if (m) return `build ${m[1]!}, ${size} bytes`;
    } finally {
      closeFd(fd);
    }
    return `sha256 ${createHash('sha256').update(readBytes(file)).digest('hex')}`;
  } catch (e) {
    return `unreadable: ${(e as Error).message}`;
  }
}
