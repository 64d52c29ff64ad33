/**
 * The graph serves queries and mutations only. A subscription is refused before anything runs, as
 * a request error with a code (GRAPHQL_VALIDATION_FAILED): 400 under
 * `application/graphql-response+json`, 200 under `application/json` alone, as every validation
 * error; over graphql-ws, the same error. The upstream is never called.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failureCodes, openWs, serveLiveGateway, type LiveGateway } from './helpers/live.js';
import { startStack, type Stack } from './helpers/stack.js';

const SUBSCRIPTION = 'subscription { __typename }';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => stack?.close());

async function post(accept: string, body: Record<string, unknown>) {
  const response = await fetch(stack.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept, authorization: 'Bearer demo' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as unknown };
}

describe('an operation type the graph does not serve', () => {
  it.each([
    ['application/graphql-response+json', 400],
    ['application/json', 200],
  ])(
    'a subscription under %s is refused with %i and GRAPHQL_VALIDATION_FAILED, naming what to send',
    async (accept, status) => {
      stack.upstream();

      const answer = await post(accept, { query: SUBSCRIPTION });

      expect(answer).toEqual({
        status,
        body: {
          errors: [
            {
              message:
                'The graph serves no subscription operations: send a query or a mutation (for updates, a query with @live where LIVE_QUERIES is on).',
              locations: [{ line: 1, column: 1 }],
              extensions: { code: 'GRAPHQL_VALIDATION_FAILED' },
            },
          ],
        },
      });
      expect(stack.upstream()).toEqual([]);
    },
  );

  it('refuses a document that holds a subscription beside the query it names', async () => {
    const answer = await post('application/graphql-response+json', {
      query: 'query Q { pet(id: 1) { id } } subscription S { __typename }',
      operationName: 'Q',
    });

    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ errors: [{ extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }] });
  });

  it('still answers queries and mutations', async () => {
    const query = await post('application/graphql-response+json', { query: 'query { __typename }' });
    const mutation = await post('application/graphql-response+json', { query: 'mutation { __typename }' });

    expect(query).toEqual({ status: 200, body: { data: { __typename: 'Query' } } });
    expect(mutation).toEqual({ status: 200, body: { data: { __typename: 'Mutation' } } });
  });
});

describe('over graphql-ws', () => {
  let live: LiveGateway;
  beforeAll(async () => {
    live = await serveLiveGateway(stack.emulator);
  });
  afterAll(async () => live?.stop());

  it('a subscription gets the same coded refusal', async () => {
    const ws = openWs(live.url, SUBSCRIPTION, { authorization: 'Bearer demo' });

    await expect(ws.results.next()).rejects.toThrow('the live query ended');
    await ws.close();

    expect(ws.results.received).toEqual([]);
    expect(failureCodes(ws.results.failure)).toEqual(['GRAPHQL_VALIDATION_FAILED']);
  });
});
