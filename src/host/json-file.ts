// Reads a JSON file the gate is configured with: size-capped, empty and malformed named as such.
// Synchronous (a local file of a few KiB; an async read would start libuv's thread pool for it), opened
// O_NONBLOCK and checked on the open descriptor, so a FIFO put there can neither block nor be read.
import fs from 'node:fs';
import { ConfigError } from '../errors.js';

export const MAX_FILE_BYTES = 16 * 1024 * 1024;

function readRegular(file: string, what: string): string {
  const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw new ConfigError(`${file}: ${what} is not a regular file`);
    if (st.size > MAX_FILE_BYTES) throw new ConfigError(`${file}: ${what} is ${st.size} bytes, more than ${MAX_FILE_BYTES}`);
    return fs.readFileSync(fd, 'utf8');
  } finally {
    fs.closeSync(fd);
  }
}

export async function readJsonFile(file: string, what: string): Promise<unknown> {
  let text: string;
  try {
    text = readRegular(file, what);
  } catch (e) {
    if (e instanceof ConfigError) throw e;
    throw new ConfigError(`${file}: cannot read ${what}: ${(e as Error).message}`, { cause: e });
  }
  if (text.trim() === '') throw new ConfigError(`${file}: ${what} is empty`);
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw new ConfigError(`${file}: ${what} is not valid JSON: ${(e as Error).message}`, { cause: e });
  }
}
