// Loads a baseline: JSON parse, ajv validation against schemas/baseline.schema.json, class selection by host name.
import type { Baseline, BaselineClass } from '../model/baseline.js';
import { ConfigError } from '../errors.js';
import { BASELINE_LIMITS, overLimits } from './limits.js';
import { compilePattern, matchesAll, type HostPattern } from './match.js';
import { validatorFor } from '../schema.js';
import { readJsonFile } from '../host/json-file.js';
import { canonicalJson } from '../samples/sample.js';
import type { Deadline } from '../runner/deadline.js';

export { readJsonFile };

/** Validates and checks what a schema cannot: unique class names, compilable patterns. */
export async function loadBaseline(file: string): Promise<Baseline> {
  return checkBaseline(await readJsonFile(file, 'baseline'), file);
}

/** What loadBaseline and `baseline validate` check, on parsed data named `file`: a capture runs it before it writes. */
export async function checkBaseline(data: unknown, file: string): Promise<Baseline> {
  const v = await validatorFor('baseline');
  const errs = v(data);
  if (errs.length) throw new ConfigError(`${file}: ${errs.slice(0, 5).join('; ')}${errs.length > 5 ? `; +${errs.length - 5} more` : ''}`);
  const b = data as Baseline;
  const over = overLimits(b, 0); // the size was capped as the file was read (json-file.ts, the same number)
  if (over.length) throw new ConfigError(`${file}: ${over.join('; ')}`);
  const seen = new Set<string>();
  let states = 0;
  b.classes.forEach((c, i) => {
    if (seen.has(c.name)) throw new ConfigError(`${file}: /classes/${i}/name: duplicate class ${JSON.stringify(c.name)}`);
    seen.add(c.name);
    const compiled = c.match.map((p, j) => {
      let hp: HostPattern;
      try {
        hp = compilePattern(p);
      } catch (e) {
        throw new ConfigError(`${file}: /classes/${i}/match/${j}: ${(e as Error).message}`);
      }
      states += hp.states;
      if (states > BASELINE_LIMITS.patternStates)
        throw new ConfigError(`${file}: /classes/${i}/match/${j}: the host patterns up to here make ${states} automaton states, more than the ${BASELINE_LIMITS.patternStates} a baseline may hold in all (every Prolog runs them)`);
      return hp;
    });
    COMPILED.set(c, compiled);
    // One entry per thing judged: a second entry for the same device, pair or probe path would be judged as well
    // (a GPU's BDF again with role "nic": "NIC missing"), or one of the two silently win.
    unique(file, `/classes/${i}/devices`, c.devices, (d) => d.bdf, 'device');
    unique(file, `/classes/${i}/paths`, c.paths, (p) => `${p.gpu} ${p.nic}`, 'GPU↔NIC pair');
    unique(file, `/classes/${i}/payload/devices`, c.payload?.devices ?? [], (d) => d.bdf, 'device');
    // A recipe is known by its canonical JSON, as the epilog knows it (recipeHash): its keys in another order are the same recipe.
    unique(file, `/classes/${i}/probes`, c.probes ?? [], (e) => canonicalJson([e.probe, e.gpu, e.nic, e.direction, e.recipe]), 'probe path and recipe');
    // A pair naming a device the class does not have is judged by nothing (the check skips a pair whose device is
    // not on the node, leaving that to device-inventory, which knows only the class's devices): a typo turns the
    // real pair's check off in silence.
    const gpus = new Set(c.devices.filter((d) => d.role === 'gpu').map((d) => d.bdf));
    const nics = new Set(c.devices.filter((d) => d.role === 'nic').map((d) => d.name));
    c.paths.forEach((p, j) => {
      if (!gpus.has(p.gpu)) throw new ConfigError(`${file}: /classes/${i}/paths/${j}/gpu: ${p.gpu} is not a GPU of class ${JSON.stringify(c.name)} (its devices of role gpu: ${[...gpus].join(', ') || 'none'})`);
      if (!nics.has(p.nic)) throw new ConfigError(`${file}: /classes/${i}/paths/${j}/nic: ${p.nic} is not an RDMA adapter of class ${JSON.stringify(c.name)} (its devices of role nic: ${[...nics].join(', ') || 'none'})`);
    });
  });
  return b;
}

function unique<T>(file: string, at: string, items: readonly T[], key: (x: T) => string, what: string): void {
  const seen = new Map<string, number>();
  items.forEach((x, j) => {
    const k = key(x);
    const first = seen.get(k);
    if (first !== undefined) throw new ConfigError(`${file}: ${at}/${j}: duplicate ${what} ${k.startsWith('[') ? '' : `${k} `}(as ${at}/${first})`);
    seen.set(k, j);
  });
}

/** Each checked class's patterns as checkBaseline compiled them: a Prolog compiles them once, not twice. */
const COMPILED = new WeakMap<BaselineClass, readonly HostPattern[]>();

/**
 * The first class whose patterns match the node; none is a configuration error, never a drain. With the run's
 * deadline, asked before each pattern: a legal file may hold 200,000 states of patterns, over a second's work for a
 * long node name, and a run past its deadline could not tell (DeadlineError), whatever the rest of the file says.
 */
export function selectClass(b: Baseline, node: string, file: string, deadline?: Deadline): BaselineClass {
  const ask = deadline ? () => deadline.check(`choosing the baseline class of node ${JSON.stringify(node.slice(0, 64))} in ${file}`) : undefined;
  const c = b.classes.find((k) => matchesAll(COMPILED.get(k) ?? k.match.map(compilePattern), node, ask));
  if (!c) throw new ConfigError(`${file}: no class matches node ${JSON.stringify(node)} (classes: ${b.classes.map((k) => `${k.name} [${k.match.join(' ')}]`).join(', ')})`);
  return c;
}

export async function loadBaselineFor(file: string, node: string, deadline?: Deadline): Promise<{ baseline: Baseline; cls: BaselineClass }> {
  const baseline = await loadBaseline(file);
  return { baseline, cls: selectClass(baseline, node, file, deadline) };
}
