// A figure source that could not be read (Prometheus): `detail` is why, without the source's name, which the fleet
// report already puts before it; the message has both, for a caller that prints the error alone.
export class SourceError extends Error {
  constructor(readonly source: string, readonly detail: string, options?: ErrorOptions) {
    super(`${source}: ${detail}`, options);
  }
}
