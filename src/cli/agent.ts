// `gdrgate agent`: the resident gate the Prolog asks first (src/agent/serve.ts; examples/gdrgate-agent.service).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { configPath } from '../config.js';
import { serveAgent } from '../agent/serve.js';

export async function agentCommand(a: { config?: string | undefined; dir: string; watch?: readonly string[] | undefined }): Promise<number> {
  // This module's own file: an upgrade or a rebuild replaces it, and the agent then stops answering with old code.
  const self = fileURLToPath(import.meta.url);
  // And the program as started: Node runs a module from its real path, so an upgrade that switches a link on the way
  // (a `current` link to a versioned directory, `npm install -g <dir>`, a profile link) leaves `self` in place; the path
  // started by is looked up anew each time, through the link. (Absolute: a script's path; not under a startup snapshot.)
  const started = process.argv[1];
  const program = started !== undefined && path.isAbsolute(started) && started !== self ? [started] : [];
  return serveAgent({ dir: a.dir, config: configPath(a.config), watch: [self, ...program, ...(a.watch ?? [])] });
}
