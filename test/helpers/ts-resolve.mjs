// Lets Node run the TypeScript sources and tests itself (tap's node-arg --experimental-transform-types, in place of
// ts-node): a relative import of `x.js` that does not exist loads `x.ts` beside it, as tsc's NodeNext resolution maps it.
// And Node's compile cache (its TypeScript transform and V8's code cache, keyed by each file's contents and the Node
// version) in node_modules/.cache, shared by every test file's process and the CLIs they start: each would otherwise
// transform and compile the same sources anew. NODE_COMPILE_CACHE set elsewhere wins; NODE_DISABLE_COMPILE_CACHE=1 turns it off.
import { enableCompileCache, register } from 'node:module';
import { fileURLToPath } from 'node:url';
import { isMainThread } from 'node:worker_threads';

process.env.NODE_COMPILE_CACHE ??= fileURLToPath(new URL('../../node_modules/.cache/gdrgate-node-compile', import.meta.url));
enableCompileCache(process.env.NODE_COMPILE_CACHE);
register(new URL('./ts-resolve-hooks.mjs', import.meta.url));
// Files and directories as an admin's root shell makes them (umask 022), whatever the tester's own umask: the gate
// refuses a config, baseline or scontrol its group may change, and under a umask of 002 (a user's default where each
// user has a group of their own) every file and directory a test makes would be group-writable. Inherited by every
// process a test starts (a worker thread, which imports this too, shares its process's and may not set it).
if (isMainThread) process.umask(0o022);
