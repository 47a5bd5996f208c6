// compare A B: the sizes each GPU's resizable BARs can take, suspect against reference, by address. The size a BAR has
// now is gpu-bar1's (the GPUDirect window): not compared again here.
import { type Difference, type Impact, response } from '../../compare/types.js';
import { type Fact, factText } from '../../model/fact.js';
import type { Inventory } from '../../model/inventory.js';
import { sizeText } from '../../parsers/pci-resource.js';
import { type RebarBar, sizeBytes } from './parse.js';

const SMALLER =
  'The GPU offers smaller BAR sizes than on the reference node: its Resizable BAR setting (VBIOS, or the BIOS\'s "Resizable BAR" and "Above 4G decoding") differs. Set it as on the reference and reboot; until then the GPUDirect window (gpu-bar1) cannot reach the reference\'s size.';
const OTHER = 'The sizes offered differ from the reference\'s, the largest no smaller: confirm the firmware change is intended and recapture the reference if so.';

const largest = (bars: readonly RebarBar[]): number => Math.max(-1, ...bars.flatMap((b) => b.sizes));

const text = (f: Fact<readonly RebarBar[]>): string =>
  factText(f, (bars) => bars.map((b) => `BAR${b.bar} ${b.sizes.length ? `${sizeText(sizeBytes(b.sizes[0]!))}–${sizeText(sizeBytes(b.sizes[b.sizes.length - 1]!))}` : 'no size'}`).join('; '));

export function compareRebar(a: Inventory, b: Inventory): Difference[] {
  const out: Difference[] = [];
  const [fa, fb] = [a.areas['gpu-rebar'], b.areas['gpu-rebar']];
  for (const g of b.gpus) {
    const [x, y] = [fa[g.bdf], fb[g.bdf]];
    if (!x || !y) continue;
    const [ta, tb] = [text(x), text(y)];
    if (ta === tb) continue;
    const d = (impact: Impact, why: string): Difference => ({ impact, area: 'gpu-rebar', subject: g.bdf, a: ta, b: tb, response: why });
    if (x.state === 'unknown' || y.state === 'unknown') out.push(d('minor', response('unknown-side')));
    else {
      const [la, lb] = [x.state === 'present' ? largest(x.value) : -1, y.state === 'present' ? largest(y.value) : -1];
      out.push(la < lb ? d('major', SMALLER) : d('minor', OTHER));
    }
  }
  return out;
}
