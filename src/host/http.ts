// The one HTTP client: GET with Node's own fetch, one deadline for connect, headers and body (AbortSignal), no
// redirects followed, and a cap on the body read as it streams (an endless or huge answer is cut, not buffered).

export interface HttpGetOptions {
  readonly timeoutMs: number;
  readonly maxBytes: number;
  readonly accept?: string;
}

export interface HttpAnswer {
  readonly status: number;
  readonly contentType: string;
  readonly body: string;
}

/** The request could not be made or its answer not read in full (refused, timed out, too big, redirected). */
export class HttpError extends Error {
  override readonly name = 'HttpError';
}

/** `url` without user:password, for messages and reports. */
export function redact(url: URL): string {
  const u = new URL(url.href);
  u.username = '';
  u.password = '';
  return u.href;
}

export async function httpGet(url: URL, o: HttpGetOptions): Promise<HttpAnswer> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new HttpError(`${redact(url)}: only http and https URLs`);
  const signal = AbortSignal.timeout(o.timeoutMs);
  const why = (e: unknown): string => (signal.aborted ? `no complete answer within ${o.timeoutMs} ms` : ((e as Error).cause as Error | undefined)?.message ?? (e as Error).message);
  // fetch refuses a URL with user:password in it: they travel as HTTP Basic authentication (RFC 7617) instead.
  const headers: Record<string, string> = { accept: o.accept ?? '*/*' };
  if (url.username || url.password) headers.authorization = `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`;
  let res: Response;
  try {
    res = await fetch(redact(url), { signal, redirect: 'manual', headers });
  } catch (e) {
    throw new HttpError(`GET ${redact(url)}: ${why(e)}`, { cause: e });
  }
  if (res.status >= 300 && res.status < 400) {
    await res.body?.cancel().catch(() => undefined);
    throw new HttpError(`GET ${redact(url)}: redirected (${res.status}) to ${res.headers.get('location') ?? '?'}: give that URL instead`);
  }
  const declared = Number(res.headers.get('content-length') ?? NaN);
  if (declared > o.maxBytes) {
    await res.body?.cancel().catch(() => undefined);
    throw new HttpError(`GET ${redact(url)}: answer of ${declared} bytes (at most ${o.maxBytes})`);
  }
  const chunks: Uint8Array[] = [];
  let n = 0;
  try {
    if (res.body) {
      const reader = res.body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        n += value.byteLength;
        if (n > o.maxBytes) {
          await reader.cancel().catch(() => undefined);
          throw new HttpError(`GET ${redact(url)}: answer longer than ${o.maxBytes} bytes`);
        }
        chunks.push(value);
      }
    }
  } catch (e) {
    if (e instanceof HttpError) throw e;
    throw new HttpError(`GET ${redact(url)}: reading the answer: ${why(e)}`, { cause: e });
  }
  const body = new TextDecoder('utf-8', { fatal: false }).decode(Buffer.concat(chunks));
  return { status: res.status, contentType: res.headers.get('content-type') ?? '', body };
}
