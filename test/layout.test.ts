/**
 * The code is laid out to be read (CONVENTIONS, points 12 and 15; issue 35): in `src/`, generated
 * code aside, no function, method or arrow function is longer than 80 lines, from its first line
 * to its closing brace (a longer one wants its steps as functions of their own, or a small class);
 * no class is longer than 250 lines (a longer one wants its parts as modules); no file is longer
 * than 500 lines; and at most 10 lines are longer than 140 characters.
 */
import { readdirSync, readFileSync } from 'node:fs';
import ts from 'typescript';
import { expect, it } from 'vitest';
import { PROJECT_ROOT } from './helpers/process.js';

const MAX_FUNCTION_LINES = 80;
const MAX_CLASS_LINES = 250;
const MAX_FILE_LINES = 500;
const LONG_LINE = 140;
const MAX_LONG_LINES = 10;

/** The TypeScript sources of src/, relative to the project, generated code left out. */
function sources(): string[] {
  return readdirSync(`${PROJECT_ROOT}src`, { recursive: true, encoding: 'utf8' })
    .map((file) => `src/${file.split('\\').join('/')}`)
    .filter((file) => file.endsWith('.ts') && !file.startsWith('src/__generated__/'));
}

const text = (file: string) => readFileSync(`${PROJECT_ROOT}${file}`, 'utf8');

/**
 * `file:line name: N lines` for each declaration of `file` that `matches` and is longer than
 * `max` lines.
 */
function longDeclarations(file: string, matches: (node: ts.Node) => boolean, max: number): string[] {
  const source = ts.createSourceFile(file, text(file), ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (matches(node)) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const name = (node as { name?: ts.Node }).name;
      const named = name && ts.isIdentifier(name) ? name.text : '(anonymous)';
      if (last - first + 1 > max) found.push(`${file}:${first + 1} ${named}: ${last - first + 1} lines`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

it(`no function in src/ is longer than ${MAX_FUNCTION_LINES} lines`, () => {
  const isFunction = (node: ts.Node) => ts.isFunctionLike(node) && 'body' in node && node.body !== undefined;
  expect(sources().flatMap((file) => longDeclarations(file, isFunction, MAX_FUNCTION_LINES))).toEqual([]);
});

it(`no class in src/ is longer than ${MAX_CLASS_LINES} lines`, () => {
  expect(sources().flatMap((file) => longDeclarations(file, ts.isClassLike, MAX_CLASS_LINES))).toEqual([]);
});

it(`no file in src/ is longer than ${MAX_FILE_LINES} lines`, () => {
  const long = sources().flatMap((file) => {
    const lines = text(file).split('\n').length - 1;
    return lines > MAX_FILE_LINES ? [`${file}: ${lines} lines`] : [];
  });

  expect(long).toEqual([]);
});

it(`at most ${MAX_LONG_LINES} lines of src/ are longer than ${LONG_LINE} characters`, () => {
  const long = sources().flatMap((file) =>
    text(file)
      .split('\n')
      .flatMap((line, index) => (line.length > LONG_LINE ? [`${file}:${index + 1}`] : [])),
  );

  expect(long.length, long.join('\n')).toBeLessThanOrEqual(MAX_LONG_LINES);
});
