// Shared setup of the state tests (not a test): a throwaway state dir and a minimal host record.

import path from 'node:path';
import type { PrologState } from '../../src/state/types.js';
import { scratchDir } from '../helpers/scratch.js';

/** A uid that need not exist: root can chown to any number. */
export const JOB_UID = 4242;

export function tmpStateDir(): { base: string; stateDir: string } {
  const base = scratchDir('gdrgate-state-');
  return { base, stateDir: path.join(base, 'run') };
}

export function sampleState(over: Partial<PrologState> = {}): PrologState {
  return {
    job: '1234',
    uid: JOB_UID,
    node: 'gpu001',
    time: '2026-11-29T15:00:00.000Z',
    memlock: { who: 'slurmd', soft: 'unlimited', hard: 'unlimited' },
    memlockMin: 'unlimited',
    hcas: ['mlx5_0', 'mlx5_1'],
    uverbs: ['uverbs0', 'uverbs1'],
    nvidia: ['nvidia-uvm', 'nvidia0', 'nvidia1', 'nvidiactl'],
    gpus: ['0000:18:00.0', '0000:2a:00.0'],
    jobGpus: [1],
    ...over,
  };
}
