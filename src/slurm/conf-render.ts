// The slurm-config plan as text (a diff-like listing: what is there, what to write, why) and as JSON
// (schemas/slurm-config.schema.json). Pure: renders what conf-merge.ts decided.
import type { Change, Plan } from './conf-merge.js';

export interface PlanContext {
  readonly conf: string;
  readonly files: readonly string[];
  /** The file read is slurmd's cached copy (configless): the one to edit is on the slurmctld host. */
  readonly configless: boolean;
  readonly release: string;
  /** How the release was found: `--slurm-version`, `/usr/bin/sinfo --version: slurm-wlm 22.05.8`, or an assumption. */
  readonly releaseFrom: string;
  readonly problems: readonly string[];
}

function where(c: Change): string {
  const line = c.line === null ? '' : ` line ${c.line}`;
  switch (c.action) {
    case 'keep':
      return c.now.length ? `keep (${c.file}${line})` : 'keep';
    case 'set':
      return `change ${c.file}${line}`;
    case 'add':
      return c.line === null ? `add to ${c.file}` : `add after ${c.file}${line}`;
    case 'remove':
      return `remove ${c.file}${line}`;
    case 'optional':
      return c.line === null ? `optional, add to ${c.file}` : `optional, change ${c.file}${line}`;
  }
}

export function renderText(ctx: PlanContext, plan: Plan): string {
  const out: string[] = [];
  const more = ctx.files.length - 1;
  out.push(`gdrgate slurm-config: ${ctx.conf}${more > 0 ? ` (and ${more} included: ${ctx.files.slice(1).join(', ')})` : ''}`);
  out.push(`Slurm ${ctx.release} (${ctx.releaseFrom})`);
  if (ctx.configless)
    out.push('configless: this is the copy slurmd fetched from slurmctld; make the changes in the slurm.conf on the slurmctld host (SlurmctldParameters=enable_configless), which the nodes fetch again at `scontrol reconfigure`.');
  out.push('gdrgate never writes slurm.conf: make these changes in the slurm.conf every node reads, install any wrapper listed below on every node, then run `scontrol reconfigure`.');
  for (const c of plan.changes) {
    out.push('', `${c.key}: ${where(c)}`);
    if (c.action === 'keep') out.push(...c.now.map((l) => `  ${l}`));
    else if (c.action === 'remove') out.push(...c.now.map((l) => `- ${l}`));
    else if (c.action === 'set') out.push(...c.now.slice(-1).map((l) => `- ${l}`), `+ ${c.set}`);
    else if (c.action === 'optional') out.push(...(c.line === null ? [] : c.now.slice(-1).map((l) => `- ${l}`)), `+ ${c.set}`);
    else out.push(...c.now.map((l) => `  ${l}`), `+ ${c.set}`);
    out.push(`  why: ${c.why}`);
  }
  for (const w of plan.wrappers) {
    out.push('', `=== ${w.path} (a new file: install it on every node, owner root, mode 0755) ===`, w.text.replace(/\n$/, ''), `=== end of ${w.path} ===`);
  }
  const warn = [...ctx.problems, ...plan.warnings];
  if (warn.length) out.push('', ...warn.map((w) => `warning: ${w}`));
  return out.join('\n') + '\n';
}

export function renderJson(ctx: PlanContext, plan: Plan, version: string): unknown {
  return {
    tool: 'gdrgate',
    command: 'slurm-config',
    version,
    conf: { path: ctx.conf, files: ctx.files, configless: ctx.configless },
    slurm: { release: ctx.release, from: ctx.releaseFrom },
    changes: plan.changes.map((c) => ({ key: c.key, action: c.action, file: c.file, line: c.line, now: c.now, set: c.set, why: c.why })),
    wrappers: plan.wrappers.map((w) => ({ hook: w.hook, path: w.path, mode: '0755', text: w.text })),
    warnings: [...ctx.problems, ...plan.warnings],
  };
}
