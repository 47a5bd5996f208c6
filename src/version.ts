// The gdrgate version (a test keeps it equal to package.json's), and what `gdrgate --version` says: gdrgate's
// version and the runtime it runs on, since the package carries its own Node and OpenSSL.
export const VERSION = '0.1.0';

/** `gdrgate 0.1.0 (Node 24.x.y, OpenSSL 3.x.y, V8 …, linux-x64)`: one line, for a human and for a bug report. */
export function versionLine(): string {
  const v = process.versions;
  return `gdrgate ${VERSION} (Node ${v.node}, OpenSSL ${v.openssl ?? 'none'}, V8 ${v.v8}, ${process.platform}-${process.arch})`;
}

/** The oldest Node gdrgate runs on (package.json's `engines`, held equal by a test): it uses Node 24's language and library. */
export const NODE_MIN = '24.11.0';

/** Why Node `version` cannot run gdrgate (older than NODE_MIN), or null. A version that cannot be read is let run. */
export function nodeTooOld(version: string = process.versions.node): string | null {
  const want = NODE_MIN.split('.').map(Number);
  const m = /^(\d+)\.(\d+)\.(\d+)/.exec(version);
  if (!m) return null;
  const have = [Number(m[1]), Number(m[2]), Number(m[3])];
  for (let i = 0; i < 3; i++) if (have[i] !== want[i]) return have[i]! < want[i]! ? `gdrgate needs Node ${NODE_MIN} or later; this is Node ${version}` : null;
  return null;
}
