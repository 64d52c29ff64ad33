/**
 * Functions fit on a screen (CONVENTIONS, point 12): no function, method or arrow function in
 * `src/` (generated code aside) is longer than 80 lines, from its first line to its closing brace.
 * A longer one wants its steps as functions of their own, or a small class.
 */
import { readdirSync, readFileSync } from 'node:fs';
import ts from 'typescript';
import { expect, it } from 'vitest';
import { PROJECT_ROOT } from './helpers/process.js';

const MAX_LINES = 80;

/** The TypeScript sources of src/, relative to the project, generated code left out. */
function sources(): string[] {
  return readdirSync(`${PROJECT_ROOT}src`, { recursive: true, encoding: 'utf8' })
    .map((file) => `src/${file.split('\\').join('/')}`)
    .filter((file) => file.endsWith('.ts') && !file.startsWith('src/__generated__/'));
}

/** `file:line name: N lines` for each function of `file` longer than {@link MAX_LINES}. */
function longFunctions(file: string): string[] {
  const source = ts.createSourceFile(
    file,
    readFileSync(`${PROJECT_ROOT}${file}`, 'utf8'),
    ts.ScriptTarget.Latest,
    true,
  );
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const name = node.name && ts.isIdentifier(node.name) ? node.name.text : '(anonymous)';
      if (last - first + 1 > MAX_LINES) found.push(`${file}:${first + 1} ${name}: ${last - first + 1} lines`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

it(`no function in src/ is longer than ${MAX_LINES} lines`, () => {
  expect(sources().flatMap(longFunctions)).toEqual([]);
});
