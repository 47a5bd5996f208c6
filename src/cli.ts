#!/usr/bin/env node
// gdrgate command line: parses flags, runs one command, and owns the exit code (the one top-level catch).
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { ConfigError } from './errors.js';
import { log } from './log.js';
import { UsageError } from './runner/run.js';
import { VERSION } from './version.js';

const root = { type: 'string', default: '/', describe: 'read the node under this directory (a capture) instead of /' } as const;
const json = { type: 'boolean', default: false, describe: 'print the JSON report (schemas/report.schema.json)' } as const;

async function main(argv: string[]): Promise<number> {
  let code = 0;
  const set = (p: Promise<number>) => p.then((c) => void (code = c));
  await yargs(argv)
    .scriptName('gdrgate')
    .version(VERSION)
    .strict()
    .demandCommand(1, 'name a command')
    .command(
      'check',
      'check the GPU↔RDMA path of this node (or of --root) and print a report; never drains',
      (y) =>
        y
          .option('root', root)
          .option('json', json)
          .option('baseline', { type: 'string', describe: 'baseline JSON: also check against the class of this node' })
          .option('node', { type: 'string', describe: 'node name for class selection (default: SLURMD_NODENAME, then hostname)' })
          .option('only', { type: 'array', string: true, describe: 'check ids, comma or space separated' })
          .option('verbose', { type: 'boolean', default: false, alias: 'v' }),
      (a) => set(import('./cli/check.js').then((m) => m.checkCommand(a))),
    )
    .command(
      'topo',
      'print the GPU↔NIC PCIe matrix computed from sysfs, in nvidia-smi topo -m layout',
      (y) => y.option('root', root).option('json', json),
      (a) => set(import('./cli/topo.js').then((m) => m.topoCommand(a))),
    )
    .fail((msg, err) => {
      throw err ?? new UsageError(msg);
    })
    .parseAsync();
  return code;
}

try {
  process.exitCode = await main(hideBin(process.argv));
} catch (e) {
  const usage = e instanceof UsageError || e instanceof ConfigError;
  process.stderr.write(`gdrgate: ${(e as Error).message}\n`);
  if (!usage) (await log()).error({ err: e }, 'internal error');
  process.exitCode = usage ? 2 : 3;
}
