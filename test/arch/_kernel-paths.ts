// Finds where a module reads a node's kernel files around the Host (STYLE.md habits 2 and 3): a path joined under a
// root (only the Host joins kernel paths under it, and keeps a capture's links inside it), and a node's path (/sys,
// /proc, /dev, /run) given to a src/host helper that acts on a path of this machine (someNames, readSmall, lstatOrNull…),
// directly or through a function of the module that hands its parameter on to one. Parsed, not grepped.
import ts from 'typescript';

/** A node's path as code names it: /sys, /proc, /dev or /run (slurmd's pid file, Slurm's cached conf), or a path below one. */
const KERNEL = /^\/(?:sys|proc|dev|run)(?:\/|$)/;
/** What joins paths: path.join, path.resolve (and posix's), or join/resolve imported by name. */
const JOINS = new Set(['join', 'resolve']);

export interface RootRead {
  readonly line: number;
  readonly rule: 'root-join' | 'kernel-path';
  readonly text: string;
}

export interface RuleContext {
  /** Whether `name`, imported from `spec`, is a src/host function that acts on a path of this machine (no Host). */
  machineHelper(spec: string, name: string): boolean;
  /** Whether `name`, imported from `spec`, is a constant that holds a kernel path. */
  kernelConst(spec: string, name: string): boolean;
}

const isJoin = (c: ts.CallExpression): boolean => {
  const e = c.expression;
  if (ts.isIdentifier(e)) return JOINS.has(e.text);
  return ts.isPropertyAccessExpression(e) && JOINS.has(e.name.text) && /^path(\.posix)?$/.test(e.expression.getText());
};
/** `root`, `ROOT`, `treeRoot`, `cfg.root`: what names a node's root. */
const isRootish = (e: ts.Node): boolean => (ts.isIdentifier(e) && /^(root|ROOT|\w+Root)$/.test(e.text)) || (ts.isPropertyAccessExpression(e) && e.name.text === 'root');

