/**
 * Custom scalars: `DateTime` (ISO 8601, normalised to UTC) and `File` (a streamed upload).
 */
import { GraphQLScalarType, Kind } from 'graphql';
import { badUserInput, codedError } from '../errors.js';
import type { Resolvers } from '../__generated__/resolvers-types.js';
import { UploadedFile } from '../plugins/uploads.js';

const ISO_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/i;

/** True when the calendar date exists: `Date` silently rolls 2025-02-30 over to March 2. */
function isRealDate(year: number, month: number, day: number): boolean {
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth;
}

function parseDateTime(value: unknown): string {
  const parts = typeof value === 'string' ? ISO_DATE_TIME.exec(value) : null;
  const date =
    parts && isRealDate(Number(parts[1]), Number(parts[2]), Number(parts[3])) ? new Date(parts[0]) : undefined;
  if (!date || Number.isNaN(date.getTime()))
    throw badUserInput('DateTime must be an ISO 8601 date-time with a time zone, such as 2025-03-20T11:00:00Z');
  return date.toISOString();
}

const DateTime = new GraphQLScalarType<string, string>({
  name: 'DateTime',
  serialize(value) {
    // Upstream dates are normalised to ISO strings when decoded; Date objects are accepted too.
    const date = value instanceof Date ? value : typeof value === 'string' ? new Date(value) : undefined;
    // A date from upstream that is not one: the upstream's answer is what the graph cannot use.
    if (!date || Number.isNaN(date.getTime()))
      throw codedError('UPSTREAM_ERROR', 'DateTime cannot represent an invalid date');
    return date.toISOString();
  },
  parseValue: parseDateTime,
  parseLiteral(ast) {
    if (ast.kind !== Kind.STRING) throw badUserInput('DateTime must be a string');
    return parseDateTime(ast.value);
  },
});

const File = new GraphQLScalarType<UploadedFile, never>({
  name: 'File',
  serialize() {
    // No field of the schema returns a File: reaching this is a bug, and is masked as one.
    throw new Error('File is an input-only scalar');
  },
  parseValue(value) {
    if (value instanceof UploadedFile) return value;
    throw badUserInput(
      'File must be sent as a file part of a multipart request (GraphQL multipart request specification)',
    );
  },
  parseLiteral() {
    throw badUserInput('File must be sent as a variable in a multipart request');
  },
});

export const scalarResolvers: Resolvers = { DateTime, File };
