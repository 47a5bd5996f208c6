// Reads a JSON file the gate is configured with: size-capped, empty and malformed named as such.
import { promises as fsp } from 'node:fs';
import { ConfigError } from '../errors.js';

export const MAX_FILE_BYTES = 16 * 1024 * 1024;

export async function readJsonFile(file: string, what: string): Promise<unknown> {
  let text: string;
  try {
    const st = await fsp.stat(file);
    if (!st.isFile()) throw new ConfigError(`${file}: ${what} is not a regular file`);
    if (st.size > MAX_FILE_BYTES) throw new ConfigError(`${file}: ${what} is ${st.size} bytes, more than ${MAX_FILE_BYTES}`);
    text = await fsp.readFile(file, 'utf8');
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

