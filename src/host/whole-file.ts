// Whole files read as they are, for the gate's own shipped files and files an admin names on the command line
// (a schema, a startup blob, a snapshot archive, the agent's pid file): no size cap here, callers check what they need.
import fs, { promises as fsp } from 'node:fs';

export type { Stats } from 'node:fs';

export const readText = (file: string): string => fs.readFileSync(file, 'utf8');
export const readBytes = (file: string): Buffer => fs.readFileSync(file);
export const statAsync = (file: string): Promise<fs.Stats> => fsp.stat(file);
export const readBytesAsync = (file: string): Promise<Buffer> => fsp.readFile(file);

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
