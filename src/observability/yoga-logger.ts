/**
 * The gateway's log as yoga's logger: expected failures (an upstream 4xx, a bad argument) are
 * one `info` line without a stack trace, unexpected errors an `error` line with theirs.
 * Apart from `src/logger.ts` because it knows the gateway's errors, which the log itself (and
 * a cluster primary, which only logs) does not need to load.
 */
import type { YogaLogger } from 'graphql-yoga';
import { isExpectedError, wasReplaced } from '../errors.js';
import type { Logger } from './logger.js';
import { UpstreamError } from '../upstream/failure.js';

function describe(error: unknown): { message: string; fields: Record<string, unknown> } {
  const original =
    error instanceof Error && 'originalError' in error && error.originalError instanceof Error
      ? error.originalError
      : error;
  if (original instanceof UpstreamError) {
    return {
      message:
        `upstream ${original.service} ${original.operation} failed ` +
        `(${original.failure}${original.status !== undefined ? ` ${original.status}` : ''}): ${original.message}` +
        // What the upstream said of a 5xx or an unreadable answer is for the log, not the caller.
        (original.upstreamSaid ? `; it said: ${original.upstreamSaid}` : ''),
      fields: {
        upstream: {
          service: original.service,
          operation: original.operation,
          failure: original.failure,
          status: original.status,
        },
      },
    };
  }
  return { message: original instanceof Error ? original.message : String(original), fields: {} };
}

/** Several arguments (yoga's debug messages) as one message. */
function text(args: readonly unknown[]): string {
  return args
    .map((arg) => (typeof arg === 'string' ? arg : arg instanceof Error ? arg.message : JSON.stringify(arg)))
    .join(' ');
}

/**
 * Logs a failure: an expected one (an upstream 4xx, a bad argument) as one `info` line, an
 * unexpected one as an `error` line with its stack.
 */
export function logFailure(log: Logger, ...args: unknown[]): void {
  const [first] = args;
  if (args.length === 1 && isExpectedError(first)) {
    const { message, fields } = describe(first);
    log.info(fields, message);
  } else if (first instanceof Error) {
    log.error({ err: first }, text(args));
  } else {
    log.error(text(args));
  }
}

/**
 * The log as yoga's logger. yoga logs each error its masking replaced as it masks it, where the
 * request is not known; those are left to the observer, which logs them with their request
 * (src/observability/request-observer.ts).
 */
export function yogaLogger(log: Logger): YogaLogger {
  return {
    debug: (...args: unknown[]) => log.debug(text(args)),
    info: (...args: unknown[]) => log.info(text(args)),
    warn: (...args: unknown[]) => log.warn(text(args)),
    error: (...args: unknown[]) => {
      if (args.length === 1 && wasReplaced(args[0])) return;
      logFailure(log, ...args);
    },
  };
}
