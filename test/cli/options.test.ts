// Every option of every command that takes a value refuses a missing, empty, doubled or malformed value (exit 2
// through UsageError), found by reading the command table itself (src/cli/commands.ts), so a new option is covered.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import ts from 'typescript';
import { main } from '../../src/cli/commands.js';
import { amountValue, countValue, durationValue, listValue, textValue } from '../../src/cli/options.js';
import { cli } from '../helpers/cli.js';
import { REPO } from '../helpers/paths.js';

type Kind = 'text' | 'list' | 'ids' | 'count' | 'amount' | 'word' | 'boolean' | 'choices' | 'duration';
interface Opt {
  readonly command: readonly string[];
  readonly name: string;
  readonly kind: Kind;
  readonly demanded: boolean;
  readonly args: readonly string[];
  /** Where it is written: positionals come in this order. */
  readonly at: number;
}

const FILE = path.join(REPO, 'src/cli/commands.ts');
const parse = (file: string): ts.SourceFile => ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
const source = parse(FILE);
const consts = new Map<string, ts.Expression>();
/** Flag tables and builders commands.ts imports from modules of their own (`.options(FLEET_REPORT_FLAGS)`, `fleetReportArgs`). */
const TABLES = ['src/cli/fleet-flags.ts'];
/** The command path of the builder being walked when it lies in another module (its nodes have no `sub(…)` above them). */
let builderOf: string[] | null = null;

const callName = (n: ts.Node): string | null =>
  ts.isCallExpression(n) && ts.isPropertyAccessExpression(n.expression) ? n.expression.name.text : ts.isCallExpression(n) && ts.isIdentifier(n.expression) ? n.expression.text : null;
const literal = (n: ts.Node | undefined): string | null => (n && (ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n)) ? n.text : null);

/** The command path of a node: the first word of each `.command(name, ...)` whose arguments hold it. */
function commandOf(n: ts.Node): string[] {
  if (builderOf) return builderOf;
  const names: string[] = [];
  for (let p: ts.Node | undefined = n.parent, child: ts.Node = n; p; child = p, p = p.parent) {
    // `.command(name, …)`, or `sub(name, …)` inside a group of subcommands.
    if ((callName(p) === 'command' || callName(p) === 'sub') && ts.isCallExpression(p) && p.arguments.includes(child as ts.Expression)) {
      const first = p.arguments[0]!;
      const name = literal(first) ?? (ts.isArrayLiteralExpression(first) ? literal(first.elements[0]) : null);
      if (name) names.unshift(name.split(' ')[0]!);
    }
  }
  return names;
}

function kindOf(e: ts.Expression): { kind: Kind; demanded: boolean; args: string[] } | null {
  if (ts.isIdentifier(e) && consts.has(e.text)) return kindOf(consts.get(e.text)!);
  const fn = callName(e);
  if (fn === 'flag') return { kind: 'boolean', demanded: false, args: [] };
  if (fn && ts.isCallExpression(e) && ['text', 'list', 'ids', 'count', 'amount', 'duration', 'word'].includes(fn)) {
    const obj = e.arguments.find(ts.isObjectLiteralExpression);
    const demanded = fn === 'word' || (obj?.properties.some((p) => p.name?.getText() === 'demandOption') ?? false);
    return { kind: fn as Kind, demanded, args: e.arguments.map((a) => a.getText()) };
  }
  if (ts.isAsExpression(e)) return kindOf(e.expression);
  if (ts.isObjectLiteralExpression(e)) {
    const props = new Map(e.properties.filter(ts.isPropertyAssignment).map((p) => [p.name.getText(), p.initializer.getText()]));
    if (props.get('type') === "'boolean'") return { kind: 'boolean', demanded: false, args: [] };
    if (props.has('choices')) return { kind: 'choices', demanded: false, args: [] };
    // `{ ...json, describe }`: the shape of what it spreads.
    const spread = e.properties.find(ts.isSpreadAssignment);
    if (spread && !props.has('type')) return kindOf(spread.expression);
  }
  return null;
}

