/**
 * The app's one way to the graph: a typed document in, its typed data out. The document is sent
 * by its key in the persisted documents manifest, never as text: the gateway runs only the
 * documents of that manifest (its trusted documents). Errors come back as codes the app can
 * explain (errors.ts), whether the gateway refused the whole request or one field failed.
 */
import type { TypedDocumentString } from './gql/graphql';
import type { Credentials } from './credentials';

/** One error of an answer: its code (`extensions.code`) and, when the gateway says, when to retry. */
export type Failure = { code: string; retryAfter?: number };

/** What the gateway answered: the data it could read (null when it refused the request) and why it could not read the rest. */
export type Answer<Data> = { data: Data | null; failures: Failure[] };

type Body<Data> = {
  data?: Data | null;
  errors?: { extensions?: { code?: unknown; retryAfter?: unknown } }[];
};

/** Sends `document` with `variables`, with the credentials the user signed in with. */
export async function request<Data, Variables>(
  document: TypedDocumentString<Data, Variables>,
  variables: Variables,
  credentials: Credentials,
): Promise<Answer<Data>> {
  const hash: unknown = document.__meta__?.['hash'];
  if (typeof hash !== 'string') throw new Error('a document without its key: run npm run codegen');
  let body: Body<Data>;
  try {
    const response = await fetch(GRAPHQL_URL, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/graphql-response+json',
        ...headers(credentials),
      },
      body: JSON.stringify({ variables, extensions: { persistedQuery: { version: 1, sha256Hash: hash } } }),
    });
    body = (await response.json()) as Body<Data>;
  } catch {
    // The gateway is down, unreachable, or did not answer with JSON.
    return { data: null, failures: [{ code: 'NETWORK' }] };
  }
  return { data: body.data ?? null, failures: (body.errors ?? []).map(failure) };
}

/** The credentials as the gateway reads them: `api_key` and a bearer token, each only when given. */
function headers(credentials: Credentials): Record<string, string> {
  const sent: Record<string, string> = {};
  if (credentials.apiKey !== '') sent['api_key'] = credentials.apiKey;
  if (credentials.token !== '') sent['authorization'] = `Bearer ${credentials.token}`;
  return sent;
}

function failure(error: { extensions?: { code?: unknown; retryAfter?: unknown } }): Failure {
  const { code, retryAfter } = error.extensions ?? {};
  return {
    code: typeof code === 'string' ? code : 'UNKNOWN',
    ...(typeof retryAfter === 'number' ? { retryAfter } : {}),
  };
}
