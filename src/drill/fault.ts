// The one fault a drill stages, `<area>[:<subject>]=<value>`: the grammar and its help come from the area records
// (areas/index.ts); each record parses, prints and stages its own faults.
import { AREAS, type Fault } from '../areas/index.js';
import type { Area, FaultSpec } from '../areas/types.js';
import { BDF_RE, type Parsed } from '../parsers/sysfs.js';

export type { Fault } from '../areas/index.js';
export { ACS_BITS, type AcsBit } from '../areas/pcie-acs.js';

/** A record seen through its own fault type only (the registry holds one per family). */
type AnyArea = Area<string, Fault, unknown>;
const records = AREAS as unknown as readonly AnyArea[];
const byId = (id: string): AnyArea | undefined => records.find((a) => a.id === id);

/** The record that stages this fault. */
export function faultSpec(f: Fault): FaultSpec<Fault> {
  return byId(f.kind)!.fault;
}

/** `drill start --fault`'s help: every record's fault syntax, in registry order. */
export function faultHelp(): string {
  return records.map((a) => a.fault.syntax).join(' | ');
}

/** `pcie-link:0000:17:00.0=x8`, `pcie-aer:0000:18:00.0=cor+150`, `memlock=64K`, …: the syntax each record gives. */
export function parseFault(text: string): Parsed<Fault> {
  const eq = text.lastIndexOf('=');
  if (eq < 0) return { ok: false, error: `fault ${JSON.stringify(text)}: want <check>[:<subject>]=<value>` };
  const value = text.slice(eq + 1);
  const colon = text.indexOf(':');
  const id = colon >= 0 && colon < eq ? text.slice(0, colon) : text.slice(0, eq);
  const subject = colon >= 0 && colon < eq ? text.slice(colon + 1, eq) : '';
  const bad = (why: string): Parsed<Fault> => ({ ok: false, error: `fault ${JSON.stringify(text)}: ${why}` });
  const area = byId(id);
  if (!area) return bad(`unknown check ${JSON.stringify(id)}: ${records.map((a) => a.id).join(', ')}`);
  const spec = area.fault;
  if (spec.subject === null && subject) return bad(`${id} takes no subject (${spec.syntax})`);
  if (spec.subject !== null && !BDF_RE.test(subject)) return bad(`subject must be ${spec.subject}`);
  const p = spec.parse(subject, value);
  return p.ok ? p : bad(p.error);
}

export function formatFault(f: Fault): string {
  return faultSpec(f).format(f);
}
