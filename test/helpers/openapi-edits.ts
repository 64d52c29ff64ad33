/**
 * Edited copies of the gateway's OpenAPI documents for the upstream check's tests: a document is
 * read from `schema/`, changed by the test, written to a temporary file and checked with the
 * command's own function (`checkUpstream`), which gives the exit code and what it printed.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { stringify, parse } from 'yaml';
import type { Change } from '../../src/contract/changes.js';
import { checkUpstream } from '../../src/contract/cli.js';
import type { Area } from '../../src/contract/graphql-impact.js';
import { PROJECT_ROOT } from './process.js';

/** A parsed document, edited in place by a test. Its parts are reached with {@link at}. */
export type Document = Record<string, unknown>;

/** The gateway's document of `area`, freshly parsed. */
export function gatewayDocument(area: Area = 'petstore'): Document {
  return parse(readFileSync(join(PROJECT_ROOT, `schema/${area}.openapi.yaml`), 'utf8')) as Document;
}

/** The object at `path` inside `document` (`at(doc, 'components', 'schemas', 'Pet')`); throws when there is none. */
export function at(document: Document, ...path: string[]): Record<string, unknown> {
  let node: unknown = document;
  for (const key of path) {
    if (typeof node !== 'object' || node === null) throw new Error(`no ${path.join('.')} in the document`);
    node = (node as Record<string, unknown>)[key];
  }
  if (typeof node !== 'object' || node === null) throw new Error(`no ${path.join('.')} in the document`);
  return node as Record<string, unknown>;
}

/** What one run of the command gave. */
export type CheckRun = { code: number; stdout: string; stderr: string };

/** Runs the command's function with `argv`, collecting what it writes. */
export async function runCheck(argv: readonly string[]): Promise<CheckRun> {
  let stdout = '';
  let stderr = '';
  const code = await checkUpstream(argv, {
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
  });
  return { code, stdout, stderr };
}

/** Writes edited documents to a temporary folder, removed after the file's tests. */
export function useEditedDocuments(): {
  write(document: Document | string, name?: string): string;
  /** the gateway's document of `area`, edited by `edit`, checked with `--json`: the exit code and the changes */
  changesOf(edit: (document: Document) => void, area?: Area): Promise<{ code: number; changes: Change[] }>;
} {
  const folder = mkdtempSync(join(tmpdir(), 'check-upstream-'));
  let count = 0;
  afterAll(() => rmSync(folder, { recursive: true, force: true }));
  const write = (document: Document | string, name = `edited-${(count += 1)}.yaml`) => {
    const file = join(folder, name);
    writeFileSync(file, typeof document === 'string' ? document : stringify(document));
    return file;
  };
  return {
    write,
    async changesOf(edit, area = 'petstore') {
      const document = gatewayDocument(area);
      edit(document);
      const run = await runCheck([write(document), '--json']);
      if (run.stderr !== '') throw new Error(run.stderr);
      return { code: run.code, changes: JSON.parse(run.stdout) as Change[] };
    },
  };
}
