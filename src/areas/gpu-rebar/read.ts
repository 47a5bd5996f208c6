// Each GPU's resizable BARs: one listing of the device directory (most GPUs show no resize file at all), then one read
// per `resourceN_resize` there. Absent: the GPU shows none (no Resizable BAR capability, or a kernel without the
// attribute); unknown: the listing or a file could not be read or parsed, never "not resizable".
import type { Host } from '../../host/host.js';
import { factParsed, readWhy } from '../../inventory/read.js';
import { ABSENT, type Fact, present, unknown } from '../../model/fact.js';
import type { Bdf } from '../../model/inventory.js';
import type { AreaInput } from '../types.js';
import { parseResizeMask, RESIZE_RE, type RebarBar } from './parse.js';

/** GPU address → its resizable BARs. */
export type RebarFacts = Readonly<Record<Bdf, Fact<readonly RebarBar[]>>>;

async function readOne(host: Host, dir: string, input: AreaInput): Promise<Fact<readonly RebarBar[]>> {
  const ls = await host.list(dir);
  if (!ls.ok) return ls.missing ? ABSENT : unknown(readWhy(dir, ls.reason));
  const bars = ls.value.flatMap((n) => {
    const m = RESIZE_RE.exec(n);
    return m ? [Number(m[1])] : [];
  });
  if (!bars.length) return ABSENT;
  const read = await Promise.all(bars.sort((x, y) => x - y).map((bar) => factParsed(host, `${dir}/resource${bar}_resize`, parseResizeMask, input.notes, 'absent')));
  const out: RebarBar[] = [];
  for (const [i, f] of read.entries()) {
    if (f.state === 'unknown') return f;
    if (f.state === 'present') out.push({ bar: bars[i]!, sizes: f.value });
  }
  return out.length ? present(out) : ABSENT;
}

export async function readRebar(host: Host, input: AreaInput): Promise<RebarFacts> {
  const gpus = input.gpus.filter((b) => input.pci.has(b));
  const facts = await Promise.all(gpus.map((b) => readOne(host, input.pci.get(b)!.sysPath, input)));
  return Object.fromEntries(gpus.map((b, i) => [b, facts[i]!]));
}
