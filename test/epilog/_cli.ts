// Shared by the epilog CLI tests (not a test): probe configs of the stand-in tools, the spool's lines, and a node
// with bands captured and `n` healthy epilogs behind it. The CLI tests are split by theme so that none of them
// comes near tap's per-file timeout on a loaded two-core machine (every epilog is a process start and probes).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { cli } from '../helpers/cli.js';
import { bin, makeEpilogEnv, type EpilogEnv } from './_env.js';

export const probes = (variant: string, over: Record<string, unknown> = {}) => ({
  tools: { ibWriteBw: bin(`ib_write_bw-${variant}`), nvbandwidth: bin('nvbandwidth') },
  sampling: {},
  nvbandwidth: { testcases: ['host_to_device_memcpy_ce'] },
  capture: { runs: 2 },
  ...over,
});
export const lines = (e: EpilogEnv): string[] => (existsSync(path.join(e.spool, 'samples.jsonl')) ? readFileSync(path.join(e.spool, 'samples.jsonl'), 'utf8').trim().split('\n') : []);
export const last = (s: string): string => s.trim().split('\n').pop() ?? '';

/** A healthy node: bands captured with the same probes, then `n` healthy epilogs. */
export async function healthy(n: number, over: Record<string, unknown> = {}): Promise<EpilogEnv> {
  const e = await makeEpilogEnv(1);
  e.writeConfig(probes('healthy', over));
  const cap = cli(['baseline', 'capture', '--root', e.tree, '--class', 'rail', '--match', '*', '--with-probes', '--config', e.config]);
  if (cap.code !== 0) throw new Error(cap.stderr);
  writeFileSync(e.baseline, cap.stdout);
  for (let j = 1; j <= n; j++) if (e.epilog(String(j)).code !== 0) throw new Error(`healthy epilog ${j} failed`);
  return e;
}
