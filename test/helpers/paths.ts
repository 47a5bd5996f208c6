// Paths tests share: the repo root, the bundled capture, the built CLI, shared/ beside the repo.
import { fileURLToPath } from 'node:url';
import path from 'node:path';

/** The repo root, also from the benchmarks' compiled copy of this file (.bench/test/helpers: npm run bench). */
const here = path.resolve(fileURLToPath(new URL('../..', import.meta.url)));
export const REPO = path.basename(here) === '.bench' ? path.dirname(here) : here;
export const H200 = path.join(REPO, 'examples/h200-vm');
export const CLI = path.join(REPO, 'dist/cli.js');
export const fixture = (...p: string[]): string => path.join(REPO, 'test/fixtures', ...p);
/** shared/ beside the repo (corpus-reference, oracles, fixtures): not part of a clone, so tests that read it skip without it. */
export const SHARED = path.join(path.dirname(REPO), 'shared');
export const shared = (...p: string[]): string => path.join(SHARED, ...p);
