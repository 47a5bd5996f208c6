// The message a call throws, for exact asserts on refusals.

/** The message of what `f` throws, or null: none. */
export function thrown(f: () => void): string | null {
  try {
    f();
    return null;
  } catch (e) {
    return (e as Error).message;
  }
}
