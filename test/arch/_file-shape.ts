// The shape every source, script and test file keeps (STYLE.md habit 10): at most 300 lines, and a test file opens
// with a one-line comment saying what it holds. Pure: a path and a text in, problems out.

/** Longest file allowed anywhere in src/, test/, scripts/, bench/ and slurm/, tests included. */
export const MAX_LINES = 300;
/** The extensions of code files: TypeScript, JavaScript modules, shell. */
export const CODE_FILE = /\.(?:ts|mts|cts|js|mjs|cjs|sh)$/;
/** A purpose line: `// ` and at least three words. */
const PURPOSE = /^\/\/ \S+(?: \S+){2,}/;

/** Lines as `wc -l` counts them, plus a last line without its newline. */
export function lineCount(text: string): number {
  if (text === '') return 0;
  const newlines = text.split('\n').length - 1;
  return text.endsWith('\n') ? newlines : newlines + 1;
}

/** What is wrong with one file's shape; empty when nothing is. */
export function shapeProblems(file: string, text: string): string[] {
  const problems: string[] = [];
  const lines = lineCount(text);
  if (lines > MAX_LINES) problems.push(`${file}: ${lines} lines (at most ${MAX_LINES}): split it by topic`);
  if (file.endsWith('.test.ts') && !PURPOSE.test(text.split('\n', 1)[0] ?? '')) {
    problems.push(`${file}: does not open with a one-line purpose comment ("// what this file tests")`);
  }
  return problems;
}
