// Lets Node run the TypeScript sources and tests itself (tap's node-arg --experimental-transform-types, in place of
// ts-node): a relative import of `x.js` that does not exist loads `x.ts` beside it, as tsc's NodeNext resolution maps it.
import { register } from 'node:module';

register(new URL('./ts-resolve-hooks.mjs', import.meta.url));
