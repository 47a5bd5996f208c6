// Whole files read as they are, for the gate's own shipped files and files an admin names on the command line
// (a schema, a startup blob, a snapshot archive, the agent's pid file): no size cap here, callers check what they need.
import fs, { promises as fsp } from 'node:fs';

export type { Stats } from 'node:fs';

export const readText = (file: string): string => fs.readFileSync(file, 'utf8');
export const readBytes = (file: string): Buffer => fs.readFileSync(file);
export const statAsync = (file: string): Promise<fs.Stats> => fsp.stat(file);
export const readBytesAsync = (file: string): Promise<Buffer> => fsp.readFile(file);

/**
 * A regular file named by the caller (a link followed, as a name typed is), read whole through one descriptor when it
 * holds at most `max` bytes: checked on that descriptor (a file swapped after a check by path, or a FIFO, is never
 * read) and on what came (one that grows, or says 0 bytes and holds more, stops at `max` + 1). Throws why not.
 */
export async function readRegularCapped(file: string, max: number): Promise<Buffer> {
  const fh = await fsp.open(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw new Error(`${file}: not a regular file`);
    if (st.size > max) throw new Error(`${file}: ${st.size} bytes, more than the ${max}-byte cap`);
    const buf = Buffer.allocUnsafe(Math.min(st.size, max) + 1);
    let n = 0;
    for (let r = 1; r > 0 && n < buf.length; n += r) ({ bytesRead: r } = await fh.read(buf, n, buf.length - n, null));
    if (n > st.size || n > max) throw new Error(`${file}: grew past ${Math.min(st.size, max)} bytes while it was read`);
    return buf.subarray(0, n);
  } finally {
    await fh.close();
  }
}

/** The first `max` bytes of `file` (fewer when it is shorter): one open, one read at offset 0, one close. */
export async function readHead(file: string, max: number): Promise<Buffer> {
  const fh = await fsp.open(file, 'r');
  try {
    const { buffer, bytesRead } = await fh.read(Buffer.alloc(max), 0, max, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}
