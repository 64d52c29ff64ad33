/**
 * A real Apollo Client over its persisted queries link (SHA-256 from node:crypto), recording
 * every HTTP exchange it makes: what a browser app using APQ sends.
 */
import { createHash } from 'node:crypto';
import { ApolloClient, HttpLink, InMemoryCache } from '@apollo/client';
import { PersistedQueryLink } from '@apollo/client/link/persisted-queries';
import { ALL_CREDENTIALS } from './stack.js';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** What the client sent: method, whether the document text went along, and the answer's status. */
type Sent = { method: string; withDocument: boolean; hashed: boolean; status: number };

/** An Apollo Client over the persisted queries link, recording each HTTP exchange it makes. */
export function apolloClient(url: string, options: { useGETForHashedQueries?: boolean } = {}) {
  const sent: Sent[] = [];
  const recordingFetch: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    const request = new Request(input, init);
    const params =
      request.method === 'GET'
        ? Object.fromEntries(new URL(request.url).searchParams)
        : (JSON.parse(await request.text()) as Record<string, unknown>);
    const extensions = typeof params['extensions'] === 'string' ? params['extensions'] : JSON.stringify(params);
    sent.push({
      method: request.method,
      withDocument: typeof params['query'] === 'string',
      hashed: extensions.includes('sha256Hash'),
      status: response.status,
    });
    return response;
  };
  const http = new HttpLink({ uri: url, headers: ALL_CREDENTIALS, fetch: recordingFetch });
  const client = new ApolloClient({
    link: new PersistedQueryLink({ sha256, ...options }).concat(http),
    cache: new InMemoryCache(),
  });
  return { client, sent };
}
