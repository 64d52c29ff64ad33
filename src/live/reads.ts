/**
 * What one run of a live query read upstream: the pollable reads (identifiers.ts) its upstream
 * client made, with the headers they were sent with and what they answered, for the poller.
 */
import { UpstreamError } from '../upstream/failure.js';
import type { UpstreamClient, UpstreamRequest } from '../upstream/http.js';
import { identifiersOfRead } from './identifiers.js';
import { answerState, type WatchedRead } from './poller.js';

/** The query string of a call, encoded as the client sends it (repeated parameters for arrays). */
function queryString(query: UpstreamRequest['query']): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value === undefined) continue;
    for (const one of typeof value === 'string' ? [value] : value) search.append(name, one);
  }
  return search.toString();
}

/** Records the pollable reads made through the clients it wraps, during one run of a live query. */
export class ReadRecorder {
  readonly reads: WatchedRead[] = [];

  /** `client`, recording each pollable GET it answers (or refuses with a status: a pet not found). */
  wrap(client: UpstreamClient): UpstreamClient {
    return {
      service: client.service,
      close: () => client.close(),
      request: async (call) => {
        const identifiers = call.method === 'GET' ? identifiersOfRead(call) : undefined;
        if (identifiers === undefined) return client.request(call);
        const record = (state: string) =>
          this.reads.push({
            service: client.service,
            operation: call.operation,
            path: call.path,
            query: queryString(call.query),
            headers: call.headers ?? {},
            state,
            identifiers,
          });
        try {
          const response = await client.request(call);
          record(answerState({ body: response.body }));
          return response;
        } catch (error) {
          // An upstream that answered 404 or 401 has a state a poll can compare; a timeout has none.
          if (error instanceof UpstreamError && error.status !== undefined && error.status < 500)
            record(answerState({ status: error.status }));
          throw error;
        }
      },
    };
  }
}