const opts: Opt[] = [];
const unshaped: string[] = [];
const keep = (n: ts.Node): void => {
  if (ts.isVariableDeclaration(n) && ts.isIdentifier(n.name) && n.initializer) consts.set(n.name.text, n.initializer);
  ts.forEachChild(n, keep);
};
for (const f of TABLES) keep(parse(path.join(REPO, f)));
/** A table of options by name: `{ json: flag(…), html: text('--html', …) }`, or `texts({ conf: { describe } })` (each a text option). */
function table(n: ts.CallExpression, e: ts.Expression): void {
  const at = n.getStart();
  if (ts.isIdentifier(e) && consts.has(e.text)) return table(n, consts.get(e.text)!);
  if (ts.isAsExpression(e)) return table(n, e.expression);
  const texts = callName(e) === 'texts' && ts.isCallExpression(e) ? e.arguments[0] : undefined;
  const obj = texts ?? e;
  if (!ts.isObjectLiteralExpression(obj)) return void unshaped.push(`${commandOf(n).join(' ')} .options(${e.getText().slice(0, 40)})`);
  for (const p of obj.properties.filter(ts.isPropertyAssignment)) {
    const name = literal(p.name) ?? p.name.getText();
    const demanded = ts.isObjectLiteralExpression(p.initializer) && p.initializer.properties.some((q) => q.name?.getText() === 'demandOption');
    const k = texts ? { kind: 'text' as const, demanded, args: [] } : kindOf(p.initializer);
    if (!k) unshaped.push(`${commandOf(n).join(' ')} --${name}`);
    else opts.push({ command: commandOf(n), name, ...k, at });
  }
}
(function walk(n: ts.Node): void {
  if (ts.isVariableDeclaration(n) && ts.isIdentifier(n.name) && n.initializer) consts.set(n.name.text, n.initializer);
  const fn = callName(n);
  // A builder named by its identifier (`sub('report <dir>', …, fleetReportArgs, …)`): its options belong to that command.
  if ((fn === 'sub' || fn === 'command') && ts.isCallExpression(n) && !builderOf)
    for (const a of n.arguments.filter(ts.isIdentifier)) {
      const f = consts.get(a.text);
      if (!f || !ts.isArrowFunction(f)) continue;
      builderOf = commandOf(a);
      walk(f.body);
      builderOf = null;
    }
  if (fn === 'options' && ts.isCallExpression(n) && n.arguments.length === 1) table(n, n.arguments[0]!);
  if ((fn === 'option' || fn === 'positional') && ts.isCallExpression(n) && n.arguments.length === 2) {
    const name = literal(n.arguments[0])!;
    const k = kindOf(n.arguments[1]!);
    if (!k) unshaped.push(`${commandOf(n).join(' ')} --${name}`);
    else opts.push({ command: commandOf(n), name: fn === 'positional' ? `<${name}>` : name, ...k, at: n.arguments[0]!.getStart() });
  }
  ts.forEachChild(n, walk);
})(source);

/** What `main(argv)` refused with: its message, or a note that it did not refuse. */
async function refusal(argv: string[]): Promise<string> {
  try {
    await main(argv);
    return 'not refused';
  } catch (e) {
    return `${(e as Error).name}: ${(e as Error).message}`;
  }
}

t.test('every option of every command is built by src/cli/options.ts, or is a boolean or a choice', async (t) => {
  t.same(unshaped, []);
  t.ok(opts.length >= 50, `found ${opts.length} options`);
  t.same(
    [...new Set(opts.map((o) => o.command.join(' ')))].sort(),
    ['agent', 'baseline capture', 'baseline validate', 'check', 'compare', 'drill', 'drill run', 'drill start', 'epilog', 'fleet collect', 'fleet report', 'prolog', 'resume', 'samples', 'slurm-config', 'snapshot', 'startup-snapshot', 'task', 'topo'],
  );
});

/** The command line that reaches `o` with every other required value given. */
function line(o: Opt, value: string[]): string[] {
  const same = opts.filter((p) => p.command.join(' ') === o.command.join(' ') || (p.command.length < o.command.length && o.command.join(' ').startsWith(p.command.join(' '))));
  const positionals = same.filter((p) => p.kind === 'word').sort((x, y) => x.at - y.at).map((p) => (p === o ? value : ['x']));
  const demanded = same.filter((p) => p.demanded && p.kind !== 'word' && p !== o).flatMap((p) => [`--${p.name}=x`]);
  return [...o.command, ...positionals.flat(), ...demanded, ...(o.kind === 'word' ? [] : value)];
}

