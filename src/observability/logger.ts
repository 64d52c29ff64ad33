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

/** How much the buffer gathers before it is written, in characters (at least as many bytes). */
const LOG_BATCH_CHARS = 64 * 1024;

/** What {@link BatchedLines} uses of pino's stdout (sonic-boom). */
export type BatchOutput = Pick<ReturnType<typeof pino.destination>, 'write' | 'flush' | 'flushSync'>;

/**
 * Lines gathered in memory and handed to `output` as one string: once {@link LOG_BATCH_CHARS}
 * have gathered, {@link LOG_FLUSH_MS} after the first line of a batch, or when the log is flushed.
 * sonic-boom can gather too (its `minLength`), but it appends each line to one string and
 * measures that string's UTF-8 length on every write: 2.2-2.8 µs a line against 0.5 µs this way
 * (400-byte lines to /dev/null). And an asynchronous write costs the same whatever its size (15-30
 * µs of CPU for 8, 16 or 64 KiB, most of it handing the write to libuv's threads), so the batch is
 * large: 64 Ki characters hold about 160 request lines. Pinned A/B, one pet by ids 1-10 with
 * sharing off: 0.962x CPU per request for 8 Ki characters against sonic-boom's gathering, then
 * 0.977x for 64 Ki against 8 Ki. Writing, retrying a busy descriptor and a reader that has gone
 * stay sonic-boom's.
 */
export class BatchedLines implements DestinationStream {
  private readonly output: BatchOutput;
  private lines: string[] = [];
  private chars = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(output: BatchOutput) {
    this.output = output;
  }

  write(line: string): void {
    this.lines.push(line);
    this.chars += line.length;
    if (this.chars >= LOG_BATCH_CHARS) this.pass();
    else this.timer ??= setTimeout(() => this.pass(), LOG_FLUSH_MS).unref();
  }

  /** pino's `logger.flush(done)`: what is gathered is written, then `done` is called. */
  flush(done: (error?: Error) => void): void {
    this.pass();
    this.output.flush(done);
  }

  flushSync(): void {
    this.pass();
    this.output.flushSync();
  }

  private pass(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.lines.length === 0) return;
    const text = this.lines.join('');
    this.lines = [];
    this.chars = 0;
    this.output.write(text);
  }
}

let stdout: BatchedLines | undefined;

/**
 * stdout, written in batches ({@link BatchedLines}): one write per request's line cost about a
 * third of a cheap request's CPU. Whatever is left is written when the process exits (a
 * stop, a crash, `process.exit`). One per process, however many gateways it builds.
 */
function stdoutDestination(): DestinationStream {
  if (stdout === undefined) {
    const destination = new BatchedLines(pino.destination({ dest: 1, sync: false }));
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
