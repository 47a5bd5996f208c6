// A string as an anchored RegExp, for a leaf of a t.match pattern: tap compares a string pattern as a substring.
export function exactly(s: string): RegExp {
  return new RegExp(`^${literal(s)}$`);
}

/** A string as RegExp source that matches it literally, for the fixed parts of a pattern with a variable part. */
export function literal(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}
