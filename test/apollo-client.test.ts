/**
 * A real Apollo Client with its persisted queries link against the gateway's defaults: the
 * first query is sent as a hash, refused as not found, sent again with its document, and later
 * queries go by hash alone, by POST and (useGETForHashedQueries) by GET.
 */
import { createHash } from 'node:crypto';
import { ApolloClient, HttpLink, InMemoryCache, gql } from '@apollo/client';
import { PersistedQueryLink } from '@apollo/client/link/persisted-queries';
import { describe, expect, it } from 'vitest';
import { ALL_CREDENTIALS, expectedGet, summary, useStack } from './helpers/stack.js';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** What the client sent: method, whether the document text went along, and the answer's status. */
type Sent = { method: string; withDocument: boolean; hashed: boolean; status: number };

/** An Apollo Client over the persisted queries link, recording each HTTP exchange it makes. */
function apolloClient(url: string, options: { useGETForHashedQueries?: boolean } = {}) {
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

const PET = gql`
  query Pet($id: ID!) {
    pet(id: $id) {
      id
      name
    }
  }
`;

describe("Apollo Client's persisted queries link", () => {
  const stack = useStack();

  it('registers a query on its first use, then sends its hash alone', async () => {
    const { client, sent } = apolloClient(stack.url);

    const first = await client.query({ query: PET, variables: { id: '1' }, fetchPolicy: 'network-only' });
    const second = await client.query({ query: PET, variables: { id: '2' }, fetchPolicy: 'network-only' });

    expect(first.data).toEqual({ pet: { __typename: 'Pet', id: '1', name: 'Cat 1' } });
    expect(second.data).toEqual({ pet: { __typename: 'Pet', id: '2', name: 'Cat 2' } });
    expect(sent).toEqual([
      { method: 'POST', withDocument: false, hashed: true, status: 404 },
      { method: 'POST', withDocument: true, hashed: true, status: 200 },
      { method: 'POST', withDocument: false, hashed: true, status: 200 },
    ]);
    expect(stack.upstream().map(summary)).toEqual([
      expectedGet('/api/v3/pet/1', 'api_key'),
      expectedGet('/api/v3/pet/2', 'api_key'),
    ]);
  });

  it('sends hashed queries by GET with useGETForHashedQueries, registering by POST', async () => {
    const { client, sent } = apolloClient(stack.url, { useGETForHashedQueries: true });
    const STOCK = gql`
      query Stock {
        inventory {
          entries {
            status
          }
        }
      }
    `;

    const first = await client.query({ query: STOCK, fetchPolicy: 'network-only' });
    const second = await client.query({ query: STOCK, fetchPolicy: 'network-only' });

    expect(first.data).toEqual(second.data);
    expect(first.error).toBeUndefined();
    expect(sent.map(({ method, withDocument, status }) => [method, withDocument, status])).toEqual([
      ['GET', false, 404],
      ['POST', true, 200],
      ['GET', false, 200],
    ]);
  });
});
