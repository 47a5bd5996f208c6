// A string as an anchored RegExp, for a leaf of a t.match pattern: tap compares a string pattern as a substring.
export function exactly(s: string): RegExp {
  return new RegExp(`^${s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}$`);
}
