// gpudirect-mechanism: nvidia-peermem or DMA-BUF available, as NCCL decides (net_ib.cc), and the one the class expects.
import { factText, nul } from '../model/fact.js';
import type { Gpudirect } from '../model/inventory.js';
import type { Finding } from '../model/finding.js';
import { defineCheck, finder } from './types.js';
import WORDING from './gpudirect-mechanism.json' with { type: 'json' };

const f = finder('gpudirect-mechanism', WORDING.codes);

export function describe(g: Gpudirect): string {
  const d = g.driver;
  const drv = d.state === 'present' ? `${d.value.flavour === 'open' ? 'open kernel module' : 'proprietary kernel module'} ${d.value.version}` : d.state === 'absent' ? 'no NVIDIA driver' : `NVIDIA driver unknown (${d.why})`;
  // The inventory's why already opens with the mechanism's name (`DMA-BUF: …`): said once, after `unknown`.
  const dmabuf = factText(g.dmabuf, (v) => (v ? 'DMA-BUF possible' : 'DMA-BUF not possible')).replace(/^unknown \((?:DMA-BUF: )?/, 'DMA-BUF unknown (');
  const peer = factText(g.peermem, (v) => (v ? `nvidia_peermem ${nul(g.nvidiaPeermem) ?? nul(g.nvMem) ?? nul(g.nvMemNc) ?? 'loaded'}` : 'nvidia_peermem absent')).replace(/^unknown \((?:nvidia_peermem: )?/, 'nvidia_peermem unknown (');
  return `${drv}, kernel ${nul(g.kernelRelease) ?? '?'}: ${dmabuf}, ${peer}`;
}

/** The mechanisms available: `peermem+dmabuf`, one, `none`; one that could not be told carries a `?` (`peermem?`). */
function available(g: Gpudirect): string {
  const one = (name: string, f: Gpudirect['dmabuf']): string => (f.state !== 'present' ? `${name}?` : f.value ? name : '');
  return [one('peermem', g.peermem), one('dmabuf', g.dmabuf)].filter(Boolean).join('+') || 'none';
}

/** Whether the wanted mechanism is there: yes, no, or null when a fact it rests on is unknown (skip, never a verdict). */
function satisfied(g: Gpudirect, want: string): boolean | null {
  const of = (f: Gpudirect['dmabuf']): boolean | null => (f.state === 'present' ? f.value : null);
  const peermem = of(g.peermem);
  const dmabuf = of(g.dmabuf);
  if (want === 'peermem') return peermem;
  if (want === 'dmabuf') return dmabuf;
  if (peermem === true || dmabuf === true) return true;
  return peermem === null || dmabuf === null ? null : false;
}

/** NVSHMEM IBGDA needs the driver's PeerMappingOverride registry key (NVSHMEM install guide), shown in RegistryDwords. */
function peerMapping(g: Gpudirect): ReturnType<typeof f> {
  const r = g.registryDwords;
  if (r.state !== 'present') return f('peer-mapping-unknown', 'skip', 'nvidia', `PeerMappingOverride not readable (${r.state === 'unknown' ? r.why : '/proc/driver/nvidia/params absent'})`);
  const v = r.value.PeerMappingOverride;
  const keys = Object.entries(r.value).map(([k, x]) => `${k}=${x}`).join(';');
  const shown = keys ? `"${keys}"` : 'empty';
  return v === '1'
    ? f('peer-mapping-ok', 'pass', 'nvidia', `RegistryDwords ${shown}`, 'PeerMappingOverride=1', 'PeerMappingOverride=1')
    : f('peer-mapping-missing', 'warn', 'nvidia', `GPU-initiated networking (IBGDA) class, driver RegistryDwords ${shown}`, 'PeerMappingOverride=1', v === undefined ? 'not set' : `PeerMappingOverride=${v}`);
}

export default defineCheck('gpudirect-mechanism', WORDING, {
  run({ inv, baseline }): Finding[] {
    const g = inv.gpudirect;
    const facts = describe(g);
    const have = available(g);
    if (inv.gpus.length === 0) return [f('mechanism-na', 'skip', 'node', `not applicable: no GPU; ${facts}`)];
    const want = baseline?.mechanism ?? 'any';
    const ok = satisfied(g, want);
    const out = [];
    if (inv.nics.length === 0) {
      out.push(f('mechanism-na', ok === true ? 'pass' : 'skip', 'node', `${facts}; no RDMA adapter, so nothing uses it yet`, want, have));
      return out;
    }
    if (ok === null) out.push(f('mechanism-unknown', 'skip', 'node', `whether ${want === 'any' ? 'a GPUDirect mechanism' : want} is available could not be told: ${facts}`, want, have));
    else if (!ok) out.push(f(have === 'none' ? 'mechanism-missing' : 'mechanism-wrong', 'fail', 'node', `${want === 'any' ? 'no GPUDirect mechanism' : `${want} not available`}: ${facts}`, want, have));
    else out.push(f('mechanism-ok', 'pass', 'node', facts, want, have));
    if (baseline?.gpuInitiated) out.push(peerMapping(g));
    if (g.ibUverbs.state === 'unknown') out.push(f('mechanism-unknown', 'skip', 'ib_uverbs', `whether ib_uverbs is loaded could not be told: ${g.ibUverbs.why}`, 'loaded'));
    else if (nul(g.ibUverbs) !== true) out.push(f('uverbs-missing', 'warn', 'ib_uverbs', 'RDMA adapters present but ib_uverbs not loaded', 'loaded', 'absent'));
    return out;
  },
});
