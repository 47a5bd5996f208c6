// What runHook does with an error after the verdict is decided (src/engine/hook.ts): logged where the log can still be
// written, and never thrown, so that the verdict's exit code stands (an exception at the top level is exit 3).
import { log } from '../log.js';
import type { AnyFinding } from '../model/finding.js';
import { escapeControls } from '../report/escape.js';
import type { Decision } from '../runner/policy.js';
import type { HookRun, HookSpec, Judgement } from './hook.js';

export function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** An error after the verdict (`step`): logged where the log can still be written, else dropped; never thrown. */
export async function afterwards(step: string, e: unknown): Promise<void> {
  try {
    (await log()).error({ step, err: e instanceof Error ? e : { message: String(e) } }, `gdrgate: internal error after the verdict (${step}); the verdict stands`);
  } catch {
    // The log itself broke: the summary line and the exit code still say the verdict.
  }
}

/** The hook's report lines; one that cannot be rendered is one line saying so (the summary line follows it anyway). */
export function rendered<W, F extends AnyFinding>(spec: HookSpec<W, F>, run: HookRun, j: Judgement<W, F>, d: Decision): string[] {
  try {
    return [...(spec.render?.(run, j, d) ?? [])];
  } catch (e) {
    void afterwards('render', e);
    return [escapeControls(`internal-error: the report could not be rendered: ${message(e)}`)];
  }
}

