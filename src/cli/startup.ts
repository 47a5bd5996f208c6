// `gdrgate startup-snapshot`: the gate's startup snapshot made on this node (src/startup/make.ts).
import { bundledCapture, defaultBlob, makeStartupSnapshot, programFile } from '../startup/make.js';
import { out } from './common.js';

export async function startupCommand(a: { out?: string | undefined; warmUp?: string[] | undefined; ifNeeded?: boolean }): Promise<number> {
  const program = programFile();
  const capture = bundledCapture(program);
  // The bundled capture (a real H200 node) and this node itself: the code this node's prologs run is compiled in.
  const warmUp = a.warmUp ?? [...(capture ? [capture] : []), '/'];
  out(await makeStartupSnapshot({ out: a.out ?? defaultBlob(program), warmUp, ifNeeded: a.ifNeeded ?? false }));
  return 0;
}
