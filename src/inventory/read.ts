// Small helpers that turn Host reads into facts: missing → absent, unreadable or malformed → unknown plus a note.
import { type Host, type ReadResult, readTrusted } from '../host/host.js';
import { ABSENT, type Fact, present, unknown } from '../model/fact.js';
import type { Parsed } from '../parsers/sysfs.js';

/**
 * One per run: gives the event loop a turn (setImmediate) once `everyMs` of synchronous reads have passed since
 * the last, so a timer (the run's deadline) can fire during a long inventory without a turn per device. With a
 * deadline, every turn asks it first: once it has passed the read throws (DeadlineError), so work abandoned by
 * the deadline's race stops at its next read instead of running on to the end of a large tree.
 */
export class Pacer {
  private last = performance.now();
  constructor(
    private readonly everyMs = 10,
    private readonly deadline?: { check(where: string): void },
  ) {}

  async turn(): Promise<void> {
    this.deadline?.check('while reading the node');
    if (performance.now() - this.last < this.everyMs) return;
    await new Promise<void>((r) => setImmediate(r));
    this.last = performance.now();
    this.deadline?.check('while reading the node');
  }
}

export class Notes {
  readonly list: string[] = [];
  add(path: string, why: string): void {
    this.list.push(`${path}: ${why}`);
  }
}

/** The last part of a link's target (`iommu_group` → `17`): missing is absent, unreadable unknown. */
export async function factLinkBase(host: Host, path: string): Promise<Fact<string>> {
  const r = await host.readLink(path);
  if (r.ok) return present(r.value.split('/').pop() ?? '');
  return r.missing ? ABSENT : unknown(readWhy(path, r.reason));
}

/** A listing as a fact: missing is absent, any other failure unknown (with why). */
export async function listFact(host: Host, kpath: string): Promise<Fact<string[]>> {
  const r = await host.list(kpath);
  if (!r.ok) return r.missing ? ABSENT : unknown(`${kpath}: ${r.reason}`);
  return present(r.value);
}

/**
 * A listing whose entries are the node's devices (every PCI function, RDMA adapter, NUMA node, module, IOMMU unit and
 * group): missing is none; any other failure (EACCES, EIO, a loop, a file where the directory should be) is a note
 * under the path (the runner then judges nothing: inventory/pci-known.ts), and no entries, never a list of none.
 */
export async function listWhole(host: Host, path: string, notes: Notes): Promise<string[]> {
  const r = await listFact(host, path);
  if (r.state === 'unknown') notes.add(path, r.why.slice(path.length + 2));
  return r.state === 'present' ? r.value : [];
}

/**
 * Why a read failed, naming the file once: a Host's reason usually quotes the path already (the error message of
 * node:fs), and wrapping it again would say it twice. Every wrap of a Host reason in the inventory goes through here.
 */
export function readWhy(path: string, reason: string): string {
  return reason.includes(path) ? reason : `${path}: ${reason}`;
}

/**
 * An attribute as a fact: missing is absent; unreadable is unknown (and a note); the text is trimmed. `trusted`: a
 * file someone other than root could change is unknown too (readTrusted).
 */
export async function factText(host: Host, path: string, notes: Notes, trusted = false): Promise<Fact<string>> {
  const r = await (trusted ? readTrusted(host, path, () => host.readText(path)) : host.readText(path));
  if (r.ok) return present(r.value.trim());
  if (r.missing) return ABSENT;
  notes.add(path, r.reason);
  return unknown(readWhy(path, r.reason));
}

/**
 * A parsed attribute as a fact. Malformed text is unknown with the parser's error (and a note), never a default;
 * a value the kernel writes for "none" (`nullMeans` 'absent', e.g. numa_node -1) is absent, for "cannot say"
 * (a reason, e.g. link speed "Unknown") unknown.
 */
export async function factParsed<T>(host: Host, path: string, parse: (s: string) => Parsed<T | null>, notes: Notes, nullMeans: 'absent' | string): Promise<Fact<T>> {
  const t = await factText(host, path, notes);
  if (t.state !== 'present') return t;
  const p = parse(t.value);
  if (!p.ok) {
    notes.add(path, p.error);
    return unknown(`${path}: ${p.error}`);
  }
  if (p.value !== null) return present(p.value);
  return nullMeans === 'absent' ? ABSENT : unknown(`${path}: ${nullMeans}`);
}
