// A memo for pure parses whose memory no input can grow: past `max` keys it starts again, so a hostile or noisy
// tree costs a parse per file, as without it, and never memory. Shared by the AER counter files and config spaces.
export class BoundedMemo<K, V> {
  private readonly m = new Map<K, V>();
  constructor(private readonly max: number) {}

  /** The value kept for `k`, or `make()`'s, kept. */
  get(k: K, make: () => V): V {
    let v = this.m.get(k);
    if (v === undefined) {
      if (this.m.size >= this.max) this.m.clear();
      this.m.set(k, (v = make()));
    }
    return v;
  }
}
