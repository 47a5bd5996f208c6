// The epilog's bandwidth judgement as a record (src/epilog/judge.ts makes its findings from probe samples, not from
// a check over the inventory): its codes, worded in bandwidth.json, in the one catalog with every other record's.
import { defineRecord } from '../checks/types.js';
import { worded } from '../checks/wording.js';
import WORDING from './bandwidth.json' with { type: 'json' };

export const BANDWIDTH = defineRecord({ id: 'bandwidth', source: 'probe', codes: worded('src/epilog/bandwidth.json', WORDING.codes) });

export type BwCode = keyof typeof WORDING.codes;
