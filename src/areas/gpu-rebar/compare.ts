// compare A B: the sizes each GPU's resizable BARs can take, suspect against reference, by address. The size a BAR has
// now is gpu-bar1's (the GPUDirect window): not compared again here.
import { type Difference, type Impact, response } from '../../compare/types.js';
import { type Fact, factText } from '../../model/fact.js';
import type { Inventory } from '../../model/inventory.js';
import type { CompareView } from '../../compare/view.js';
import { sizeText } from '../../parsers/pci-resource.js';
import { type RebarBar, sizeBytes } from './parse.js';

const SMALLER =
  'The GPU offers smaller BAR sizes than on the reference node: its Resizable BAR setting (VBIOS, or the BIOS\'s "Resizable BAR" and "Above 4G decoding") differs. Set it as on the reference and reboot; until then the GPUDirect window (gpu-bar1) cannot reach the reference\'s size.';
const OTHER = 'The sizes offered differ from the reference\'s, the largest no smaller: confirm the firmware change is intended and recapture the reference if so.';

const largest = (bars: readonly RebarBar[]): number => Math.max(-1, ...bars.flatMap((b) => b.sizes));

const text = (f: Fact<readonly RebarBar[]>): string =>
  factText(f, (bars) => bars.map((b) => `BAR${b.bar} ${b.sizes.length ? `${sizeText(sizeBytes(b.sizes[0]!))}–${sizeText(sizeBytes(b.sizes[b.sizes.length - 1]!))}` : 'no size'}`).join('; '));

/** One GPU's sizes as compare reads them (JSON, so a node's summary carries it). */
interface RebarView {
  readonly text: string;
  readonly unknown: boolean;
  /** The largest size offered (log2 MiB), -1 when none or not read. */
  readonly largest: number;
}
type RebarViews = Readonly<Record<string, RebarView>>;

/** Each GPU's sizes, by address. */
export function viewRebar(inv: Inventory): RebarViews {
  const f = inv.areas['gpu-rebar'];
  const out: Record<string, RebarView> = {};
  for (const g of inv.gpus) {
    const x = f[g.bdf];
    if (x) out[g.bdf] = { text: text(x), unknown: x.state === 'unknown', largest: x.state === 'present' ? largest(x.value) : -1 };
  }
  return out;
}

export function compareRebar(a: CompareView, b: CompareView): Difference[] {
  const out: Difference[] = [];
  const [fa, fb] = [(a.areas['gpu-rebar'] ?? {}) as RebarViews, (b.areas['gpu-rebar'] ?? {}) as RebarViews];
  for (const g of b.gpus) {
    const [x, y] = [fa[g.bdf], fb[g.bdf]];
    if (!x || !y || x.text === y.text) continue;
    const d = (impact: Impact, why: string): Difference => ({ impact, area: 'gpu-rebar', subject: g.bdf, a: x.text, b: y.text, response: why });
    if (x.unknown || y.unknown) out.push(d('minor', response('unknown-side')));
    else out.push(x.largest < y.largest ? d('major', SMALLER) : d('minor', OTHER));
  }
  return out;
}
