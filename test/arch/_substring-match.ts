// Finds tap assertions whose pattern compares a string as a substring: `t.match(x, 'ok')` passes for 'not ok'.
// tcompare's match family (match, matchOnly, matchStrict, matchOnlyStrict, and throws/rejects/resolveMatch, which
// match an error or a value the same way) tests a string pattern with indexOf. Exact values use equal/same/strictSame,
// patterns an anchored RegExp. Also finds an array literal in a pattern that match, matchStrict, has or hasStrict
// compares as a prefix: `[]` passes for any array, `[/a/]` for ['a', 'more'] (matchOnly/matchOnlyStrict do not).
// And a null as an object's value in a pattern of match, has, resolveMatch, throws or rejects, which also passes when
// the key is missing: `t.match({}, { gpu: null })` passes (matchStrict, hasStrict and matchOnly fail it).
import ts from 'typescript';

/** Assertions whose pattern (argument 2) is compared with tcompare's match. */
const MATCHERS = new Set(['match', 'matchOnly', 'matchStrict', 'matchOnlyStrict', 'resolveMatch']);
/** Assertions that take a pattern only as an object (a string there is the message): throws(fn, { message: 'x' }). */
const ERROR_MATCHERS = new Set(['throws', 'rejects']);
/** Assertions whose pattern compares an array as a prefix of the value's array (strings by ===, for has/hasStrict). */
const PREFIX_MATCHERS = new Set(['match', 'matchStrict', 'resolveMatch', 'throws', 'rejects', 'has', 'hasStrict']);

/** Assertions whose pattern's `key: null` passes for an object without the key (matchStrict/hasStrict/matchOnly fail it). */
const NULL_MATCHERS = new Set(['match', 'has', 'resolveMatch', 'throws', 'rejects']);

export interface Finding {
  readonly line: number;
  readonly text: string;
  readonly why: string;
}

/** What a rule finds at one node of a pattern (`asValue`: it is an object's value), or null to look inside it. */
type Hit = (e: ts.Expression, asValue: boolean) => string | null;

function skipWrappers(e: ts.Expression): ts.Expression {
  while (ts.isParenthesizedExpression(e) || ts.isAsExpression(e) || ts.isSatisfiesExpression(e)) e = e.expression;
  return e;
}

/**
 * Where `hit` finds something in pattern `e`, or null: the pattern itself, a const of this file it names, an object's
 * values and (`intoArrays`) an array's items, as far down as they go; the answer says the way there.
 */
function find(e: ts.Expression, consts: ReadonlyMap<string, ts.Expression>, hit: Hit, intoArrays: boolean, asValue = false, seen: Set<string> = new Set()): string | null {
  const x = skipWrappers(e);
  const here = hit(x, asValue);
  if (here) return here;
  if (ts.isIdentifier(x) && consts.has(x.text) && !seen.has(x.text)) {
    seen.add(x.text);
    const r = find(consts.get(x.text)!, consts, hit, intoArrays, asValue, seen);
    return r ? `${x.text}, ${r}` : null;
  }
  if (intoArrays && ts.isArrayLiteralExpression(x)) {
    for (const el of x.elements) {
      const r = ts.isSpreadElement(el) ? null : find(el, consts, hit, intoArrays, false, seen);
      if (r) return r;
    }
  }
  if (ts.isObjectLiteralExpression(x)) {
    for (const p of x.properties) {
      const v = ts.isPropertyAssignment(p) ? p.initializer : ts.isShorthandPropertyAssignment(p) ? p.name : null;
      const r = v ? find(v, consts, hit, intoArrays, true, seen) : null;
      if (r) return `${p.name?.getText() ?? '…'}: ${r}`;
    }
  }
  return null;
}

/** A string leaf: a literal or a template, anywhere in the pattern. */
const stringLeaf = (e: ts.Expression, consts: ReadonlyMap<string, ts.Expression>): string | null =>
  find(e, consts, (x) => (ts.isStringLiteral(x) || ts.isNoSubstitutionTemplateLiteral(x) || ts.isTemplateExpression(x) ? `a string ${x.getText().slice(0, 40)}` : null), true);

/** An array literal: the pattern itself or an object's value (a prefix of the value's array passes). */
const prefixArray = (e: ts.Expression, consts: ReadonlyMap<string, ts.Expression>): string | null =>
  find(e, consts, (x) => (ts.isArrayLiteralExpression(x) ? (x.elements.length === 0 ? 'an empty array [] (matches any array)' : `an array of ${x.elements.length} (a prefix: more items pass)`) : null), false);

/** A `key: null`: an object's value, nested in objects or arrays. */
const nullLeaf = (e: ts.Expression, consts: ReadonlyMap<string, ts.Expression>): string | null =>
  find(e, consts, (x, asValue) => (asValue && x.kind === ts.SyntaxKind.NullKeyword ? 'null (passes when the key is missing too)' : null), true);

/** The substring matches, prefix arrays and null leaves in one test file's source. */
export function substringMatches(file: string, text: string): Finding[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const consts = new Map<string, ts.Expression>();
  const found: Finding[] = [];
  const visit = (n: ts.Node): void => {
    if (ts.isVariableDeclaration(n) && ts.isIdentifier(n.name) && n.initializer && ts.isVariableDeclarationList(n.parent) && n.parent.flags & ts.NodeFlags.Const) {
      consts.set(n.name.text, n.initializer);
    }
    if (ts.isCallExpression(n) && ts.isPropertyAccessExpression(n.expression) && n.arguments.length >= 2) {
      const name = n.expression.name.text;
      const pattern = n.arguments[1]!;
      const objectOnly = ERROR_MATCHERS.has(name);
      const literal = ts.isObjectLiteralExpression(pattern) || ts.isArrayLiteralExpression(pattern);
      const at = { line: sf.getLineAndCharacterOfPosition(n.getStart()).line + 1, text: n.getText().split('\n')[0]!.slice(0, 120) };
      if (MATCHERS.has(name) || (objectOnly && literal)) {
        const leaf = stringLeaf(pattern, consts);
        if (leaf) found.push({ ...at, why: leaf });
      }
      if (PREFIX_MATCHERS.has(name) && (!objectOnly || literal)) {
        const arr = prefixArray(pattern, consts);
        if (arr) found.push({ ...at, why: arr });
      }
      if (NULL_MATCHERS.has(name) && (!objectOnly || literal)) {
        const leaf = nullLeaf(pattern, consts);
        if (leaf) found.push({ ...at, why: leaf });
      }
    }
    ts.forEachChild(n, visit);
  };
  // Consts first (a helper may be declared below its use), then the calls.
  const collect = (n: ts.Node): void => {
    if (ts.isVariableDeclaration(n) && ts.isIdentifier(n.name) && n.initializer && ts.isVariableDeclarationList(n.parent) && n.parent.flags & ts.NodeFlags.Const) consts.set(n.name.text, n.initializer);
    ts.forEachChild(n, collect);
  };
  collect(sf);
  visit(sf);
  return found;
}
