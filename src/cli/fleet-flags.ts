// The arguments of `fleet report`, declared once: yargs reads them (fleetReportArgs, in commands.ts), the command's
// argument type (cli/fleet.ts) derives from them. A module of its own, light, so that the command line's parser
// loads no fleet code.
import type { Argv, InferredOptionTypes } from 'yargs';
import { duration, flag, text, word } from './options.js';

export const FLEET_REPORT_FLAGS = {
  json: flag('print JSON (schemas/fleet-report.schema.json)'),
  html: text('--html', { describe: 'also write one self-contained HTML report to this file' }),
  baseline: text('--baseline', { describe: "group nodes by this baseline's classes (default: the whole directory is one class)" }),
  prometheus: text('--prometheus', { describe: 'also read bandwidth figures (gdrgate_* series) from this Prometheus URL' }),
  'max-age': duration('--max-age', 36_500 * 86_400_000, 'a spool or Prometheus figure, or a snapshot, older than this is not judged, and said (default 7d)'),
  'any-instance': flag("with --prometheus: count a series for the node its label names even when its instance is another host (a relabelled setup; by default such a series is not counted)"),
} as const;

/** `fleet report <dir>` as yargs hands it over: the directory and the flags above. */
export type FleetReportArgs = { readonly dir: string } & Readonly<InferredOptionTypes<typeof FLEET_REPORT_FLAGS>>;

/** `fleet report`'s builder: its directory and its flags. */
export const fleetReportArgs = <T>(z: Argv<T>) =>
  z.positional('dir', word('dir', 'directory of <node>.tar.gz snapshots and <node>.samples.jsonl spools')).options(FLEET_REPORT_FLAGS);
