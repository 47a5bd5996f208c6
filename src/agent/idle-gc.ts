// The agent's young generation emptied whenever it has nothing left to do. A Prolog's judgement allocates a few MiB
// before its answer; where the young generation is empty when the request comes and large enough to hold that, no
// scavenge (a pause of ~1 ms, more on a loaded node) falls between request and answer. V8 exposes gc() only to a Node
// started with --expose-gc (the package's unit starts the agent so, with --max-semi-space-size=16); without it this
// does nothing and the agent answers as before.
export type MinorGc = (o: { readonly type: 'minor' }) => void;

export interface IdleGc {
  /** A request (a Prolog's, a TaskProlog's) taken up. */
  began(): void;
  /** It is done, after its answer and what follows it; the last one done schedules the collection. */
  ended(): void;
}

export function idleGc(gc: MinorGc | undefined = (globalThis as { gc?: MinorGc }).gc): IdleGc {
  let working = 0;
  let scheduled = false;
  return {
    began: () => void working++,
    ended: () => {
      if (--working > 0 || gc === undefined || scheduled) return;
      scheduled = true;
      // After the I/O already due (a request that came meanwhile is taken up first, and the collection waits).
      setImmediate(() => {
        scheduled = false;
        if (working === 0) gc({ type: 'minor' });
      });
    },
  };
}
