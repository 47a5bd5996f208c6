// Why a file could not be used, said once: the gate's refusals (host/files.ts UnsafeFileError: "<file> is a symbolic
// link", "<file> is not a regular file") already begin with the file, and one that names another path (a directory
// above it) or any other error is said after the file's name.
export function fileWhy(file: string, e: unknown): string {
  const m = e instanceof Error ? e.message : String(e);
  return m.startsWith(`${file} `) ? m : `${file}: ${m}`;
}
