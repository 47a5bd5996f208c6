// A local HTTP server for one test, on a free port of 127.0.0.1, closed (its connections too) when the test ends.
import type { Test } from 'tap';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Serves `handler` for the test `t`; returns its base URL. */
export async function serve(t: Test, handler: Parameters<typeof createServer>[1]): Promise<string> {
  const srv: Server = createServer(handler);
  await new Promise<void>((res) => srv.listen(0, '127.0.0.1', res));
  t.teardown(() => new Promise<void>((res) => { srv.closeAllConnections(); srv.close(() => res()); }));
  return `http://127.0.0.1:${(srv.address() as AddressInfo).port}`;
}
