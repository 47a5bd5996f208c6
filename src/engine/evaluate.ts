// The one pipeline every command judges a node with (DESIGN §2, Engine): trust the files → open the Host → gather
// the inventory → select the class → run the checks → the outcome. Commands differ only in what they do with it.
import { nul } from '../model/fact.js';
import { loadBaselineFor } from '../baseline/load.js';
import type { Host } from '../host/host.js';
import { openHost } from '../host/open.js';
import { requireTrusted } from '../host/trust.js';
import { buildInventory } from '../inventory/build.js';
import type { AerHistory } from '../model/aer.js';
import type { Baseline, BaselineClass } from '../model/baseline.js';
import type { CheckId, Finding } from '../model/finding.js';
import type { Inventory } from '../model/inventory.js';
import type { Deadline } from '../runner/deadline.js';
import { outcomeOf, type Outcome } from '../runner/policy.js';
import { runChecks, runChecksPaced, sortFindings } from '../runner/run.js';
import { CHECK_IDS } from '../checks/index.js';

export interface ReadInput {
  /** A directory or a snapshot file; '/' on a live node. */
  readonly root: string;
  /** The baseline file; null: no class, universal rules only (`gdrgate check` without --baseline). */
  readonly baseline: string | null;
  /** The node name that selects the class; null: the inventory's own host name (a capture's). */
  readonly node: string | null;
  /** Files this run trusts as root (config.ts trustedFiles); refused unless root's alone. Empty: a run by hand. */
  readonly trust: readonly string[];
  readonly pidFiles?: readonly string[] | undefined;
  /** Slurm's gres.conf, when the config names one (else slurmd's: inventory/gres-path.ts). */
  readonly gresConf?: string | undefined;
  /** The hook's environment (its SLURM_CONF places slurmd's gres.conf); none: the places alone. */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined;
  /** On a live root, the process whose limits and place under slurmd are judged (the agent's client). */
  readonly selfPid?: number | undefined;
  /** The root's Host, opened already (the Epilog's look at Slurm's cgroup tree opened it first); none: opened here. */
  readonly opened?: Promise<Host> | undefined;
  /** A Host over the opened one (gdrgate drill's overlay), before anything is read. */
  readonly wrap?: ((h: Host) => Host) | undefined;
  /** The run's deadline: every read asks it (a read past it throws), so work the race abandoned stops. */
  readonly deadline?: Deadline | undefined;
}

export interface NodeRead {
  readonly host: Host;
  readonly inv: Inventory;
  readonly baseline: { readonly file: string; readonly doc: Baseline; readonly cls: BaselineClass } | null;
}

export interface Evaluation extends NodeRead {
  readonly findings: readonly Finding[];
  readonly outcome: Outcome;
}

/** Trust, Host, inventory and class: what the checks and the epilog's probes both start from. */
export async function readNode(i: ReadInput): Promise<NodeRead> {
  requireTrusted(i.trust);
  const opened = await (i.opened ?? openHost(i.root));
  const host = i.wrap ? i.wrap(opened) : opened;
  const file = i.baseline;
  const pid = i.root === '/' ? i.selfPid : undefined;
  const gathering = buildInventory(host, { ...(i.pidFiles ? { slurmdPidFiles: i.pidFiles } : {}), ...(i.gresConf ? { gresConf: i.gresConf } : {}), ...(i.env ? { env: i.env } : {}), ...(pid !== undefined ? { selfPid: pid } : {}), ...(i.deadline ? { deadline: i.deadline } : {}) });
  // The node name is known up front (Slurm's); only a capture without one waits for the inventory's host name.
  if (file === null) return { host, inv: await gathering, baseline: null };
  if (i.node !== null) {
    const [inv, sel] = await Promise.all([gathering, loadBaselineFor(file, i.node, i.deadline)]);
    return { host, inv, baseline: { file, doc: sel.baseline, cls: sel.cls } };
  }
  const inv = await gathering;
  const sel = await loadBaselineFor(file, nul(inv.hostname) ?? '', i.deadline);
  return { host, inv, baseline: { file, doc: sel.baseline, cls: sel.cls } };
}

/** The whole judgement: readNode, then the selected checks (a turn of the event loop and the deadline between them), worst first. */
export async function evaluateNode(i: ReadInput & { readonly checks: readonly CheckId[]; readonly aerHistory?: AerHistory | null }): Promise<Evaluation> {
  const read = await readNode(i);
  const findings = sortFindings(await runChecksPaced({ inv: read.inv, baseline: read.baseline?.cls ?? null, aerHistory: i.aerHistory ?? null, node: i.node }, i.checks, i.deadline));
  return { ...read, findings, outcome: outcomeOf(findings) };
}

/** Every check on an inventory already read, without a baseline (the universal rules), worst first. */
export function judgeUniversal(inv: Inventory, node: string | null): Finding[] {
  return sortFindings(runChecks({ inv, baseline: null, node }, CHECK_IDS));
}
