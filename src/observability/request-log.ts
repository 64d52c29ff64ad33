/**
 * The one log line of a request: what was asked (method, path, operation), how it went (status,
 * duration, error codes) and what it cost upstream (each call with its status and duration).
 * Secrets stay out: no query text, no credential; at debug level the headers and variables
 * join the line, with credentials and fields named like secrets replaced by `[redacted]`.
 */
import { redactFields } from '../secrets.js';
import type { RequestRecord, UpstreamCallRecord } from './request-context.js';

/**
 * Upstream calls listed one by one in a line; a request that makes more lists the first ones
 * (`upstreamCalls` counts all).
 */
const MAX_LOGGED_UPSTREAM_CALLS = 50;

const round = (ms: number) => Math.round(ms * 10) / 10;

function upstreamEntry(call: UpstreamCallRecord) {
  return {
    service: call.service,
    operation: call.operation,
    method: call.method,
    ...(call.status !== undefined ? { status: call.status } : {}),
    ...(call.failure !== undefined ? { failure: call.failure } : {}),
    // A call still in flight when the answer went out (a failed non-null field ends an operation early).
    ...(call.durationMs === undefined ? { unfinished: true } : { durationMs: round(call.durationMs) }),
    ...(call.retries ? { retries: call.retries } : {}),
    // Answered by an identical call already in flight (another request's, or this one's): nothing was sent for it.
    ...(call.shared ? { shared: true } : {}),
  };
}

/** The message and fields of a request's log line, once its response is ready. */
export function requestLogLine(
  request: RequestRecord,
  status: number,
): { message: string; fields: Record<string, unknown> } {
  const operations = request.operations;
  const single = operations.length === 1 ? operations[0] : undefined;
  const errorCodes = [...new Set(operations.flatMap((operation) => operation.errorCodes))];
  const fields: Record<string, unknown> = {
    method: request.method,
    path: request.path,
    status,
    durationMs: round(performance.now() - request.started),
    ...(single ? { operationName: single.name ?? null, operationType: single.type ?? null } : {}),
    ...(operations.length > 1
      ? {
          operations: operations.map((operation) => ({
            name: operation.name ?? null,
            type: operation.type ?? null,
            errorCodes: operation.errorCodes,
          })),
        }
      : {}),
    errorCodes,
    upstreamCalls: request.upstream.length,
    upstream: request.upstream.slice(0, MAX_LOGGED_UPSTREAM_CALLS).map(upstreamEntry),
    ...(request.headers ? { headers: request.headers } : {}),
    ...(request.headers ? { variables: operations.map((operation) => redactFields(operation.variables ?? null)) } : {}),
  };
  const name = single?.name ? ` ${single.name}` : '';
  return { message: `${request.method} ${request.path}${name} ${status}`, fields };
}
