// What a site's slurm.conf must change for gdrgate, merged with what is there: flags kept, scripts chained, limits
// and timeouts only raised. Pure: entries (conf-load.ts) and the release's features (versions.ts) in, a plan out.
// gdrgate never writes slurm.conf; the CLI (src/cli/slurm-config.ts) prints this plan.
import type { ConfEntry } from './conf-parse.js';
import { chainText, unchainable, type Hook } from './chain.js';
import { confLine } from './conf-value.js';
import { features, type Release } from './versions.js';

export type Action = 'keep' | 'set' | 'add' | 'remove' | 'optional';

export interface Change {
  /** The key as Slurm documents it (PrologFlags). */
  readonly key: string;
  readonly action: Action;
  /** Where the line to edit is (the last one Slurm reads for a one-value key); for `add`, the file to add it to. */
  readonly file: string;
  readonly line: number | null;
  /** The lines there now, as `Key=value` (several for Prolog/Epilog from 24.05 on), and the line to write. */
  readonly now: readonly string[];
  readonly set: string | null;
  readonly why: string;
}

export interface Wrapper {
  readonly hook: Hook;
  readonly path: string;
  readonly text: string;
}

export interface Plan {
  readonly changes: readonly Change[];
  readonly wrappers: readonly Wrapper[];
  readonly warnings: readonly string[];
}

export interface MergeInput {
  readonly entries: readonly ConfEntry[];
  /** The conf an `add` goes to. */
  readonly mainFile: string;
  readonly release: Release;
  /** gdrgate's own wrappers (slurm/*.sh as installed): /usr/libexec/gdrgate/{prolog,epilog,taskprolog,health}.sh. */
  readonly scripts: Readonly<Record<Hook, string>>;
  /** Where generated chain wrappers go (the directory of the controller's slurm.conf). */
  readonly wrapperDir: string;
  /** The plugstack line that loads pyxis (plugstack.ts), if any: then a container step's TaskProlog runs in its container. */
  readonly pyxis?: { readonly file: string; readonly line: number } | null;
}

/** The shortest bound that fits gdrgate: its Prolog deadline (deadlineMs, 6 s) and Epilog probes (budgetMs 20 s + 6 s) with margin. */
export const TIMEOUT_S = 60;

const KEY: Record<Hook, string> = { prolog: 'Prolog', epilog: 'Epilog', taskprolog: 'TaskProlog', health: 'HealthCheckProgram' };

