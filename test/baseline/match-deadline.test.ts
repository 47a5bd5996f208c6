// Choosing a node's class asks the run's deadline before each host pattern: a legal baseline holds up to 200,000
// automaton states of patterns, over a second's work against a long node name, and a Prolog past its deadline says
// where it was late instead of running on (DeadlineError: the policy's internal error, the job let through).
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import t from 'tap';
import { loadBaseline, selectClass } from '../../src/baseline/load.js';
import { compilePattern } from '../../src/baseline/match.js';
import { readNode } from '../../src/engine/evaluate.js';
import { Deadline } from '../../src/runner/deadline.js';
import { NODE_NAME_MAX } from '../../src/slurm/node-name.js';
import { baselineOf, HGX } from '../checks/_trees.js';
import { H200 } from '../helpers/paths.js';

/** Unanchored: every position of a name of letters starts it afresh and keeps its ~850 states live. */
const HEAVY = '/([a-z]{0,60}){7}q/';

async function heavyFile(dir: string): Promise<{ file: string; patterns: number }> {
  const cls = await baselineOf(HGX);
  const patterns = Math.floor((200_000 - compilePattern('*').states) / compilePattern(HEAVY).states);
  const file = path.join(dir, 'baseline.json');
  const match = Array.from({ length: patterns }, () => HEAVY);
  await writeFile(file, JSON.stringify({ version: 1, classes: [{ ...cls, name: 'heavy', match }, { ...cls, name: 'real', match: ['*'] }] }));
  return { file, patterns };
}

t.test('a baseline at its limit of pattern states, a 255-character name: the deadline is asked between patterns', async (t) => {
  const { file, patterns } = await heavyFile(t.testdir());
  t.equal(patterns, 237, 'patterns of 842 states each up to the 200,000 a file may hold');
  const b = await loadBaseline(file); // legal: it loads
  const node = 'a'.repeat(NODE_NAME_MAX);
  // The whole file's work for this name (~285,000 states visited a pattern, 68 million in all): well past 20 ms on any machine.
  const d = new Deadline(20);
  let err: unknown = null;
  try {
    selectClass(b, node, file, d);
  } catch (e) {
    err = e;
  }
  t.equal((err as Error | null)?.name, 'DeadlineError', 'late: a DeadlineError, not a class');
  t.equal((err as Error).message, `deadline of 20 ms exceeded choosing the baseline class of node ${JSON.stringify('a'.repeat(64))} in ${file}`);
  // Without a deadline (compare, by hand), or with time enough, the same file chooses the class behind the patterns.
  t.equal(selectClass(b, node, file).name, 'real');
  t.equal(selectClass(b, 'gpu001', file, new Deadline(60_000)).name, 'real');
});

/** A deadline that keeps the phases that asked it (and throws as any does). */
class Asked extends Deadline {
  readonly where: string[] = [];
  override check(where: string): void {
    this.where.push(where);
    super.check(where);
  }
}

t.test('a run with a deadline (the Prolog, the health check, the Epilog) asks it while choosing the class', async (t) => {
  const file = path.join(t.testdir(), 'baseline.json');
  const cls = await baselineOf(HGX);
  await writeFile(file, JSON.stringify({ version: 1, classes: [{ ...cls, name: 'other', match: ['cpu*', '!cpu9'] }, { ...cls, name: 'real', match: ['gpu*'] }] }));
  for (const [node, want] of [['gpu001', 'real'], ['cpu1', 'other']] as const) {
    const d = new Asked(60_000);
    const read = await readNode({ root: H200, baseline: file, node, trust: [], deadline: d });
    t.equal(read.baseline?.cls.name, want, `node ${node}: its class`);
    // gpu001: cpu* (no), then gpu*; cpu1: cpu* (yes), then !cpu9 (not negated away).
    t.same(d.where.filter((w) => w.startsWith('choosing')), Array(2).fill(`choosing the baseline class of node "${node}" in ${file}`), `node ${node}: asked before each pattern tried`);
  }
});
