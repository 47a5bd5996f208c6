// compare A B: payload sizes and ASPM of the GPU↔NIC path devices and the kernel's policies, suspect against reference.
import { type Fact, nul } from '../model/fact.js';
import type { Inventory, LinkAspm } from '../model/inventory.js';
import { devicePayload, linkAspmText, policyText } from '../model/payload.js';
import { diff, type Difference } from './types.js';
import { devicesOf } from './by-bdf.js';
import type { CompareView } from './view.js';

/** One device's sizes and ASPM as read, with its port's MaxPayload (null when unread); or why not readable. */
export type PayloadView =
  | { readonly state: 'present'; readonly mps: number; readonly mrrs: number; readonly aspm: string; readonly parentMps: number | null }
  | { readonly state: 'absent' | 'unknown' };

export const policies = (inv: Inventory): string | null => {
  const { cmdline, aspmPolicy } = inv.payload;
  if (cmdline.state !== 'present' || aspmPolicy.state === 'unknown') return null;
  return policyText(cmdline.value.busPolicy ?? 'default', cmdline.value.aspm ?? 'default', nul(aspmPolicy)?.active ?? null);
};
export const linkOf = (l: Fact<LinkAspm> | undefined): string => (l?.state === 'unknown' ? 'unknown' : linkAspmText(nul(l ?? { state: 'absent' }) ?? {}));

export function payloadOf(inv: Inventory, bdf: string): PayloadView {
  const x = devicePayload(inv, bdf);
  if (x.state !== 'present') return { state: x.state };
  const parent = nul(devicePayload(inv, inv.pci.get(bdf)?.bridges.at(-1) ?? ''));
  return { state: 'present', mps: x.value.mps, mrrs: x.value.mrrs, aspm: x.value.aspm, parentMps: parent ? parent.mps : null };
}

export function payload(a: CompareView, b: CompareView): Difference[] {
  const out: Difference[] = [];
  const [pa, pb] = [a.payloadPolicy, b.payloadPolicy];
  if (pa !== pb) out.push(pa && pb ? diff('major', 'payload', 'node', pa, pb, 'payload-policy-changed') : diff('minor', 'payload', 'node', pa ?? 'not readable', pb ?? 'not readable', 'unknown-side'));
  const db = devicesOf(b);
  for (const dx of a.pci) {
    const dy = db.get(dx.bdf);
    if (!dy) continue;
    const [x, y] = [dx.payload, dy.payload];
    // Each side's sizes in one wording whichever way they differ: the fleet counts a node that does not differ as
    // holding the reference's text (fleet/facts.ts), so a shorter one here would be a second value of one state.
    const sizes = (p: typeof x, over = ''): string => (p.state === 'present' ? `MaxPayload ${p.mps} bytes${over}, MaxReadReq ${p.mrrs} bytes` : 'not readable');
    if (x.state !== 'present' || y.state !== 'present') {
      if (x.state !== y.state) out.push(diff('minor', 'payload', dx.bdf, sizes(x), sizes(y), 'unknown-side'));
      continue;
    }
    // The suspect's MPS above its parent's is the one spec violation: worst first, whatever else the reference had;
    // a reference with the very same sizes under the same port size has no difference to tell (nodes alike never
    // differ: the fleet would flag the node it took as the reference against its twins).
    const same = x.mps === y.mps && x.mrrs === y.mrrs && x.parentMps === y.parentMps;
    if (!same && x.parentMps !== null && x.mps > x.parentMps) out.push(diff('critical', 'payload', dx.bdf, sizes(x, ` above its port's ${x.parentMps}`), sizes(y), 'payload-mps-over'));
    else if (x.mps !== y.mps || x.mrrs !== y.mrrs) out.push(diff('major', 'payload', dx.bdf, sizes(x), sizes(y), 'payload-changed'));
    const [la, lb] = [`ASPM ${x.aspm}; link ${dx.linkAspm}`, `ASPM ${y.aspm}; link ${dy.linkAspm}`];
    if (la !== lb) out.push(diff('minor', 'payload', dx.bdf, la, lb, 'payload-changed'));
  }
  return out;
}