export function mergePlan(inp: MergeInput): Plan {
  const f = features(inp.release);
  const changes: Change[] = [];
  const wrappers: Wrapper[] = [];
  const warnings: string[] = [];
  const all = (name: string): ConfEntry[] => inp.entries.filter((e) => e.name === name.toLowerCase());
  const last = (name: string): ConfEntry | undefined => all(name).at(-1);
  const shown = (e: ConfEntry): string => `${e.key}=${e.value}`;
  const at = (e: ConfEntry | undefined): { file: string; line: number | null } => (e ? { file: e.file, line: e.line } : { file: inp.mainFile, line: null });
  for (const name of ['Prolog', 'Epilog', 'PrologFlags', 'TaskProlog', 'HealthCheckProgram', 'PrologEpilogTimeout', 'PropagateResourceLimitsExcept', 'PropagateResourceLimits']) {
    const seen = all(name);
    if (seen.length > 1 && !(f.multiPrologLines && (name === 'Prolog' || name === 'Epilog')))
      warnings.push(`${name} is set ${seen.length} times (${seen.map((e) => `${e.file}:${e.line}`).join(', ')}): Slurm ${inp.release} uses the last one only`);
  }

  // PrologFlags: the site's flags as written, plus Alloc (unless a flag of theirs implies it) and DeferBatch.
  {
    const e = last('PrologFlags');
    const tokens = e ? e.value.split(',').map((t) => t.trim()).filter(Boolean) : [];
    const has = (flag: string): boolean => tokens.some((t) => t.toLowerCase() === flag.toLowerCase());
    for (const t of tokens) if (!f.prologFlags.some((k) => k.toLowerCase() === t.toLowerCase())) warnings.push(`PrologFlags ${t} is not a flag Slurm ${inp.release} knows: slurmctld will refuse the file`);
    // X11 and RunInJob set Contain too (prolog_str2flags), and NoHold with Contain is fatal to slurmctld.
    if (has('NoHold') && (has('Contain') || has('X11') || has('RunInJob'))) warnings.push('PrologFlags NoHold does not combine with Contain, X11 or RunInJob (both set Contain): slurmctld refuses the file (read_config.c)');
    if (has('RunInJob') && has('Serial')) warnings.push('PrologFlags RunInJob and Serial do not combine (Slurm 24.05+ says so at start)');
    const add = [...(f.impliesAlloc.some(has) || has('Alloc') ? [] : ['Alloc']), ...(has('DeferBatch') ? [] : ['DeferBatch'])];
    const implied = f.impliesAlloc.filter(has);
    const why = [
      'the Prolog must run at allocation on every node (Alloc) and the batch script wait for every node\'s Prolog (DeferBatch)',
      implied.length ? `; ${implied.join(', ')} already ${implied.length > 1 ? 'imply' : 'implies'} Alloc` : '',
      tokens.length ? '; every flag the site has is kept' : '',
    ].join('');
    changes.push(add.length === 0 ? { key: 'PrologFlags', action: 'keep', ...at(e), now: e ? [shown(e)] : [], set: null, why } : { key: 'PrologFlags', action: e ? 'set' : 'add', ...at(e), now: e ? [shown(e)] : [], set: confLine(e?.key ?? 'PrologFlags', [...tokens, ...add].join(',')), why });
  }

  // Prolog, Epilog: another line from 24.05 on; before, a chain wrapper in place of the site's one script.
  for (const hook of ['prolog', 'epilog'] as const) chainHook(hook, f.multiPrologLines);
  chainHook('taskprolog', false);
  chainHook('health', false);
  healthSchedule();

  function chainHook(hook: Hook, multi: boolean): void {
    const key = KEY[hook];
    const ours = inp.scripts[hook];
    const chain = `${inp.wrapperDir.replace(/\/$/, '')}/gdrgate-${hook}-chain.sh`;
    const seen = multi ? all(key) : [last(key)].filter((e): e is ConfEntry => e !== undefined);
    const values = seen.map((e) => e.value);
    const now = seen.map(shown);
    const e = seen.at(-1);
    const caged = hook === 'taskprolog' && inp.pyxis ? inp.pyxis : null;
    if (caged) warnings.push(pyxisWarning(caged, ours));
    if (values.includes(ours) || values.includes(chain)) {
      changes.push({ key, action: 'keep', ...at(e), now, set: null, why: `gdrgate's ${key} is there already${values.includes(chain) ? ' (through its chain wrapper)' : ''}` });
      return;
    }
    if (caged && !e) {
      changes.push({ key, action: 'optional', file: inp.mainFile, line: null, now, set: confLine(key, ours), why: `optional here: pyxis is loaded (${caged.file}:${caged.line}), and a container step's ${key} must then be in its container (see the warning)` });
      return;
    }
    // The site's own TaskProlog works in its containers (or their tasks would end): a chain wrapper that then runs
    // gdrgate's script, which they lack, would end them. Kept; chaining is the site's, by hand, once mounted.
    if (caged && e) {
      changes.push({ key, action: 'keep', ...at(e), now, set: null, why: `not chained: pyxis is loaded (${caged.file}:${caged.line}), and a wrapper running ${ours} after the site's script would end every container step whose image lacks it (see the warning); chain it by hand once it is mounted into the containers` });
      return;
    }
    if (hook === 'health' && !e) {
      changes.push({ key, action: 'optional', file: inp.mainFile, line: null, now, set: confLine(key, ours), why: 'optional: the same gate on idle nodes between jobs, on the schedule of HealthCheckInterval and HealthCheckNodeState; it resumes only its own drains' });
      return;
    }
    if (!e) {
      changes.push({ key, action: 'add', file: inp.mainFile, line: null, now, set: confLine(key, ours), why: ADD_WHY[hook] });
      return;
    }
    if (multi) {
      changes.push({ key, action: 'add', file: e.file, line: e.line, now, set: confLine(key, ours), why: `Slurm ${inp.release} runs every ${key}= line in order (a failure stops the rest): add this line after ${e.file}:${e.line}, the site's ${key} runs first and stays as it is` });
      return;
    }
    // A bare name (23.11+) is found beside the main slurm.conf (read_config.c _load_script's callers).
    const sites = values.map((v) => (v.startsWith('/') ? v : `${dirOf(inp.mainFile)}/${v}`));
    const bad = sites.map(unchainable).find((w) => w !== null);
    if (bad) {
      warnings.push(`${key}: cannot write a chain wrapper: ${bad}; chain gdrgate's ${ours} into the site's script by hand`);
      changes.push({ key, action: 'keep', ...at(e), now, set: null, why: `not chained: ${bad}` });
      return;
    }
    wrappers.push({ hook, path: chain, text: chainText(hook, sites, ours, inp.release) });
    changes.push({ key, action: 'set', ...at(e), now, set: confLine(e.key, chain), why: `Slurm ${inp.release} takes one ${key}=: the wrapper ${chain} (below) runs ${sites.join(' ')} and then gdrgate's ${ours}` });
  }

  // slurmd starts HealthCheckProgram only with an interval, or HealthCheckNodeState=START_ONLY (25.11+) or
  // REBOOT_ONLY (26.05+) (slurmd.c run_script_health_check; an unknown word is ignored): the site's schedule is kept,
  // and where there is none the interval is offered, or a HealthCheckProgram line would do nothing.
  function healthSchedule(): void {
    const iv = last('HealthCheckInterval');
    const ns = last('HealthCheckNodeState');
    const key = 'HealthCheckInterval';
    const secs = iv && /^\d+$/.test(iv.value) ? Number(iv.value) : 0;
    const words = ns ? ns.value.split(',').map((w) => w.trim().toUpperCase()) : [];
    const once = (f.healthStartOnly && words.includes('START_ONLY')) || (f.healthRebootOnly && words.includes('REBOOT_ONLY'));
    const states = ns ? ` (${shown(ns)})` : '';
    if (secs > 0) changes.push({ key, action: 'keep', ...at(iv), now: [shown(iv!)], set: null, why: `the site's: slurmd starts HealthCheckProgram every ${secs} s${states}` });
    else if (once) changes.push({ key, action: 'keep', ...at(iv), now: iv ? [shown(iv)] : [], set: null, why: `the site's: slurmd starts HealthCheckProgram only ${f.healthRebootOnly && words.includes('REBOOT_ONLY') ? 'after a reboot slurmctld asked for' : 'as it starts'}${states}, no interval` });
    else {
      // 300 s, or more than the site's HealthCheckTimeout (26.05: read_config.c says an interval not above it is wrong).
      const to = last('HealthCheckTimeout');
      const timeout = to && /^\d+$/.test(to.value) ? Number(to.value) : 0;
      const every = Math.max(300, timeout + 60);
      const above = every > 300 ? `, 60 s more than the site's ${shown(to!)} (slurmd wants the interval above it)` : '';
      changes.push({
        key,
        action: 'optional',
        ...at(iv),
        now: iv ? [shown(iv)] : [],
        set: `${iv?.key ?? key}=${every}`,
        why: `without one slurmd never starts HealthCheckProgram (slurmd.c run_script_health_check): the HealthCheckProgram line alone would do nothing; ${every} s between runs${above}, on the nodes HealthCheckNodeState names (default ANY)`,
      });
    }
  }

  timeouts();
  function timeouts(): void {
    const pet = last('PrologEpilogTimeout');
    const num = (e: ConfEntry | undefined): number | null => (e && /^\d+$/.test(e.value) ? Number(e.value) : null);
    const why = `a hung script must not hold a node; gdrgate's Prolog ends within its deadlineMs (6 s), its Epilog within probes.budgetMs + probes.quiet.windowMs + the 2 s look for processes holding its devices + deadlineMs (28.25 s); the site's scripts run within the same bound`;
    if (!f.splitTimeouts || (!last('PrologTimeout') && !last('EpilogTimeout'))) {
      const v = num(pet);
      if (v !== null && v >= TIMEOUT_S) changes.push({ key: 'PrologEpilogTimeout', action: 'keep', ...at(pet), now: [shown(pet!)], set: null, why: `${v} s is enough: ${why}` });
      else changes.push({ key: 'PrologEpilogTimeout', action: pet ? 'set' : 'add', ...at(pet), now: pet ? [shown(pet)] : [], set: `${pet?.key ?? 'PrologEpilogTimeout'}=${TIMEOUT_S}`, why: pet ? `raised to ${TIMEOUT_S} s: ${why}` : `unset means Slurm waits forever: ${why}` });
      return;
    }
    // 25.05+: PrologTimeout / EpilogTimeout each override PrologEpilogTimeout for their side.
    for (const side of ['PrologTimeout', 'EpilogTimeout'] as const) {
      const own = last(side);
      const eff = own ?? pet;
      const v = num(eff);
      if (v !== null && v >= TIMEOUT_S) changes.push({ key: side, action: 'keep', ...at(eff), now: eff ? [shown(eff)] : [], set: null, why: `${v} s is enough${own ? '' : ' (from PrologEpilogTimeout)'}: ${why}` });
      else changes.push({ key: side, action: own ? 'set' : 'add', ...at(own), now: own ? [shown(own)] : eff ? [shown(eff)] : [], set: `${own?.key ?? side}=${TIMEOUT_S}`, why: `Slurm ${inp.release} bounds the ${side === 'PrologTimeout' ? 'Prolog' : 'Epilog'} by ${side} first: ${why}` });
    }
  }

  limits();
  function limits(): void {
    const exc = last('PropagateResourceLimitsExcept');
    const prl = last('PropagateResourceLimits');
    const why = 'jobs otherwise get the submitting shell\'s RLIMIT_MEMLOCK (often 64 KiB on login nodes) instead of slurmd\'s; RDMA registration needs it unlimited';
    const names = (v: string): string[] => v.split(',').map((t) => t.trim()).filter(Boolean);
    const isMemlock = (t: string): boolean => t === 'MEMLOCK' || t === 'RLIMIT_MEMLOCK';
    if (exc) {
      const t = names(exc.value);
      if (exc.value === 'ALL' || t.some(isMemlock)) changes.push({ key: 'PropagateResourceLimitsExcept', action: 'keep', ...at(exc), now: [shown(exc)], set: null, why: `MEMLOCK is not propagated already: ${why}` });
      else changes.push({ key: 'PropagateResourceLimitsExcept', action: 'set', ...at(exc), now: [shown(exc)], set: confLine(exc.key, exc.value === 'NONE' ? 'MEMLOCK' : [...t, 'MEMLOCK'].join(',')), why: `MEMLOCK added to the site's list: ${why}` });
      if (t.some((n) => isMemlock(n.toUpperCase()) && !isMemlock(n))) warnings.push(`PropagateResourceLimitsExcept: Slurm's limit names are upper case (${exc.value}): it refuses the file as written`);
      if (prl) warnings.push(`PropagateResourceLimits (${prl.file}:${prl.line}) is ignored while PropagateResourceLimitsExcept is set`);
      return;
    }
    if (prl && prl.value === 'NONE') {
      changes.push({ key: 'PropagateResourceLimits', action: 'keep', ...at(prl), now: [shown(prl)], set: null, why: `no limit is propagated: jobs get slurmd's RLIMIT_MEMLOCK (${why.split(';')[1]!.trim()})` });
      return;
    }
    if (prl && prl.value !== 'ALL') {
      const t = names(prl.value);
      const rest = t.filter((n) => !isMemlock(n));
      if (rest.length === t.length) changes.push({ key: 'PropagateResourceLimits', action: 'keep', ...at(prl), now: [shown(prl)], set: null, why: `MEMLOCK is not in the site's list, so it is not propagated: ${why}` });
      else changes.push({ key: 'PropagateResourceLimits', action: 'set', ...at(prl), now: [shown(prl)], set: confLine(prl.key, rest.length ? rest.join(',') : 'NONE'), why: `MEMLOCK taken out of the site's list: ${why}` });
      return;
    }
    if (prl) changes.push({ key: 'PropagateResourceLimits', action: 'remove', ...at(prl), now: [shown(prl)], set: null, why: 'ALL is the default; PropagateResourceLimitsExcept below says the same but MEMLOCK' });
    changes.push({ key: 'PropagateResourceLimitsExcept', action: 'add', file: prl?.file ?? inp.mainFile, line: null, now: [], set: 'PropagateResourceLimitsExcept=MEMLOCK', why });
  }

  return { changes, wrappers, warnings };
}

