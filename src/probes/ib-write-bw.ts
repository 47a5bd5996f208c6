// Runs one perftest ib_write_bw loopback on an HCA (server and client on this node) and turns the client's table into a sample.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Exec, ExecResult } from '../host/exec.js';
import { parseIbWriteBw, type IbWriteBwResult } from '../parsers/ib-write-bw.js';
import { bandwidthProblem, makeSample } from '../samples/sample.js';
import type { IbWriteSpec, ProbeOutcome, SampleContext } from './types.js';

/** Slurm gives the epilog no PATH; CUDA numbers devices fastest-first unless told to use bus order, which --use_cuda=N assumes. */
export const PROBE_ENV = { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', LC_ALL: 'C', CUDA_DEVICE_ORDER: 'PCI_BUS_ID' } as const;
/** The server needs a moment to listen; a client that comes too early is retried, not failed. */
const SERVER_HEAD_START_MS = 150;
const RETRY_MS = 200;

export function command(spec: IbWriteSpec, args: readonly string[]): [string, string[]] {
  if (spec.numactl === null) return [spec.tool, [...args]];
  const n = String(spec.numactl.node);
  return [spec.numactl.path, ['-N', n, '-m', n, spec.tool, ...args]];
}

/** `0000:41:00.0` (or a 5-digit VMD domain's `10000:e1:00.0`) → `41:00`, as perftest lists CUDA devices: no domain. */
const busDev = (bdf: string): string => bdf.toLowerCase().replace(/^[0-9a-f]+:([0-9a-f]{2}:[0-9a-f]{2})\.[0-7]$/, '$1');

const spawnFailed = (r: ExecResult): boolean => r.exitCode === null && !r.timedOut && r.error !== null;

function failure(spec: IbWriteSpec, r: ExecResult, p: IbWriteBwResult, server: ExecResult | null, t0: number): ProbeOutcome {
  const durationMs = Math.round(performance.now() - t0);
  if (r.timedOut) return { spec, kind: 'failed', why: `timed out after ${durationMs} ms`, lines: [], durationMs };
  if (spawnFailed(r)) return { spec, kind: 'unusable', why: r.error ?? 'cannot run' };
  // The server's own failure only when it says something the client did not (both usually fail the same way).
  const srv = server ? parseIbWriteBw(server.stdout + '\n' + server.stderr, server.exitCode).errorLines.filter((l) => !p.errorLines.includes(l)).map((l) => `server: ${l}`) : [];
  const lines = [...p.errorLines, ...srv].slice(0, 8);
  return { spec, kind: 'failed', why: `${p.error ?? 'no result'} (exit ${r.exitCode ?? 'none'})`, lines, durationMs };
}

export async function runIbWrite(exec: Exec, spec: IbWriteSpec, deadline: number, ctx: SampleContext, tieTo?: string): Promise<ProbeOutcome> {
  const t0 = performance.now();
  const left = (): number => Math.floor(deadline - performance.now());
  const [sf, sa] = command(spec, spec.serverArgs);
  let serverDone: ExecResult | null = null;
  const server = exec.run(sf, sa, { timeoutMs: left(), env: PROBE_ENV, tieTo }).then((r) => (serverDone = r));
  await Promise.race([server, sleep(SERVER_HEAD_START_MS)]);
  const [cf, ca] = command(spec, spec.args);
  let r: ExecResult;
  let p: IbWriteBwResult;
  for (;;) {
    r = await exec.run(cf, ca, { timeoutMs: Math.max(1, left()), env: PROBE_ENV, tieTo });
    p = parseIbWriteBw(r.stdout + '\n' + r.stderr, r.exitCode);
    // Too early for the server: try again while it still runs and time is left.
    if (p.error !== 'connection failed' || serverDone !== null || left() < RETRY_MS * 2) break;
    await sleep(RETRY_MS);
  }
  // A server whose client never connected waits until its timeout; it must not outlive this run either way.
  const srv = await server;
  if (p.error !== null || p.unit === null) return failure(spec, r, p, srv, t0);
  const durationMs = Math.round(performance.now() - t0);
  // Our own server must have served the client: one that could not listen (the fixed port taken by another user's
  // ib_write_bw) leaves the client measuring against someone else's server, memory and path: not our sample.
  const srvErrors = parseIbWriteBw(srv.stdout + '\n' + srv.stderr, srv.exitCode).errorLines;
  if (srv.exitCode !== 0 || srvErrors.length) {
    return { spec, kind: 'failed', why: `loopback server failed (exit ${srv.timedOut ? 'none: timed out' : (srv.exitCode ?? 'none')}): the client's result is not ours`, lines: srvErrors.map((l) => `server: ${l}`).slice(0, 8), durationMs };
  }
  // The HCA perftest says it ran on decides, as the GPU does below: with rdma_cm (-R, a site flag) the device is the one
  // the route to the address resolves to, and -d was not what ran (perftest 16ecbfe: "--ib-dev was silently ignored";
  // since then the header names the resolved device). A run of another HCA, or of one it does not name, is no sample
  // of this one: judged against this one's band it would hide a slow rail, or drain for another's.
  if (p.device === null) {
    return { spec, kind: 'failed', why: `ib_write_bw did not say which device it used (no "Device :" in its header): not filed under ${spec.nic}`, lines: [], durationMs };
  }
  if (p.device !== spec.nic) return { spec, kind: 'failed', why: `ib_write_bw ran on ${p.device}, not ${spec.nic} (-d): not filed under ${spec.nic}`, lines: [], durationMs };
  const row = p.rows.find((x) => x.bytes === spec.recipe.msgSize) ?? p.rows[p.rows.length - 1]!;
  const impossible = bandwidthProblem(row.bwAverage, p.unit);
  if (impossible !== null) return { spec, kind: 'failed', why: `not a bandwidth: ${impossible}`, lines: p.problems.slice(0, 8), durationMs };
  // The GPU perftest says it used decides: a sample of another GPU (CUDA's order not the inventory's) is never filed
  // under the planned one, whose band it would be judged against.
  // perftest names it on its `CUDA device N: PCIe address is …` line; a GPU run without that line could have measured
  // any GPU, so it is no sample either (could not tell), never filed under the planned one unchecked.
  const picked = p.gpu?.pciAddress?.toLowerCase();
  if (spec.gpu !== null && !picked) {
    return { spec, kind: 'failed', why: `ib_write_bw did not say which GPU it used (no "PCIe address is" line): not filed under ${spec.gpu} (CUDA device ${spec.gpuIndex})`, lines: [], durationMs };
  }
  if (spec.gpu !== null && picked !== busDev(spec.gpu)) {
    return { spec, kind: 'failed', why: `measured GPU ${picked}, not ${spec.gpu} (CUDA device ${spec.gpuIndex}): is CUDA_DEVICE_ORDER honoured?`, lines: [], durationMs };
  }
  // perftest prints bus:device without the PCI domain: where two GPUs share it in different domains (Hyper-V vPCI
  // gives each GPU a domain of its own, all at 00:00), the line names none of them, and the run is never filed.
  const listedThere = (p.gpu?.listed ?? []).filter((a) => a.toLowerCase() === picked).length;
  const gpusThere = spec.gpus.filter((b) => busDev(b) === picked);
  if (spec.gpu !== null && (listedThere > 1 || gpusThere.length > 1)) {
    const where = listedThere > 1 ? `CUDA lists ${listedThere} devices at ${picked}` : `the inventory has ${gpusThere.length} GPUs at ${picked} (${gpusThere.join(', ')})`;
    return { spec, kind: 'failed', why: `could not tell which GPU ib_write_bw used: it names bus:device only (${picked}, no PCI domain), and ${where}: not filed under ${spec.gpu} (CUDA device ${spec.gpuIndex})`, lines: [], durationMs };
  }
  const notes = [...p.problems];
  const sample = makeSample({
    ts: ctx.now(), node: ctx.node, job: ctx.job, probe: spec.probe, recipe: spec.recipe, gpu: spec.gpu, nic: spec.nic,
    bytes: row.bytes, value: row.bwAverage, unit: p.unit,
  });
  return { spec, kind: 'ok', samples: [sample], durationMs, notes };
}
