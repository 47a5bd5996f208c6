// `gdrgate baseline capture` (from a known-good node) and `gdrgate baseline validate FILE`.
import { captureClass } from '../baseline/capture.js';
import { loadBaseline } from '../baseline/load.js';
import type { Host } from '../host/host.js';
import type { Baseline } from '../model/baseline.js';
import { gather, out } from './common.js';

/** A VM's CPUs carry the `hypervisor` flag (arch/x86 X86_FEATURE_HYPERVISOR). */
async function detectPlatform(host: Host): Promise<'bare-metal' | 'virtualized'> {
  const r = await host.readText('/proc/cpuinfo');
  return r.ok && /^flags\s*:.*\bhypervisor\b/m.test(r.value) ? 'virtualized' : 'bare-metal';
}

export async function captureCommand(a: { root: string; class: string; match?: string[] | undefined; platform?: string | undefined }): Promise<number> {
  const { host, inv } = await gather(a.root);
  const platform = a.platform === 'bare-metal' || a.platform === 'virtualized' ? a.platform : await detectPlatform(host);
  const { cls, warnings } = captureClass(inv, {
    name: a.class,
    match: a.match?.length ? a.match : [inv.hostname ?? '*'],
    platform,
    at: new Date().toISOString(),
  });
  for (const w of warnings) process.stderr.write(`gdrgate: note: ${w}\n`);
  const b: Baseline = { version: 1, classes: [cls] };
  out(JSON.stringify(b, null, 2));
  return 0;
}

export async function validateCommand(a: { file: string }): Promise<number> {
  const b = await loadBaseline(a.file);
  out(`${a.file}: valid, ${b.classes.length} class(es): ${b.classes.map((c) => `${c.name} [${c.match.join(' ')}] ${c.platform}, ${c.devices.length} devices`).join('; ')}`);
  return 0;
}
