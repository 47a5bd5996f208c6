// Finds where a module loads Node's file system (fs, fs/promises, with or without node:): a static import (type-only
// too), an `export … from`, `import x = require(…)`, a dynamic import() or a require() call. Parsed, not grepped:
// comments and strings that merely mention node:fs are no imports.
import ts from 'typescript';

const FS = new Set(['fs', 'node:fs', 'fs/promises', 'node:fs/promises']);

export interface FsImport {
  readonly line: number;
  readonly spec: string;
  readonly how: 'import' | 'export from' | 'import = require' | 'import()' | 'require()';
}

const literal = (e: ts.Node | undefined): string | null => (e && (ts.isStringLiteral(e) || ts.isNoSubstitutionTemplateLiteral(e)) ? e.text : null);

export function fsImports(code: string, file = 'x.ts'): FsImport[] {
  const sf = ts.createSourceFile(file, code, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: FsImport[] = [];
  const add = (at: ts.Node, spec: string | null, how: FsImport['how']): void => {
    if (spec !== null && FS.has(spec)) found.push({ line: sf.getLineAndCharacterOfPosition(at.getStart(sf)).line + 1, spec, how });
  };
  const visit = (n: ts.Node): void => {
    if (ts.isImportDeclaration(n)) add(n, literal(n.moduleSpecifier), 'import');
    else if (ts.isExportDeclaration(n)) add(n, literal(n.moduleSpecifier), 'export from');
    else if (ts.isImportEqualsDeclaration(n) && ts.isExternalModuleReference(n.moduleReference)) add(n, literal(n.moduleReference.expression), 'import = require');
    else if (ts.isCallExpression(n)) {
      if (n.expression.kind === ts.SyntaxKind.ImportKeyword) add(n, literal(n.arguments[0]), 'import()');
      else if (ts.isIdentifier(n.expression) && n.expression.text === 'require') add(n, literal(n.arguments[0]), 'require()');
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return found;
}
