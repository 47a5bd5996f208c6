// Where a drill lives on the node; the gate imports only this (one stat on the pass path), the rest loads lazily.
import path from 'node:path';

export const drillFile = (stateDir: string): string => path.join(stateDir, 'drill.json');
export const drillRecord = (stateDir: string): string => path.join(stateDir, 'drills.jsonl');
