// Pure parser of `scontrol show job -o JOBID` (Slurm 22.05: one line of Key=Value; Command=, Comment=, Reason= and
// a few more may hold spaces): the fields a drill follows its probe job by, wherever the job ran.
import type { Parsed } from './sysfs.js';

export interface JobInfo {
  readonly id: string;
  /** PENDING, RUNNING, COMPLETED … */
  readonly state: string;
  /** Reason=, null when "None". */
  readonly reason: string | null;
  /** Where it runs or ran; null while pending (Slurm prints "(null)"). */
  readonly nodeList: string | null;
  readonly batchHost: string | null;
  /** How often Slurm requeued it (a failed Prolog counts one). */
  readonly restarts: number;
  readonly partition: string | null;
  readonly exitCode: string | null;
}

/** Keys as Slurm prints them: a space, then a word of letters (and ":" in TRES keys), then "=". */
const KEY = / (?=[A-Za-z][A-Za-z:/]*=)/;

function fields(line: string): Map<string, string> {
  const m = new Map<string, string>();
  for (const kv of line.split(KEY)) {
    const i = kv.indexOf('=');
    if (i > 0 && !m.has(kv.slice(0, i))) m.set(kv.slice(0, i), kv.slice(i + 1).trimEnd());
  }
  return m;
}

const orNull = (v: string | undefined, none: string): string | null => (v === undefined || v === '' || v === none ? null : v);

/** `id`: the job asked for; an answer about another job (or several) is refused. */
export function parseShowJob(text: string, id: string): Parsed<JobInfo> {
  const lines = text.split('\n').filter((l) => l.startsWith('JobId='));
  const line = lines[0];
  if (!line) return { ok: false, error: `no JobId= line in ${JSON.stringify(text.slice(0, 120))}` };
  if (lines.length > 1) return { ok: false, error: `${lines.length} JobId= lines for one job ${JSON.stringify(id)}` };
  const f = fields(line);
  const got = f.get('JobId') ?? '';
  if (got !== id) return { ok: false, error: `answer names job ${JSON.stringify(got.slice(0, 32))}, not ${JSON.stringify(id)}` };
  const state = f.get('JobState');
  if (!state || !/^[A-Z_]+$/.test(state)) return { ok: false, error: `no JobState= field (${JSON.stringify(state ?? null)})` };
  const restarts = Number(f.get('Restarts') ?? 'x');
  if (!Number.isInteger(restarts) || restarts < 0) return { ok: false, error: `Restarts= is not a count: ${JSON.stringify(f.get('Restarts') ?? null)}` };
  return {
    ok: true,
    value: {
      id,
      state,
      reason: orNull(f.get('Reason'), 'None'),
      nodeList: orNull(f.get('NodeList'), '(null)'),
      batchHost: orNull(f.get('BatchHost'), '(null)'),
      restarts,
      partition: orNull(f.get('Partition'), '(null)'),
      exitCode: orNull(f.get('ExitCode'), '(null)'),
    },
  };
}