const CASES: Readonly<Record<Exclude<Kind, 'boolean' | 'choices'>, (o: Opt) => [string[], string][]>> = {
  text: (o) => [
    [[`--${o.name}`], `UsageError: Not enough arguments following: ${o.name}`],
    [[`--${o.name}=`], `UsageError: --${o.name}: needs a value`],
    [[`--${o.name}`, 'a', `--${o.name}`, 'b'], `UsageError: --${o.name}: given 2 times; give it once`],
  ],
  list: (o) => [
    [[`--${o.name}`], `UsageError: --${o.name}: needs a value`],
    [[`--${o.name}=`], `UsageError: --${o.name}: needs a value`],
  ],
  ids: (o) => [
    [[`--${o.name}`], `UsageError: --${o.name}: needs a value`],
    [[`--${o.name}=`], `UsageError: --${o.name}: needs a value`],
    [[`--${o.name}= , `], `UsageError: --${o.name}: needs a value`],
  ],
  word: (o) => [[[''], `UsageError: ${o.name}: needs a value`]],
  count: (o) => {
    const [, min, max] = o.args.map((a) => Function(`return ${a}`)() as number);
    return ['abc', '0', '-3', '2.5', '1e3', '0x10', ' 5', String(max! + 1)].map((v) => [[`--${o.name}=${v}`], `UsageError: --${o.name} ${v}: want a whole number from ${min} to ${max}`]);
  },
  amount: (o) => {
    const max = Function(`return ${o.args[1]}`)() as number;
    return ['abc', '0', '-3', '1e3', '.5', 'NaN', 'Infinity', String(max + 1)].map((v) => [[`--${o.name}=${v}`], `UsageError: --${o.name} ${v}: want a number above 0 and at most ${max}`]);
  },
  duration: (o) => {
    const days = (Function(`return ${o.args[1]}`)() as number) / 86_400_000;
    return ['abc', '0d', '0s', '-3d', '1.5d', '7', '7w', '7D', ' 7d', '1e3s', `${days + 1}d`].map((v) => [[`--${o.name}=${v}`], `UsageError: --${o.name} ${v}: want a duration above 0 and at most ${days}d, a whole number and a unit (90m, 24h, 7d)`]);
  },
};

t.test('each option refuses what it cannot use, exit 2 (UsageError), before the command runs', async (t) => {
  for (const o of opts) {
    if (o.kind === 'boolean' || o.kind === 'choices') continue;
    for (const [value, want] of CASES[o.kind](o)) {
      const argv = line(o, value);
      const got = await refusal(argv);
      if (got !== want) t.comment(JSON.stringify([got, want]));
      t.equal(got, want, `gdrgate ${argv.map((a) => JSON.stringify(a)).join(' ')}`);
    }
  }
  // The prolog's fast parser hands anything it does not know to yargs: the same refusals for health.
  t.equal(await refusal(['health', '--root=']), 'UsageError: --root: needs a value');
});

t.test('the coercions on their own: what they accept', async (t) => {
  t.equal(textValue('--x')('-'), '-', 'a dash is a value (--out -)');
  t.equal(countValue('--x', 1, 10)('10'), 10);
  t.equal(countValue('--x', 1, 10)('007'), 7);
  t.equal(amountValue('--x', 60)('0.5'), 0.5);
  t.equal(amountValue('--x', 60)('60'), 60);
  t.same(['30s', '90m', '36h', '7d', '1d'].map(durationValue('--x', 86_400_000 * 7)), [30_000, 5_400_000, 129_600_000, 604_800_000, 86_400_000]);
  t.same(listValue('--x')(['a', 'b']), ['a', 'b']);
  t.same(listValue('--x')('a'), ['a']);
});

t.test('as a user types them: exit 2 and one line on stderr, nothing on stdout', async (t) => {
  const cases: [string[], string][] = [
    [['check', '--root'], 'gdrgate: Not enough arguments following: root\n'],
    [['check', '--root', '--json'], 'gdrgate: Not enough arguments following: root\n'],
    [['samples', '--window', 'abc'], 'gdrgate: --window abc: want a whole number from 1 to 1000000\n'],
    [['samples', '--window=-3'], 'gdrgate: --window -3: want a whole number from 1 to 1000000\n'],
    [['samples', '--window', '0'], 'gdrgate: --window 0: want a whole number from 1 to 1000000\n'],
  ];
  for (const [argv, stderr] of cases) {
    const r = cli(argv);
    t.same(r, { code: 2, stdout: '', stderr }, argv.join(' '));
  }
});
