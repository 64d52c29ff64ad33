/**
 * A GraphQL result as an HTTP answer, by the rules yoga's regular result processor follows, so
 * that an answer from the lane (src/http/lane.ts) and one from yoga are the same (test/http-differential.test.ts
 * proves it on a corpus of requests): the status and headers that errors ask for in `extensions.http`, which is then
 * left out of the body along with `extensions.unexpected`.
 */
import { GraphQLError, type ExecutionResult } from 'graphql';

/** The media types a GraphQL answer is sent as. */
export type ResultMediaType = 'application/json' | 'application/graphql-response+json';

type HttpExtension = { status?: number; headers?: Record<string, string>; spec?: boolean };

function httpExtension(extensions: Readonly<Record<string, unknown>> | undefined): HttpExtension | undefined {
  const http = extensions?.['http'];
  return typeof http === 'object' && http !== null ? http : undefined;
}

/** An error raised as a GraphQL error all the way down (not a masked or wrapped failure). */
function isOriginal(error: unknown): boolean {
  if (!(error instanceof GraphQLError)) return false;
  return error.originalError == null || isOriginal(error.originalError);
}

/**
 * The status and extra headers of a result. An error's `extensions.http.status` sets the status
 * (the highest wins), except that errors the GraphQL-over-HTTP spec answers with 200 under
 * `application/json` (`http.spec`) do not; an unexpected error with no data is a 500.
 */
export function resultStatus(
  result: ExecutionResult,
  mediaType: ResultMediaType,
): { status: number; headers: Record<string, string> } {
  const headers: Record<string, string> = {};
  let status: number | undefined;
  const own = httpExtension(result.extensions);
  if (own?.headers) for (const [name, value] of Object.entries(own.headers)) headers[name.toLowerCase()] = value;
  if (own?.status) status = own.status;
  if (!result.errors || result.errors.length === 0) return { status: status ?? 200, headers };
  let unexpected = false;
  for (const error of result.errors) {
    const http = httpExtension(error.extensions);
    if (http === undefined) {
      if (!isOriginal(error) || error.extensions['unexpected']) unexpected = true;
      continue;
    }
    if (http.headers) for (const [name, value] of Object.entries(http.headers)) headers[name.toLowerCase()] = value;
    if (mediaType === 'application/json' && http.spec) continue;
    if (http.status && (status === undefined || http.status > status)) status = http.status;
  }
  return { status: status ?? (unexpected && !('data' in result) ? 500 : 200), headers };
}

/** An error as the body shows it: without the internal `http` and `unexpected` extensions. */
function errorJson(error: GraphQLError) {
  const { http: _http, unexpected: _unexpected, ...extensions } = error.extensions;
  return {
    message: error.message,
    ...(error.locations ? { locations: error.locations } : {}),
    ...(error.path ? { path: error.path } : {}),
    ...(Object.keys(extensions).length > 0 ? { extensions } : {}),
  };
}

/** The JSON body of a result. */
export function resultBody(result: ExecutionResult): string {
  if (!result.errors?.length && !httpExtension(result.extensions)) return JSON.stringify(result);
  const { http: _http, ...extensions } = result.extensions ?? {};
  return JSON.stringify({
    ...result,
    ...(result.errors ? { errors: result.errors.map(errorJson) } : {}),
    extensions: Object.keys(extensions).length > 0 ? extensions : undefined,
  });
}
