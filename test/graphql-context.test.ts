/**
 * Each operation's GraphQL context is made when yoga's envelop is made for it (useGraphQLContext,
 * an onEnveloped hook, in place of yoga's `context` option): from its own request, once per
 * operation (each operation of a batch its own), before any resolver runs; and not at all when
 * envelop is made without a request.
 */
import { createSchema, createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { useGraphQLContext, type GraphQLContext } from '../src/context.js';
import type { Credentials } from '../src/credentials.js';

/** A yoga whose context holds the caller's credentials and a number per context made. */
function yogaCountingContexts() {
  const made: Credentials[] = [];
  const make = (initial: { request: { headers: { get(name: string): string | null } } }) => {
    const credentials = { apiKey: initial.request.headers.get('api_key') ?? undefined };
    made.push(credentials);
    return { credentials, serial: made.length } as unknown as GraphQLContext;
  };
  const yoga = createYoga({
    schema: createSchema<{ credentials: Credentials; serial: number }>({
      typeDefs: 'type Query { caller: String, serial: Int }',
      resolvers: {
        Query: {
          caller: (_parent, _args, context) => context.credentials.apiKey ?? null,
          serial: (_parent, _args, context) => context.serial,
        },
      },
    }),
    plugins: [useGraphQLContext(make)],
    batching: { limit: 3 },
    logging: false,
  });
  return { yoga, made };
}

describe('useGraphQLContext', () => {
  it("makes an operation's context from its own request, before its resolvers run", async () => {
    const { yoga, made } = yogaCountingContexts();

    const response = await yoga.fetch('http://gateway.test/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', api_key: 'key-a' },
      body: JSON.stringify({ query: '{ caller serial }' }),
    });

    expect(await response.json()).toEqual({ data: { caller: 'key-a', serial: 1 } });
    expect(made).toEqual([{ apiKey: 'key-a' }]);
  });

  it('makes one context for each operation of a batch', async () => {
    const { yoga, made } = yogaCountingContexts();

    const response = await yoga.fetch('http://gateway.test/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', api_key: 'key-b' },
      body: JSON.stringify([{ query: '{ serial }' }, { query: '{ serial }' }]),
    });

    const serials = ((await response.json()) as { data: { serial: number } }[]).map((one) => one.data.serial);
    expect(serials.sort()).toEqual([1, 2]);
    expect(made).toHaveLength(2);
  });

  it('makes none when envelop is made without a request', () => {
    const { yoga, made } = yogaCountingContexts();

    const enveloped = yoga.getEnveloped();

    expect(enveloped.schema).toBeDefined();
    expect(made).toEqual([]);
  });
});
