// Run by mount-table-unread.test.ts (not a test) in a mount namespace of its own where /proc is not mounted, so
// /proc/self/mountinfo cannot be read while every other file is: the job's directory (argv[2], job argv[3]) is asked
// of each place that looks for a user's mounts before entering it, and what each said is printed as one JSON line.
import { collectJobState } from '../../src/state/epilog.js';
import { removeJobDir } from '../../src/state/store.js';

const [stateDir, job] = [process.argv[2], process.argv[3]];
// Run without its arguments (a runner given the whole folder): nothing to do.
if (stateDir === undefined || job === undefined) process.exit(0);
const remove = removeJobDir(stateDir, job);
const collect = collectJobState(stateDir, job);
process.stdout.write(`${JSON.stringify({ remove, collect })}\n`);