/** What pyxis does to a TaskProlog, in words (src/slurm/plugstack.ts says why; docs/task.md). */
function pyxisWarning(at: { readonly file: string; readonly line: number }, ours: string): string {
  return (
    `pyxis is loaded (${at.file}:${at.line}): a --container-image step's TaskProlog runs inside its container (pyxis enters it at task_init, ` +
    `which slurmstepd runs before the TaskProlog), and where ${ours}, bash and gdrgate's stateDir are not in the image Slurm cannot run it ` +
    `and ends every task of the step ("TaskProlog failed", src/slurmd/slurmstepd/task.c; NVIDIA/pyxis issues 83, 135 and 163; on Slurm ` +
    `24.11.0-24.11.6 and 25.05.0-25.05.1, which run it through slurmstepd itself, slurmstepd's libraries must be in the image too). Leave ` +
    `TaskProlog out on these nodes (the Prolog and Epilog are not affected), or mount what it needs into every container (enroot: a file in /etc/enroot/mounts.d)`
  );
}

const dirOf = (file: string): string => file.slice(0, file.lastIndexOf('/')) || '/';

const ADD_WHY: Record<Hook, string> = {
  prolog: 'the gate, before every job on each allocated node: a broken GPU↔RDMA path drains the node with a "gdrgate:" reason and requeues the job',
  epilog: 'after every job: removes gdrgate\'s per-job state and, with `probes` configured, samples bandwidth under a budget',
  taskprolog: 'the job\'s own view (memlock, RDMA and GPU devices) before each task; warns in the job\'s output',
  health: '',
};