/** The module's constants that hold a kernel path: `const SYS = '/sys/module'`. */
export function kernelConsts(code: string, file = 'x.ts'): string[] {
  const sf = ts.createSourceFile(file, code, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const out: string[] = [];
  const visit = (n: ts.Node): void => {
    if (ts.isVariableDeclaration(n) && ts.isIdentifier(n.name) && n.initializer && literalKernel(n.initializer)) out.push(n.name.text);
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

function literalKernel(e: ts.Expression): boolean {
  if (ts.isStringLiteral(e) || ts.isNoSubstitutionTemplateLiteral(e)) return KERNEL.test(e.text);
  if (ts.isTemplateExpression(e)) return KERNEL.test(e.head.text);
  return false;
}

/** Names of the functions src/host/ exports that take no Host: each acts on a path of this machine. */
export function machineExports(code: string, file = 'x.ts'): { machine: string[]; viaHost: string[] } {
  const sf = ts.createSourceFile(file, code, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const machine: string[] = [];
  const viaHost: string[] = [];
  const exported = (n: ts.Node): boolean => ts.canHaveModifiers(n) && (ts.getModifiers(n) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
  const sort = (name: string, params: ts.NodeArray<ts.ParameterDeclaration>): void => void (params.some((p) => p.type !== undefined && /\bHost\b/.test(p.type.getText(sf))) ? viaHost : machine).push(name);
  for (const s of sf.statements) {
    if (ts.isFunctionDeclaration(s) && s.name && exported(s)) sort(s.name.text, s.parameters);
    if (ts.isVariableStatement(s) && exported(s)) {
      for (const d of s.declarationList.declarations) {
        if (ts.isIdentifier(d.name) && d.initializer && (ts.isArrowFunction(d.initializer) || ts.isFunctionExpression(d.initializer))) sort(d.name.text, d.initializer.parameters);
      }
    }
  }
  return { machine, viaHost };
}

/** What a module calls a machine helper (imported, or its own function that hands a parameter on to one), and its kernel constants. */
function helpersOf(sf: ts.SourceFile, ctx: RuleContext): { helpers: Set<string>; kernelNames: Set<string> } {
  const helpers = new Set<string>();
  const kernelNames = new Set(kernelConsts(sf.text, sf.fileName));
  for (const s of sf.statements) {
    if (!ts.isImportDeclaration(s) || !ts.isStringLiteral(s.moduleSpecifier)) continue;
    const spec = s.moduleSpecifier.text;
    const named = s.importClause?.namedBindings;
    if (!named || !ts.isNamedImports(named)) continue;
    for (const el of named.elements) {
      const name = (el.propertyName ?? el.name).text;
      if (ctx.machineHelper(spec, name)) helpers.add(el.name.text);
      if (ctx.kernelConst(spec, name)) kernelNames.add(el.name.text);
    }
  }
  // A function of the module that hands a parameter to a machine helper is one itself (busy.ts's `names(dir)`).
  const fns: { name: string; params: Set<string>; body: ts.Node }[] = [];
  const collect = (n: ts.Node): void => {
    if (ts.isFunctionDeclaration(n) && n.name && n.body) fns.push({ name: n.name.text, params: paramNames(n.parameters), body: n.body });
    if (ts.isVariableDeclaration(n) && ts.isIdentifier(n.name) && n.initializer && (ts.isArrowFunction(n.initializer) || ts.isFunctionExpression(n.initializer))) fns.push({ name: n.name.text, params: paramNames(n.initializer.parameters), body: n.initializer.body });
    ts.forEachChild(n, collect);
  };
  collect(sf);
  for (let grew = true; grew; ) {
    grew = false;
    for (const f of fns) {
      if (helpers.has(f.name) || f.params.size === 0 || !handsOn(f.body, f.params, helpers)) continue;
      helpers.add(f.name);
      grew = true;
    }
  }
  return { helpers, kernelNames };
}

/**
 * The machine helpers a module exports to others: its own functions that hand a parameter on to one (epilog/files.ts
 * readStamp(dir)), and those it re-exports (`export { writeAtomic } from '../host/files.js'`).
 */
export function exportedHelpers(code: string, ctx: RuleContext, file = 'x.ts'): string[] {
  const sf = ts.createSourceFile(file, code, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const { helpers } = helpersOf(sf, ctx);
  const out: string[] = [];
  const exported = (n: ts.Node): boolean => ts.canHaveModifiers(n) && (ts.getModifiers(n) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
  for (const s of sf.statements) {
    if (ts.isFunctionDeclaration(s) && s.name && exported(s) && helpers.has(s.name.text)) out.push(s.name.text);
    if (ts.isVariableStatement(s) && exported(s)) for (const d of s.declarationList.declarations) if (ts.isIdentifier(d.name) && helpers.has(d.name.text)) out.push(d.name.text);
    if (ts.isExportDeclaration(s) && s.exportClause && ts.isNamedExports(s.exportClause)) {
      const spec = s.moduleSpecifier && ts.isStringLiteral(s.moduleSpecifier) ? s.moduleSpecifier.text : null;
      for (const el of s.exportClause.elements) {
        const name = (el.propertyName ?? el.name).text;
        if (spec === null ? helpers.has(name) : ctx.machineHelper(spec, name)) out.push(el.name.text);
      }
    }
  }
  return out;
}

export function rootReads(code: string, ctx: RuleContext, file = 'x.ts'): RootRead[] {
  const sf = ts.createSourceFile(file, code, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const { helpers, kernelNames } = helpersOf(sf, ctx);
  const isKernel = (e: ts.Node): boolean => {
    if (ts.isParenthesizedExpression(e) || ts.isAsExpression(e) || ts.isNonNullExpression(e)) return isKernel(e.expression);
    if (ts.isStringLiteral(e) || ts.isNoSubstitutionTemplateLiteral(e) || ts.isTemplateExpression(e)) return literalKernel(e);
    if (ts.isIdentifier(e)) return kernelNames.has(e.text);
    if (ts.isBinaryExpression(e) && e.operatorToken.kind === ts.SyntaxKind.PlusToken) return isKernel(e.left) || isKernel(e.right);
    if (ts.isCallExpression(e) && isJoin(e)) return e.arguments.some(isKernel);
    return false;
  };
  const isRootJoin = (e: ts.Node): boolean => {
    if (ts.isParenthesizedExpression(e)) return isRootJoin(e.expression);
    if (ts.isCallExpression(e) && isJoin(e)) return e.arguments.length >= 2 && e.arguments.some(isRootish);
    if (ts.isBinaryExpression(e) && e.operatorToken.kind === ts.SyntaxKind.PlusToken) {
      return (isRootish(e.left) && (isKernel(e.right) || ((ts.isStringLiteral(e.right) || ts.isTemplateExpression(e.right)) && /^\//.test(ts.isStringLiteral(e.right) ? e.right.text : e.right.head.text)))) || isRootJoin(e.left);
    }
    if (ts.isTemplateExpression(e)) return e.templateSpans.some((s) => isRootish(s.expression) && s.literal.text.startsWith('/'));
    return false;
  };
  const found: RootRead[] = [];
  const add = (at: ts.Node, rule: RootRead['rule']): void => {
    const text = at.getText(sf).replace(/\s+/g, ' ');
    found.push({ line: sf.getLineAndCharacterOfPosition(at.getStart(sf)).line + 1, rule, text: text.length > 90 ? `${text.slice(0, 87)}...` : text });
  };
  const visit = (n: ts.Node): void => {
    // A join reported is not looked into again (`root + '/sys' + x` is one join, not two).
    if (isRootJoin(n)) return add(n, 'root-join');
    if (ts.isCallExpression(n) && ts.isIdentifier(n.expression) && helpers.has(n.expression.text) && n.arguments.some(isKernel)) add(n, 'kernel-path');
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return found;
}

function paramNames(ps: ts.NodeArray<ts.ParameterDeclaration>): Set<string> {
  return new Set(ps.flatMap((p) => (ts.isIdentifier(p.name) ? [p.name.text] : [])));
}

/** Whether `body` calls one of `helpers` with an argument that mentions one of `params`. */
function handsOn(body: ts.Node, params: ReadonlySet<string>, helpers: ReadonlySet<string>): boolean {
  const mentions = (e: ts.Node): boolean => (ts.isIdentifier(e) && params.has(e.text)) || ts.forEachChild(e, (c) => (mentions(c) ? true : undefined)) === true;
  const visit = (n: ts.Node): boolean => {
    if (ts.isCallExpression(n) && ts.isIdentifier(n.expression) && helpers.has(n.expression.text) && n.arguments.some(mentions)) return true;
    return ts.forEachChild(n, (c) => (visit(c) ? true : undefined)) === true;
  };
  return visit(body);
}
