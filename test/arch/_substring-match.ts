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

/** Where a string leaf hides in `e`, or null: a literal, a template, or a const of this file holding one. */
function stringLeaf(e: ts.Expression, consts: ReadonlyMap<string, ts.Expression>, seen: Set<string> = new Set()): string | null {
  if (ts.isParenthesizedExpression(e) || ts.isAsExpression(e) || ts.isSatisfiesExpression(e)) return stringLeaf(e.expression, consts, seen);
  if (ts.isStringLiteral(e) || ts.isNoSubstitutionTemplateLiteral(e) || ts.isTemplateExpression(e)) return `a string ${e.getText().slice(0, 40)}`;
  if (ts.isIdentifier(e) && consts.has(e.text) && !seen.has(e.text)) {
    seen.add(e.text);
    const leaf = stringLeaf(consts.get(e.text)!, consts, seen);
    return leaf ? `${e.text}, ${leaf}` : null;
  }
  if (ts.isArrayLiteralExpression(e)) {
    for (const el of e.elements) {
      const leaf = ts.isSpreadElement(el) ? null : stringLeaf(el, consts, seen);
      if (leaf) return leaf;
    }
  }
  if (ts.isObjectLiteralExpression(e)) {
    for (const p of e.properties) {
      const v = ts.isPropertyAssignment(p) ? p.initializer : ts.isShorthandPropertyAssignment(p) ? p.name : null;
      const leaf = v ? stringLeaf(v, consts, seen) : null;
      if (leaf) return `${p.name?.getText() ?? '…'}: ${leaf}`;
    }
  }
  return null;
}

/** Where an array literal hides in `e`, or null: in the pattern itself, an object's value, or a const of this file. */
function prefixArray(e: ts.Expression, consts: ReadonlyMap<string, ts.Expression>, seen: Set<string> = new Set()): string | null {
  if (ts.isParenthesizedExpression(e) || ts.isAsExpression(e) || ts.isSatisfiesExpression(e)) return prefixArray(e.expression, consts, seen);
  if (ts.isIdentifier(e) && consts.has(e.text) && !seen.has(e.text)) {
    seen.add(e.text);
    const arr = prefixArray(consts.get(e.text)!, consts, seen);
    return arr ? `${e.text}, ${arr}` : null;
  }
  if (ts.isArrayLiteralExpression(e)) {
    return e.elements.length === 0 ? 'an empty array [] (matches any array)' : `an array of ${e.elements.length} (a prefix: more items pass)`;
  }
  if (ts.isObjectLiteralExpression(e)) {
    for (const p of e.properties) {
      const v = ts.isPropertyAssignment(p) ? p.initializer : ts.isShorthandPropertyAssignment(p) ? p.name : null;
      const arr = v ? prefixArray(v, consts, seen) : null;
      if (arr) return `${p.name?.getText() ?? '…'}: ${arr}`;
    }
  }
  return null;
}

/** Where a `key: null` hides in `e`, or null: an object's value, nested in objects or arrays, or in a const of this file. */
function nullLeaf(e: ts.Expression, consts: ReadonlyMap<string, ts.Expression>, seen: Set<string> = new Set()): string | null {
  if (ts.isParenthesizedExpression(e) || ts.isAsExpression(e) || ts.isSatisfiesExpression(e)) return nullLeaf(e.expression, consts, seen);
  if (ts.isIdentifier(e) && consts.has(e.text) && !seen.has(e.text)) {
    seen.add(e.text);
    const leaf = nullLeaf(consts.get(e.text)!, consts, seen);
    return leaf ? `${e.text}, ${leaf}` : null;
  }
  if (ts.isArrayLiteralExpression(e)) {
    for (const el of e.elements) {
      const leaf = ts.isSpreadElement(el) ? null : nullLeaf(el, consts, seen);
      if (leaf) return leaf;
    }
  }
  if (ts.isObjectLiteralExpression(e)) {
    for (const p of e.properties) {
      const v = ts.isPropertyAssignment(p) ? p.initializer : ts.isShorthandPropertyAssignment(p) ? p.name : null;
      if (!v) continue;
      const bare = skipWrappers(v);
      const leaf = bare.kind === ts.SyntaxKind.NullKeyword ? 'null (passes when the key is missing too)' : nullLeaf(v, consts, seen);
      if (leaf) return `${p.name?.getText() ?? '…'}: ${leaf}`;
    }
  }
  return null;
}

function skipWrappers(e: ts.Expression): ts.Expression {
  while (ts.isParenthesizedExpression(e) || ts.isAsExpression(e) || ts.isSatisfiesExpression(e)) e = e.expression;
  return e;
}

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
