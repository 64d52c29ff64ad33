/**
 * The gateway's log: JSON lines (pino) on stdout, each carrying the id of the request it belongs
 * to. Failures that are part of normal operation (an upstream 404, a bad argument) are one
 * `info` line without a stack trace; unexpected errors are an `error` line with theirs,
 * server-side only. Credentials never reach the log: errors are built without them, logged
 * headers have theirs replaced by `[redacted]`, and so do logged variables named like a secret.
 */
import { pino, stdTimeFunctions, type DestinationStream, type Logger } from 'pino';
import { currentRequest } from './observability/request-context.js';

export type { DestinationStream, Logger };

/** The log levels a user can choose (`LOG_LEVEL`). */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** What replaces a secret in the log. */
export const REDACTED = '[redacted]';

/** Request headers that carry credentials, wherever a log line holds headers. */
const CREDENTIAL_HEADERS = ['authorization', 'api_key', 'x-api-key', 'cookie', 'proxy-authorization'];

/** Field names whose values are secrets, at any depth of logged variables. */
const SECRET_NAME = /^(password|passwd|secret|token|access_?token|refresh_?token|api_?key|authorization|credentials?)$/i;

/**
 * A copy of `value` with every field named like a secret (`password`, `token`, `apiKey`, ...)
 * replaced by {@link REDACTED}, at any depth: for variables, whose shape the log cannot know.
 */
export function redactSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactSecrets);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, SECRET_NAME.test(key) ? REDACTED : redactSecrets(item)]));
}

/**
 * The secret values of one request's variables or document: strings in fields named like a
 * secret (`password`, `token`, ...), and such fields written into the query as literals.
 */
export function secretValues(variables: unknown, query: unknown): string[] {
  const found: string[] = [];
  const walk = (value: unknown) => {
    if (Array.isArray(value)) value.forEach(walk);
    else if (typeof value === 'object' && value !== null) {
      for (const [key, item] of Object.entries(value)) {
        if (SECRET_NAME.test(key) && typeof item === 'string') found.push(item);
        else walk(item);
      }
    }
  };
  walk(variables);
  if (typeof query === 'string') {
    for (const match of query.matchAll(/\b(\w+)\s*:\s*"((?:[^"\\]|\\.)*)"/g)) {
      if (!SECRET_NAME.test(match[1] ?? '')) continue;
      const written = match[2] ?? '';
      found.push(written);
      // GraphQL strings escape as JSON does: messages quote the value decoded.
      try {
        found.push(JSON.parse(`"${written}"`) as string);
      } catch {
        // not a valid escape sequence: the document does not parse, and only the text as written can appear
      }
    }
  }
  return found;
}

/** Secrets shorter than this stay in the line: replacing "ab" everywhere would garble every line. */
const MIN_SECRET_LENGTH = 4;

const REGEXP_SPECIAL = /[.*+?^${}()|[\]\\]/g;

/**
 * A JSON line with each secret replaced by {@link REDACTED} wherever it appears in a string
 * value, as JSON writes it there; not where a backslash before it makes its first character part
 * of an escape (`\n`, `\u…`), which replacing would break.
 */
function withoutSecrets(line: string, secrets: readonly string[]): string {
  let result = line;
  // Longest first, so that a token inside its "Bearer …" header is not redacted by halves.
  for (const secret of [...new Set(secrets)].sort((a, b) => b.length - a.length)) {
    if (secret.length < MIN_SECRET_LENGTH) continue;
    const asWritten = JSON.stringify(secret).slice(1, -1);
    // Most lines hold no secret at all: a plain search is far cheaper than building the pattern.
    if (!result.includes(asWritten)) continue;
    const written = asWritten.replace(REGEXP_SPECIAL, '\\$&');
    result = result.replace(new RegExp(`(?<!(?:^|[^\\\\])(?:\\\\\\\\)*\\\\)${written}`, 'g'), REDACTED);
  }
  return result;
}

/**
 * Creates the log at `level`, writing to `destination` (stdout unless a test captures it).
 * Every line written while a request is served carries its `requestId`, and has that request's
 * secrets (its credentials, its passwords) replaced by `[redacted]` wherever they appear: in an
 * error message quoting a refused value, in a stack, anywhere.
 */
export function createLogger(level: LogLevel = 'info', destination?: DestinationStream): Logger {
  const options = {
    level,
    timestamp: stdTimeFunctions.isoTime,
    // `"level":"info"` rather than pino's number: readable without a table.
    formatters: { level: (label: string) => ({ level: label }) },
    redact: { paths: CREDENTIAL_HEADERS.map((name) => `headers["${name}"]`), censor: REDACTED },
    mixin: () => {
      const request = currentRequest();
      return request ? { requestId: request.id } : {};
    },
    hooks: {
      streamWrite: (line: string) => {
        const secrets = currentRequest()?.secrets;
        return secrets && secrets.length > 0 ? withoutSecrets(line, secrets) : line;
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
