// compare A B: payload sizes and ASPM of the GPU↔NIC path devices and the kernel's policies, suspect against reference.
import { type Fact, nul } from '../model/fact.js';
import type { Inventory, LinkAspm } from '../model/inventory.js';
import { devicePayload, linkAspmText, policyText } from '../model/payload.js';
import { diff, type Difference } from './types.js';

const policies = (inv: Inventory): string | null => {
  const { cmdline, aspmPolicy } = inv.payload;
  if (cmdline.state !== 'present' || aspmPolicy.state === 'unknown') return null;
  return policyText(cmdline.value.busPolicy ?? 'default', cmdline.value.aspm ?? 'default', nul(aspmPolicy)?.active ?? null);
};
const link = (l: Fact<LinkAspm> | undefined): string => (l?.state === 'unknown' ? 'unknown' : linkAspmText(nul(l ?? { state: 'absent' }) ?? {}));

export function payload(a: Inventory, b: Inventory): Difference[] {
  const out: Difference[] = [];
  const [pa, pb] = [policies(a), policies(b)];
  if (pa !== pb) out.push(pa && pb ? diff('major', 'payload', 'node', pa, pb, 'payload-policy-changed') : diff('minor', 'payload', 'node', pa ?? 'not readable', pb ?? 'not readable', 'unknown-side'));
  for (const bdf of a.pci.keys()) {
    if (!b.pci.has(bdf)) continue;
    const [x, y] = [devicePayload(a, bdf), devicePayload(b, bdf)];
    if (x.state !== 'present' || y.state !== 'present') {
      if (x.state !== y.state) out.push(diff('minor', 'payload', bdf, x.state === 'present' ? `MaxPayload ${x.value.mps} bytes` : 'not readable', y.state === 'present' ? `MaxPayload ${y.value.mps} bytes` : 'not readable', 'unknown-side'));
      continue;
    }
    // The suspect's MPS above its parent's is the one spec violation: worst first, whatever the reference had.
    const parent = nul(devicePayload(a, a.pci.get(bdf)!.bridges.at(-1) ?? ''));
    if (parent && x.value.mps > parent.mps) out.push(diff('critical', 'payload', bdf, `MaxPayload ${x.value.mps} bytes above its port's ${parent.mps}`, `MaxPayload ${y.value.mps} bytes`, 'payload-mps-over'));
    else if (x.value.mps !== y.value.mps || x.value.mrrs !== y.value.mrrs)
      out.push(diff('major', 'payload', bdf, `MaxPayload ${x.value.mps} bytes, MaxReadReq ${x.value.mrrs} bytes`, `MaxPayload ${y.value.mps} bytes, MaxReadReq ${y.value.mrrs} bytes`, 'payload-changed'));
    const [la, lb] = [`ASPM ${x.value.aspm}; link ${link(a.payload.linkAspm.get(bdf))}`, `ASPM ${y.value.aspm}; link ${link(b.payload.linkAspm.get(bdf))}`];
    if (la !== lb) out.push(diff('minor', 'payload', bdf, la, lb, 'payload-changed'));
  }
  return out;
}
