// The startup snapshot's seal: `gdrgate startup-snapshot` appends a fixed-length line naming the blob's own size
// (Node reads a blob's sections from their start and leaves what follows them alone), and the blob's main checks it
// before anything runs: a blob cut short (damage in place: the write itself is atomic and synced) has lost its seal
// or its size, while V8 may still deserialize it from memory past the file's end and run a gate nobody made. A blob
// built by hand with `node --build-snapshot` has none, and is refused the same way.
import { closeFd, fstatFd, openFd, O_RDONLY, readFd } from '../host/fd.js';

/** The seal's length: the line `gdrgate-blob <size>`, blanks to fill, a newline. */
export const SEAL_LENGTH = 48;
const TAG = 'gdrgate-blob ';

/** The seal for a blob of `size` bytes (without the seal). */
export function seal(size: number): Buffer {
  if (!Number.isSafeInteger(size) || size < 0 || size >= 1e15) throw new Error(`a blob of ${size} bytes cannot be sealed`);
  const line = `${TAG}${size}`;
  return Buffer.from(line.padEnd(SEAL_LENGTH - 1, ' ') + '\n', 'latin1');
}

/** Why a file of `total` bytes ending in `tail` (its last SEAL_LENGTH bytes) is not a sealed blob; null: it is. */
export function sealProblem(total: number, tail: Uint8Array): string | null {
  const text = Buffer.from(tail).toString('latin1');
  const m = /^gdrgate-blob (\d{1,15}) *\n$/.exec(text);
  if (tail.length !== SEAL_LENGTH || m === null) return 'it has no seal (cut short, or not made by gdrgate startup-snapshot)';
  const made = Number(m[1]);
  return made + SEAL_LENGTH === total ? null : `it is ${total - SEAL_LENGTH} bytes, sealed as ${made} (cut short or damaged)`;
}

/** The blob this process started from (`--snapshot-blob FILE` or `=FILE` in Node's own arguments); null: none. */
export function blobOf(execArgv: readonly string[]): string | null {
  for (const [i, a] of execArgv.entries()) {
    if (a === '--snapshot-blob') return execArgv[i + 1] ?? null;
    if (a.startsWith('--snapshot-blob=')) return a.slice('--snapshot-blob='.length);
  }
  return null;
}

/** sealProblem of `file` as it is now: one open, one fstat, one pread of its last SEAL_LENGTH bytes. */
export function fileSealProblem(file: string): string | null {
  let fd: number;
  try {
    fd = openFd(file, O_RDONLY);
  } catch (e) {
    return `it cannot be opened: ${(e as Error).message}`;
  }
  try {
    const size = fstatFd(fd).size;
    const tail = Buffer.alloc(Math.min(SEAL_LENGTH, size));
    const got = readFd(fd, tail, 0, tail.length, size - tail.length);
    return sealProblem(size, tail.subarray(0, got));
  } catch (e) {
    return `it cannot be read: ${(e as Error).message}`;
  } finally {
    closeFd(fd);
  }
}
