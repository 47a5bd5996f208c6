// An area is one fact family as one record (node_exporter's self-registering collectors, ATTW's defineCheck): how it is
// read from a Host, how two nodes compare on it, which faults a drill can stage on it and how, and its help text.
// The registry (index.ts) lists them; the inventory's `areas`, compare, the fleet's majority, the drill grammar and
// `drill start --help` derive from that list.
import type { Difference } from '../compare/types.js';
import type { CompareView } from '../compare/view.js';
import type { Host } from '../host/host.js';
import type { Notes } from '../inventory/read.js';
import type { BaselineDevice } from '../model/baseline.js';
import type { Bdf, Inventory, PciDevice } from '../model/inventory.js';
import type { Parsed } from '../parsers/sysfs.js';

/** What the shared inventory pass already knows when an area reads its own files. */
export interface AreaInput {
  /** The GPUs' PCI addresses, in order. */
  readonly gpus: readonly Bdf[];
  /** GPUs, RDMA adapters and the bridges on their paths. */
  readonly pci: ReadonlyMap<Bdf, PciDevice>;
  readonly notes: Notes;
}

/**
 * How a drill answers reads while its fault is staged; every hook sees one kernel path and is asked only for its own
 * fault. Reads no hook answers pass through unchanged (drill/overlay.ts).
 */
export interface Staging<F> {
  /** The bytes of a file as the fault shows them (config space patched, a counter raised, a size cut). */
  rewrite?(f: F, path: string, bytes: Uint8Array): Uint8Array;
  /** A file or directory the fault hides (read as absent). */
  hides?(f: F, path: string): boolean;
  /** The text of a file the fault adds, or null when `path` is not one. */
  adds?(f: F, path: string): string | null;
  /** Entries the fault adds to the listing of `dir`. */
  lists?(f: F, dir: string): readonly string[];
}

export interface FaultSpec<F> {
  /** The fault as written on the command line (`pcie-link:<bdf>=x8`): `drill start --help` lists these. */
  readonly syntax: string;
  /** What the subject after `<id>:` must be (`a GPU PCI address (0000:18:00.0)`); null: the fault takes none. */
  readonly subject: string | null;
  /** The value after `=` (the subject already checked to be a PCI address when there is one); the error says why not. */
  parse(subject: string, value: string): Parsed<F>;
  /** The fault as text again: parse(format(f)) gives f back. */
  format(f: F): string;
  readonly stage: Staging<F>;
}

export interface Area<Id extends string = string, F extends { readonly kind: Id } = { readonly kind: Id }, T = unknown> {
  /** The family's id: the check's id where a check judges it (`pcie-link`), the fault's `<id>` in a drill. */
  readonly id: Id;
  /** One line: what the family is and where it is read from (help text). */
  readonly title: string;
  /**
   * Where compare sorts this family's differences when it brings its own dimension (their `area` is then the record's
   * id): after this base area (compare/types.ts BASE_AREAS). Families compared under a base area need none.
   */
  readonly sortAfter?: string;
  /** Reads the family into `inv.areas[id]`; none: read by the shared inventory pass (config space, links, limits). */
  readonly read?: (host: Host, node: AreaInput) => Promise<T>;
  /**
   * What compare needs of the family from one node, as JSON values (in `CompareView.areas[id]`): a node's summary
   * carries it, so the fleet compares without the snapshot. None: the family's part is among the view's shared fields.
   */
  readonly view?: (inv: Inventory) => unknown;
  /** Suspect (a) against reference (b), each as its compare view: every difference on this family. */
  compare(a: CompareView, b: CompareView): Difference[];
  /** What `baseline capture` keeps of the family in a device's record (baseline/capture.ts); none: nothing there. */
  readonly captureDevice?: (inv: Inventory, d: PciDevice, role: BaselineDevice['role']) => Partial<BaselineDevice>;
  readonly fault: FaultSpec<F>;
}

export function defineArea<const Id extends string, F extends { readonly kind: Id }, T = never>(a: Area<Id, F, T>): Area<Id, F, T> {
  return a;
}

/** The faults of one area record, and what its `read` gives. */
export type FaultOf<A> = A extends Area<string, infer F, unknown> ? F : never;
export type FactsOf<A> = A extends Area<string, { readonly kind: string }, infer T> ? T : never;
