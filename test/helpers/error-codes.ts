/**
 * The codes an answer may carry: those of the gateway's `ErrorCode` union (read from its source,
 * where each is documented), GraphQL's and yoga's own among them. The request helpers and the
 * differential test's corpus check every answer against it, so a test fails when the gateway
 * sends a code that is not listed (and so not documented).
 */
import { readFileSync } from 'node:fs';
import { PROJECT_ROOT } from './process.js';

let known: ReadonlySet<string> | undefined;

/** Every code of the `ErrorCode` union in src/errors.ts. */
export function errorCodeUnion(): string[] {
  const source = readFileSync(`${PROJECT_ROOT}src/errors.ts`, 'utf8');
  const start = source.indexOf('export type ErrorCode =');
  // The union ends at its last member's semicolon (its doc comments may hold others).
  const end = source.slice(start).search(/\|\s*'[A-Z_]+';/);
  const union = source.slice(start, start + source.slice(start + end).indexOf(';') + end);
  return [...union.matchAll(/\|\s*'([A-Z_]+)'/g)].map((match) => match[1] ?? '').sort();
}

/**
 * Throws when an answer's errors carry a code outside `ErrorCode` (or no code at all).
 * @param body a parsed GraphQL answer
 */
export function checkErrorCodes(body: unknown): void {
  known ??= new Set(errorCodeUnion());
  const errors = (body as { errors?: { extensions?: { code?: unknown } }[] } | null)?.errors ?? [];
  for (const error of errors) {
    const code = error.extensions?.code;
    if (typeof code !== 'string' || !known.has(code))
      throw new Error(`the answer carries an error code outside ErrorCode: ${JSON.stringify(error)}`);
  }
}
