// Runs one nvbandwidth copy-engine testcase (host→device or device→host) and records one sample per GPU.
import type { Exec } from '../host/exec.js';
import { parseNvbandwidth, type NvbwTestcase } from '../parsers/nvbandwidth.js';
import { bandwidthProblem, makeSample, type Sample } from '../samples/sample.js';
import { PROBE_ENV } from './ib-write-bw.js';
import type { NvbwSpec, ProbeOutcome, SampleContext } from './types.js';

/**
 * `00000000:1b:00` (nvbandwidth: CUDA's 8-digit domain) names the GPU whose BDF starts `0000:1b:00.`, and
 * `00010000:01:00` the one at `10000:01:00.` (the kernel prints the domain "%04x": 4 digits, more past 0xffff).
 */
function byBusId(gpus: readonly string[], busId: string | null): string | null {
  const m = busId === null ? null : /^([0-9a-f]{8}):([0-9a-f]{2}:[0-9a-f]{2})$/i.exec(busId);
  if (m === null) return null;
  const want = `${Number.parseInt(m[1]!, 16).toString(16).padStart(4, '0')}:${m[2]!.toLowerCase()}.`;
  return gpus.find((g) => g.startsWith(want)) ?? null;
}

/** The one CPU row of a CE memcpy testcase: column j is GPU j (h2d `CPU(row) -> GPU(column)`, d2h `CPU(row) <- GPU(column)`). */
function cells(tc: NvbwTestcase): { col: number; value: number }[] {
  const row = tc.matrix[0] ?? [];
  return tc.columns.flatMap((col, j) => (typeof row[j] === 'number' ? [{ col, value: row[j] }] : []));
}

export async function runNvbandwidth(exec: Exec, spec: NvbwSpec, deadline: number, ctx: SampleContext, tieTo?: string): Promise<ProbeOutcome> {
  const t0 = performance.now();
  const r = await exec.run(spec.tool, spec.args, { timeoutMs: Math.max(1, Math.floor(deadline - t0)), env: PROBE_ENV, tieTo });
  const durationMs = Math.round(performance.now() - t0);
  if (r.timedOut) return { spec, kind: 'failed', why: `timed out after ${durationMs} ms`, lines: [], durationMs };
  if (r.exitCode === null && r.error !== null) return { spec, kind: 'unusable', why: r.error };
  // As for ib_write_bw: a run that says it failed is no sample, whatever its matrix holds.
  if (r.exitCode !== 0) return { spec, kind: 'failed', why: `tool failed (exit ${r.exitCode ?? 'none'})`, lines: [r.stderr.trim()].filter(Boolean).slice(0, 8), durationMs };
  const p = parseNvbandwidth(r.stdout + (spec.recipe.args.includes('-j') ? '' : `\n${r.stderr}`));
  const tc = p.testcases.find((t) => t.name === spec.testcase);
  if (tc === undefined || tc.status !== 'passed' || p.error !== null) {
    const why = tc?.message ?? p.error ?? (tc ? `testcase ${tc.status}` : `no ${spec.testcase} in the output`);
    return { spec, kind: 'failed', why: `${why} (exit ${r.exitCode ?? 'none'})`, lines: [...p.problems, r.stderr.trim()].filter(Boolean).slice(0, 8), durationMs };
  }
  if (tc.unit !== 'GB/s' || tc.rowKind !== 'CPU' || tc.columnKind !== 'GPU') {
    return { spec, kind: 'failed', why: `unexpected layout: ${tc.description ?? 'no description'}`, lines: [], durationMs };
  }
  // One impossible cell (zero, or more than any path carries) and the whole output is garbage: no sample of it.
  const bad = cells(tc).flatMap(({ col, value }) => {
    const why = bandwidthProblem(value, 'GB/s');
    return why === null ? [] : [`device ${col}: ${why}`];
  });
  if (bad.length) return { spec, kind: 'failed', why: `not a bandwidth: ${bad.join(', ')}`, lines: p.problems.slice(0, 8), durationMs };
  const notes = [...p.problems];
  const samples: Sample[] = [];
  // Without a bus id, device N is the Nth GPU in bus order (CUDA_DEVICE_ORDER=PCI_BUS_ID) only when CUDA sees as many
  // GPUs as the inventory lists: one it leaves out (excluded, bound to vfio-pci, dead) shifts every later index.
  const listed = p.devices.length || cells(tc).length;
  for (const { col, value } of cells(tc)) {
    const dev = p.devices.find((d) => d.index === col);
    const gpu = dev?.pciBusId ? byBusId(spec.gpus, dev.pciBusId) : listed === spec.gpus.length ? (spec.gpus[col] ?? null) : null;
    if (gpu === null) {
      notes.push(
        dev?.pciBusId
          ? `device ${col} (${dev.pciBusId}) is not a GPU of the inventory: not recorded`
          : `device ${col}: no bus id, and CUDA lists ${listed} device(s) for ${spec.gpus.length} GPU(s) of the inventory: could not tell which GPU, not recorded`,
      );
      continue;
    }
    samples.push(makeSample({ ts: ctx.now(), node: ctx.node, job: ctx.job, probe: spec.probe, recipe: spec.recipe, gpu, nic: null, bytes: spec.recipe.msgSize ?? 0, value, unit: 'GB/s' }));
  }
  if (samples.length === 0) return { spec, kind: 'failed', why: 'no GPU cell in the result', lines: notes, durationMs };
  return { spec, kind: 'ok', samples, durationMs, notes };
}
