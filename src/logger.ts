/**
 * The gateway's log: plain lines on stdout/stderr. Failures that are part of normal operation
 * (an upstream 404, a bad argument) are one line without a stack trace; unexpected errors keep
 * theirs, server-side only. Messages never contain credentials: errors are built without them.
 */
import type { YogaLogger } from 'graphql-yoga';
import { isExpectedError } from './errors.js';
import { UpstreamError } from './upstream/http.js';

function describe(error: unknown): string {
  const original = error instanceof Error && 'originalError' in error && error.originalError instanceof Error ? error.originalError : error;
  if (original instanceof UpstreamError) {
    return `upstream ${original.service} ${original.operation} failed (${original.failure}${original.status !== undefined ? ` ${original.status}` : ''}): ${original.message}`;
  }
  return original instanceof Error ? original.message : String(original);
}

/** A yoga logger at the given level. */
export function createLogger(level: 'debug' | 'info' | 'warn' | 'error' = 'info'): YogaLogger {
  const levels = ['debug', 'info', 'warn', 'error'];
  const enabled = (at: string) => levels.indexOf(at) >= levels.indexOf(level);
  const noop = () => undefined;
  return {
    debug: enabled('debug') ? (...args: unknown[]) => console.debug(...args) : noop,
    info: enabled('info') ? (...args: unknown[]) => console.info(...args) : noop,
    warn: enabled('warn') ? (...args: unknown[]) => console.warn(...args) : noop,
    error: (...args: unknown[]) => {
      if (args.length === 1 && isExpectedError(args[0])) {
        if (enabled('info')) console.info(describe(args[0]));
      } else {
        console.error(...args);
      }
    },
  };
}
