/**
 * What a person who opens the gateway in a browser, or points a tool at it, first meets:
 * - `/` says what this is and where the GraphQL endpoint is (yoga's own landing page names its
 *   version and advises a code change; it is turned off, so other unknown paths get a bare 404);
 * - a browser's visit to the endpoint while GraphiQL is off says so and how to send a query,
 *   instead of a CSRF refusal (or an empty 406) that says nothing of the kind;
 * - a refusal is sent as JSON even when the Accept header names no JSON type (a browser's
 *   `text/html`): an empty 406 tells the caller nothing, and RFC 9110 lets a server answer
 *   with a type the client did not list.
 */
import { processRegularResult, type Plugin } from 'graphql-yoga';
import { codedError } from '../errors.js';

/** What the entry pages say. */
export type EntryPagesOptions = {
  /** the GraphQL endpoint's path */
  endpoint: string;
  /** whether GraphiQL is served at the endpoint */
  graphiql: boolean;
};

/** The curl command that sends a first query to `endpoint`, for messages. */
function curlExample(endpoint: string): string {
  return `curl -X POST ${endpoint} -H 'content-type: application/json' ` + `-d '{"query":"{ __typename }"}'`;
}

/** The page at `/`: HTML for a browser, JSON for anything else. */
function rootPage(request: Request, options: EntryPagesOptions, Response: typeof globalThis.Response): Response {
  const what = 'This is a GraphQL gateway over the pet store and plant REST APIs.';
  const where = options.graphiql
    ? `Open ${options.endpoint} in a browser for GraphiQL, or send GraphQL requests there.`
    : `Send GraphQL requests to ${options.endpoint} (POST, application/json).`;
  if ((request.headers.get('accept') ?? '').includes('text/html')) {
    const link = `<a href="${options.endpoint}">${options.endpoint}</a>`;
    const body =
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>GraphQL gateway</title></head>` +
      `<body><p>${what}</p><p>${where.replace(options.endpoint, link)}</p>` +
      `<pre>${curlExample(options.endpoint)}</pre></body></html>`;
    return new Response(body, { status: 200, headers: { 'content-type': 'text/html; charset=utf-8' } });
  }
  const body = JSON.stringify({ message: `${what} ${where}`, graphql: options.endpoint });
  return new Response(body, { status: 200, headers: { 'content-type': 'application/json; charset=utf-8' } });
}

/** A browser's page load of the endpoint: a GET that asks for HTML and carries no GraphQL request. */
function isPageLoad(request: Request, url: URL, endpoint: string): boolean {
  return (
    request.method === 'GET' &&
    url.pathname === endpoint &&
    !url.searchParams.has('query') &&
    !url.searchParams.has('extensions') &&
    (request.headers.get('accept') ?? '').includes('text/html')
  );
}

/** The yoga plugin: to come before the CSRF check, which would refuse a browser's page load first. */
export function useEntryPages(options: EntryPagesOptions): Plugin {
  return {
    onRequest(payload) {
      const { request, url, fetchAPI } = payload;
      if (url.pathname === '/' && (request.method === 'GET' || request.method === 'HEAD'))
        payload.endResponse(rootPage(request, options, fetchAPI.Response));
    },
    onRequestParse({ request, url }) {
      if (options.graphiql || !isPageLoad(request, url, options.endpoint)) return;
      throw codedError(
        'GRAPHIQL_DISABLED',
        `GraphiQL is off on this gateway (GRAPHIQL=false). Send GraphQL requests to ${options.endpoint} ` +
          `as POST application/json, e.g. ${curlExample(options.endpoint)}`,
        { status: 404 },
      );
    },
    onResultProcess(payload) {
      const { resultProcessor, result } = payload;
      // Streams and batches keep yoga's answer; a single result with errors is sent as JSON.
      if (resultProcessor !== undefined || Array.isArray(result) || Symbol.asyncIterator in result) return;
      if (result.errors?.length) payload.setResultProcessor(processRegularResult, 'application/json');
    },
  };
}
