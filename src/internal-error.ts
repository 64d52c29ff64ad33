/**
 * The answer to a failure outside GraphQL execution (a module that did not load, a plugin hook
 * that threw, an answer that could not be written): masked, its detail in the log only. Both HTTP
 * paths answer it (src/http/), and so does the server's last line of defence (src/server.ts).
 */
import type { ServerResponse } from 'node:http';
import { setRequestId } from './observability/request-context.js';

/** The masked 500's body. */
export const INTERNAL_ERROR_BODY =
  '{"errors":[{"message":"Unexpected error.","extensions":{"code":"INTERNAL_SERVER_ERROR"}}]}';

/**
 * Answers a failure with the masked 500 ({@link INTERNAL_ERROR_BODY}) and the request id, when
 * nothing of the answer was sent yet (the headers a failed step had set go: they were another
 * answer's); else closes the connection, since a half-sent answer cannot be taken back. True when
 * the 500 was written.
 */
export function writeInternalError(response: ServerResponse, requestId: string): boolean {
  try {
    if (response.headersSent || response.destroyed) throw new Error('the answer has begun');
    for (const name of response.getHeaderNames()) if (name !== 'connection') response.removeHeader(name);
    const headers: Record<string, string> = {
      'content-type': 'application/json; charset=utf-8',
      'content-length': String(Buffer.byteLength(INTERNAL_ERROR_BODY)),
    };
    setRequestId(headers, requestId);
    response.writeHead(500, headers);
    response.end(INTERNAL_ERROR_BODY);
    return true;
  } catch {
    response.destroy();
    return false;
  }
}
