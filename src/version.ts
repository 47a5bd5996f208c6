// The gdrgate version (a test keeps it equal to package.json's), and what `gdrgate --version` says: gdrgate's
// version and the runtime it runs on, since the package carries its own Node and OpenSSL.
export const VERSION = '0.1.0';

/** `gdrgate 0.1.0 (Node 24.x.y, OpenSSL 3.x.y, V8 …, linux-x64)`: one line, for a human and for a bug report. */
export function versionLine(): string {
  const v = process.versions;
  return `gdrgate ${VERSION} (Node ${v.node}, OpenSSL ${v.openssl ?? 'none'}, V8 ${v.v8}, ${process.platform}-${process.arch})`;
}
