// `gdrgate agent`: the resident gate the Prolog asks first (src/agent/serve.ts; examples/gdrgate-agent.service).
import { fileURLToPath } from 'node:url';
import { configPath } from '../config.js';
import { serveAgent } from '../agent/serve.js';

export async function agentCommand(a: { config?: string | undefined; dir: string; watch?: readonly string[] | undefined }): Promise<number> {
  // This module's own file: an upgrade or a rebuild replaces it, and the agent then stops answering with old code.
  const self = fileURLToPath(import.meta.url);
  return serveAgent({ dir: a.dir, config: configPath(a.config), watch: [self, ...(a.watch ?? [])] });
}
