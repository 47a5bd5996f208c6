// Shared by the files-* hardening tests (not a test): a private scratch directory, a victim file outside the
// gate's directories whose bytes must never change, and a few real samples to append.
import { chmodSync, readFileSync, rmSync, writeFileSync } from 'node:fs';

import path from 'node:path';
import { makeSample, type Sample } from '../../src/samples/sample.js';
import { scratchDir } from '../helpers/scratch.js';

export function scratch(): { dir: string; victim: string; intact: () => boolean; done: () => void } {
  const base = scratchDir('gdrgate-files-');
  const dir = path.join(base, 'spool');
  const victim = path.join(base, 'victim');
  writeFileSync(victim, 'precious\n');
  chmodSync(base, 0o700);
  return {
    dir,
    victim,
    intact: () => readFileSync(victim, 'utf8') === 'precious\n',
    done: () => rmSync(base, { recursive: true, force: true }),
  };
}

export const samples = (n: number): Sample[] =>
  Array.from({ length: n }, (_, i) =>
    makeSample({
      ts: 1764430000000 + i, node: 'gpu001', job: String(100 + i), probe: 'ib-write-host', gpu: null, nic: 'mlx5_0', bytes: 65536, value: 92.5, unit: 'Gb/s',
      recipe: { tool: 'ib_write_bw', args: ['-d', 'mlx5_0'], msgSize: 65536, iterations: 5000, durationS: null, qps: 1, numaNode: 0, direction: 'host->nic' },
    }),
  );
