/**
 * A real Apollo Client with its persisted queries link against the gateway's defaults: the
 * first query is sent as a hash, refused as not found, sent again with its document, and later
 * queries go by hash alone, by POST and (useGETForHashedQueries) by GET.
 */
import { gql } from '@apollo/client';
import { describe, expect, it } from 'vitest';
import { apolloClient } from './helpers/apollo.js';
import { expectedGet, summary, useStack } from './helpers/stack.js';

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
