/**
 * The gateway's log: JSON lines (pino) on stdout, each carrying the id of the request it belongs
 * to. Failures that are part of normal operation (an upstream 404, a bad argument) are one
 * `info` line without a stack trace; unexpected errors are an `error` line with theirs,
 * server-side only. Credentials never reach the log: errors are built without them, logged
 * headers have theirs replaced by `[redacted]`, and so do logged variables named like a secret.
 */
import { pino, stdTimeFunctions, type DestinationStream, type Logger } from 'pino';
import type { LogScope } from './request-context.js';
import { SECRET_HEADERS } from '../credentials.js';
import { REDACTED, redactJsonLine } from '../secrets.js';

export type { DestinationStream, Logger };

/** The log levels a user can choose (`LOG_LEVEL`). */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/**
 * Creates the log at `level`, writing to `destination` (stdout unless a test captures it).
 * Every line written in `scope`'s request carries its `requestId`, and has that request's
 * secrets (its credentials, its passwords) replaced by `[redacted]` wherever they appear: in an
 * error message quoting a refused value, in a stack, anywhere.
 */
export function createLogger(level: LogLevel = 'info', destination?: DestinationStream, scope?: LogScope): Logger {
  const options = {
    level,
    timestamp: stdTimeFunctions.isoTime,
    // `"level":"info"` rather than pino's number: readable without a table.
    formatters: { level: (label: string) => ({ level: label }) },
    // The credential headers and the other secret-bearing ones (src/credentials.ts), wherever a line holds headers.
    redact: { paths: SECRET_HEADERS.map((name) => `headers["${name}"]`), censor: REDACTED },
    mixin: () => {
      const request = scope?.request;
      return request ? { requestId: request.id } : {};
    },
    hooks: {
      streamWrite: (line: string) => {
        const secrets = scope?.request?.secrets;
        return secrets && secrets.length > 0 ? redactJsonLine(line, secrets) : line;
      },
    },
  };
  return pino(options, destination ?? stdoutDestination());
}

/** How long a log line may wait in the buffer before it is written, in milliseconds. */
export const LOG_FLUSH_MS = 250;

let stdout: ReturnType<typeof pino.destination> | undefined;

/**
 * stdout, written in batches: one write system call per request's line cost about a third of a
 * cheap request's CPU. Lines are written when 8 KiB have gathered or {@link LOG_FLUSH_MS} has
 * passed, and whatever is left when the process exits (a stop, a crash, `process.exit`). One per
 * process, however many gateways it builds.
 */
function stdoutDestination(): DestinationStream {
  if (stdout === undefined) {
    const destination = pino.destination({ dest: 1, sync: false, minLength: 8 * 1024, periodicFlush: LOG_FLUSH_MS });
    process.once('exit', () => {
      try {
        destination.flushSync();
      } catch {
        // stdout is closed or not ready: there is nowhere left to write to
      }
    });
    stdout = destination;
  }
  return stdout;
}
