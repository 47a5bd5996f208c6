// Counts the array elements a function visits (iteration, spread, and the element-walking Array methods), so a test
// can compare how the work grows with the input without timing it: a copy of a list per element shows as quadratic.
type Fn = (...args: unknown[]) => unknown;

const WALKERS = ['some', 'every', 'find', 'findIndex', 'includes', 'indexOf', 'filter', 'map', 'forEach', 'reduce', 'slice', 'concat', 'flatMap', 'join'] as const;

export async function countVisits<T>(run: () => T | Promise<T>): Promise<{ visits: number; value: T }> {
  const proto = Array.prototype as unknown as Record<string | symbol, Fn>;
  const saved = new Map<string | symbol, Fn>();
  let visits = 0;
  const iter = proto[Symbol.iterator]!;
  saved.set(Symbol.iterator, iter);
  proto[Symbol.iterator] = function (this: unknown[]) {
    const it = iter.call(this) as Iterator<unknown>;
    return {
      next: () => {
        visits++;
        return it.next();
      },
      [Symbol.iterator]() {
        return this;
      },
    };
  } as Fn;
  for (const name of WALKERS) {
    const f = proto[name]!;
    saved.set(name, f);
    proto[name] = function (this: unknown[], ...args: unknown[]) {
      visits += this.length;
      return f.apply(this, args);
    };
  }
  try {
    const value = await run();
    return { visits, value };
  } finally {
    for (const [k, f] of saved) proto[k] = f;
  }
}

/** How much more work 4x the input took, against what N log N allows (ratio 4 * log(4n) / log(n)). */
export function nLogNBound(n: number): number {
  return (4 * Math.log(4 * n)) / Math.log(n);
}
