// JSON.stringify(value, null, 2), byte for byte, in pieces: a large report (a fleet of 10,000 nodes is ~30 MB of
// JSON) is written as it is made instead of held whole, with its escaped copy and its UTF-8 copy, at once. Arrays
// longer than BIG have each element stringified on its own; smaller arrays and every object are walked into, so the
// big arrays inside them (a class's points) are cut as well. Pure: the caller writes the pieces.
const BIG = 256;

const indent = (json: string, depth: number): string => (depth === 0 ? json : json.replaceAll('\n', `\n${'  '.repeat(depth)}`));

/** What JSON.stringify leaves out of an object (and writes as null in an array). */
const skipped = (v: unknown): boolean => v === undefined || typeof v === 'function' || typeof v === 'symbol';

const plain = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && (Object.getPrototypeOf(v) === Object.prototype || Object.getPrototypeOf(v) === null) && !('toJSON' in v);

export function* jsonPieces(v: unknown, depth = 0): Generator<string> {
  const pad = '  '.repeat(depth + 1);
  if (Array.isArray(v)) {
    if (v.length === 0) return yield '[]';
    yield '[';
    for (let i = 0; i < v.length; i++) {
      yield `${i ? ',' : ''}\n${pad}`;
      const x: unknown = v[i];
      if (v.length > BIG || !(Array.isArray(x) || plain(x))) yield skipped(x) ? 'null' : indent(JSON.stringify(x, null, 2), depth + 1);
      else yield* jsonPieces(x, depth + 1);
    }
    return yield `\n${'  '.repeat(depth)}]`;
  }
  if (plain(v)) {
    const keys = Object.keys(v).filter((k) => !skipped(v[k]));
    if (keys.length === 0) return yield '{}';
    yield '{';
    for (let i = 0; i < keys.length; i++) {
      yield `${i ? ',' : ''}\n${pad}${JSON.stringify(keys[i])}: `;
      yield* jsonPieces(v[keys[i]!], depth + 1);
    }
    return yield `\n${'  '.repeat(depth)}}`;
  }
  yield indent(JSON.stringify(v, null, 2), depth);
}

/** The pieces joined into pieces of at least `size` characters (fewer writes). */
export function* coalesce(pieces: Iterable<string>, size = 1 << 16): Generator<string> {
  let buf: string[] = [];
  let n = 0;
  for (const p of pieces) {
    buf.push(p);
    n += p.length;
    if (n >= size) {
      yield buf.join('');
      buf = [];
      n = 0;
    }
  }
  if (n) yield buf.join('');
}
