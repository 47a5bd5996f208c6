// Run by no-mnt-id.test.ts (not a test) in a mount namespace of its own where /proc/self/fdinfo is a directory of files
// that name no mnt_id (as on a kernel before Linux 3.15): the job directories argv[2]/job-7 and job-9 are asked of the
// Prolog's removal and the Epilog's collection, and what each said is printed as one JSON line.
import { collectJobState } from '../../src/state/epilog.js';
import { removeJobDir } from '../../src/state/store.js';

const stateDir = process.argv[2];
// Run without its arguments (a runner given the whole folder): nothing to do.
if (stateDir === undefined) process.exit(0);
const remove = removeJobDir(stateDir, '7');
const collect = collectJobState(stateDir, '9');
process.stdout.write(`${JSON.stringify({ remove, collect })}\n`);
