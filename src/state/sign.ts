// The node's state-signing key: Ed25519, root-only private half (signing.key, 0600), public half for jobs
// (signing.pub, 0644). A job's owner can edit files in their own state directory but cannot forge a signature.
import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import { createOnce, lstatOrNull, readSmall, writeAtomic } from '../host/files.js';

export const KEY_FILE = 'signing.key';
export const PUB_FILE = 'signing.pub';
const MAX_KEY_BYTES = 4096;

/**
 * The private key of `stateDir` (owned by this process's euid, created by it), generated on first use. Two
 * Prologs starting at once both generate; link(2) lets exactly one key win and the other adopts it.
 */
export function loadOrCreateKey(stateDir: string): KeyObject {
  const owner = process.geteuid?.() ?? 0;
  const file = `${stateDir}/${KEY_FILE}`;
  let r = readSmall(file, { max: MAX_KEY_BYTES, owner, mode: 'private' });
  if (!r.ok && r.kind === 'missing') {
    const pem = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' });
    createOnce(stateDir, KEY_FILE, pem, 0o600);
    r = readSmall(file, { max: MAX_KEY_BYTES, owner, mode: 'private' });
  }
  if (!r.ok) throw new Error(`signing key: ${r.why}`);
  const key = parsed(r.value);
  if (key.asymmetricKeyType !== 'ed25519') throw new Error(`signing key: ${file} is not an Ed25519 key`);
  publishPublicKey(stateDir, key, owner);
  return key;
}

/**
 * The key object of the PEM text just read: the agent signs a state per Prolog, and parsing the same text again
 * was a fifth of that (createPrivateKey, ~0.2 ms on the live H200). The file is still opened, checked and read
 * every time; only identical text reuses the object made from it.
 */
let last: { readonly pem: Buffer; readonly key: KeyObject } | null = null;
function parsed(pem: Buffer): KeyObject {
  if (!last?.pem.equals(pem)) last = { pem: Buffer.from(pem), key: createPrivateKey(pem) };
  return last.key;
}

function publicPem(key: KeyObject): string {
  return createPublicKey(key).export({ type: 'spki', format: 'pem' }).toString();
}

/**
 * (Re)writes signing.pub when it is missing or older than the key (an admin replaced the key). The common
 * case costs two lstat calls, not a key derivation: this runs in every Prolog.
 */
function publishPublicKey(stateDir: string, key: KeyObject, owner: number): void {
  const pub = lstatOrNull(`${stateDir}/${PUB_FILE}`);
  const priv = lstatOrNull(`${stateDir}/${KEY_FILE}`);
  if (pub?.isFile() && pub.uid === owner && !(pub.mode & 0o022) && priv && pub.mtimeMs >= priv.mtimeMs) return;
  writeAtomic(`${stateDir}/${PUB_FILE}`, publicPem(key), { mode: 0o644 });
}

export function signText(text: string, key: KeyObject): string {
  return sign(null, Buffer.from(text, 'utf8'), key).toString('base64');
}

/** False for a bad signature, a malformed one, or a key that is not Ed25519: never throws. */
export function verifyText(text: string, signature: string, publicKeyPem: Buffer | string): boolean {
  try {
    const pub = createPublicKey(publicKeyPem);
    if (pub.asymmetricKeyType !== 'ed25519' || !/^[A-Za-z0-9+/]+={0,2}$/.test(signature)) return false;
    return verify(null, Buffer.from(text, 'utf8'), pub, Buffer.from(signature, 'base64'));
  } catch {
    return false;
  }
}
